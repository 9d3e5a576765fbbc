// Livox Mid-360 wire layer against FORMATS-HESAI-ROBOSENSE.md section 3 (the Livox SDK2
// protocol): frames and packets written byte by byte here from the facts, CRCs checked by
// bitwise references written from the CRC catalogue's parameters (not the code under test).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crc_agreement.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/livox.hpp"

using namespace lidaremu::core;

namespace {

// CRC-16/CCITT-FALSE, bit by bit: polynomial 0x1021, initial 0xFFFF, MSB first, no final xor.
std::uint16_t reference_crc16(std::span<const std::uint8_t> bytes) {
  std::uint16_t crc = 0xFFFF;
  for (const std::uint8_t byte : bytes) {
    crc = static_cast<std::uint16_t>(crc ^ (byte << 8));
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<std::uint16_t>(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
  }
  return crc;
}

// CRC-32/ISO-HDLC, bit by bit: reflected polynomial 0xEDB88320, initial and final xor all ones.
std::uint32_t reference_crc32(std::span<const std::uint8_t> bytes) {
  std::uint32_t crc = 0xFFFF'FFFF;
  for (const std::uint8_t byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = crc & 1 ? (crc >> 1) ^ 0xEDB8'8320 : crc >> 1;
  }
  return ~crc;
}

std::vector<std::uint8_t> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

// A host's discovery request as the facts lay it out: sof, version, length, sequence, command
// 0x0000, request, from the host, reserved, the header CRC, no data (CRC-32 field 0).
std::vector<std::uint8_t> discovery_request(std::uint32_t sequence) {
  std::vector<std::uint8_t> frame(24, 0);
  frame[0] = 0xAA;
  frame[1] = 0;
  store_le<std::uint16_t>(frame, 2, 24);
  store_le<std::uint32_t>(frame, 4, sequence);
  store_le<std::uint16_t>(frame, 18, reference_crc16(std::span(frame).first(18)));
  return frame;
}

}  // namespace

TEST_CASE("Livox CRCs: the catalogue's check values and the bitwise references",
          "[format][livox]") {
  // The CRC catalogue's check value of each: the CRC of the nine ASCII digits "123456789".
  CHECK(livox::crc16_ccitt_false(bytes_of("123456789")) == 0x29B1);
  CHECK(livox::crc32(bytes_of("123456789")) == 0xCBF4'3926);
  CHECK(reference_crc16(bytes_of("123456789")) == 0x29B1);
  CHECK(reference_crc32(bytes_of("123456789")) == 0xCBF4'3926);
  std::vector<std::uint8_t> data(1500);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 37 + 11);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{18}, data.size()}) {
    const auto part = std::span<const std::uint8_t>(data).first(n);
    CHECK(livox::crc16_ccitt_false(part) == reference_crc16(part));
    CHECK(livox::crc32(part) == reference_crc32(part));
  }
  // Every length and alignment (crc_agreement.hpp says why), and a whole point packet's data.
  CHECK(lidaremu::test::crc_disagreements(data, livox::crc32, reference_crc32) == 0);
  const auto point_data = std::span<const std::uint8_t>(data).subspan(3, 1344);
  CHECK(livox::crc32(point_data) == reference_crc32(point_data));
}

TEST_CASE("Livox discovery: a host's search request answered as SDK2 reads the answer",
          "[format][livox]") {
  const auto request = discovery_request(0x1234);
  livox::CommandView view;
  REQUIRE(livox::read_command(request, view) == livox::CommandError::kNone);
  CHECK(view.header.command_id == 0x0000);
  CHECK(view.header.type == livox::CommandType::kRequest);
  CHECK(view.header.sender == livox::SenderType::kHost);
  CHECK(view.header.sequence == 0x1234);
  CHECK(view.data.empty());

  std::array<std::uint8_t, 64> out{};
  const livox::UnitState unit{.serial = "47MDL9C0020123", .address = 0x7F00'0002};
  const std::size_t size = livox::write_discovery_answer(out, 0x1234, unit);
  REQUIRE(size == 48);  // the header and DetectionData's 24 bytes
  const auto answer = std::span<const std::uint8_t>(out).first(size);
  CHECK(answer[0] == 0xAA);
  CHECK(answer[1] == 0);
  CHECK(load_le<std::uint16_t>(answer, 2) == 48);
  CHECK(load_le<std::uint32_t>(answer, 4) == 0x1234);  // the request's
  CHECK(load_le<std::uint16_t>(answer, 8) == 0x0000);
  CHECK(answer[10] == 1);  // acknowledgement
  CHECK(answer[11] == 1);  // from the lidar
  for (std::size_t i = 12; i < 18; ++i) CHECK(answer[i] == 0);
  CHECK(load_le<std::uint16_t>(answer, 18) == reference_crc16(answer.first(18)));
  CHECK(load_le<std::uint32_t>(answer, 20) == reference_crc32(answer.subspan(24)));
  const auto data = answer.subspan(24);
  CHECK(data[0] == 0);  // ret_code: success
  CHECK(data[1] == 9);  // dev_type: Mid-360
  CHECK(std::string(data.begin() + 2, data.begin() + 16) == "47MDL9C0020123");
  CHECK(data[16] == 0);  // the serial zero-padded to 16
  CHECK(data[17] == 0);
  CHECK(std::vector<int>(data.begin() + 18, data.begin() + 22) == std::vector<int>{127, 0, 0, 2});
  CHECK(load_le<std::uint16_t>(data, 22) == 56100);
  // And the answer reads back whole.
  REQUIRE(livox::read_command(answer, view) == livox::CommandError::kNone);
  CHECK(view.header.type == livox::CommandType::kAck);
  CHECK(view.data.size() == 24);
  CHECK(livox::write_discovery_answer(std::span(out).first(47), 1, unit) == 0);
}

TEST_CASE("Livox command frames: every frame SDK2 drops is refused, with its reason",
          "[format][livox][hostile]") {
  std::array<std::uint8_t, 64> out{};
  const std::array<std::uint8_t, 5> payload{1, 2, 3, 4, 5};
  const std::size_t size =
      livox::write_command(out, {.sequence = 0x0001'0007, .command_id = 0x0100}, payload);
  REQUIRE(size == 29);
  const auto frame = std::vector<std::uint8_t>(out.begin(), out.begin() + 29);
  CHECK(load_le<std::uint32_t>(frame, 4) == 7);  // the SDK keeps 16 bits of the sequence
  CHECK(load_le<std::uint32_t>(frame, 20) == reference_crc32(payload));
  livox::CommandView view;
  REQUIRE(livox::read_command(frame, view) == livox::CommandError::kNone);
  CHECK(std::vector<int>(view.data.begin(), view.data.end()) == std::vector<int>{1, 2, 3, 4, 5});
  // A datagram longer than the frame's length: the frame is the length's bytes.
  auto padded = frame;
  padded.push_back(0xEE);
  REQUIRE(livox::read_command(padded, view) == livox::CommandError::kNone);
  CHECK(view.data.size() == 5);

  const auto refused = [&](auto mutate) {
    auto bad = frame;
    mutate(bad);
    return livox::read_command(bad, view);
  };
  using E = livox::CommandError;
  CHECK(refused([](auto& f) { f.resize(23); }) == E::kTooShort);
  CHECK(refused([](auto& f) { f.resize(28); }) == E::kBadLength);
  CHECK(refused([](auto& f) { f[0] = 0xAB; }) == E::kBadSof);
  CHECK(refused([](auto& f) { f[1] = 1; }) == E::kBadVersion);
  CHECK(refused([](auto& f) { store_le<std::uint16_t>(f, 2, 23); }) == E::kBadLength);
  CHECK(refused([](auto& f) { store_le<std::uint16_t>(f, 2, 30); }) == E::kBadLength);
  CHECK(refused([](auto& f) { f[9] ^= 0x01; }) == E::kBadHeaderCrc);
  CHECK(refused([](auto& f) { f[18] ^= 0x80; }) == E::kBadHeaderCrc);
  CHECK(refused([](auto& f) { f[26] ^= 0x10; }) == E::kBadDataCrc);
  CHECK(refused([](auto& f) { f[22] ^= 0x01; }) == E::kBadDataCrc);
  // Without data the CRC-32 field is 0, as the SDK writes it.
  const std::size_t empty = livox::write_command(out, {}, {});
  REQUIRE(empty == 24);
  CHECK(load_le<std::uint32_t>(out, 20) == 0);
  // Nothing past the SDK's 1400-byte command buffer, nothing past `out`.
  std::vector<std::uint8_t> big(2000), too_much(1377);
  CHECK(livox::write_command(big, {}, too_much) == 0);
  CHECK(livox::write_command(big, {}, std::span(too_much).first(1376)) == 1400);
  CHECK(livox::write_command(std::span(big).first(28), {}, payload) == 0);
}

TEST_CASE("Livox point packets: 96 points in 1380 bytes, read as livox_ros_driver2 reads them",
          "[format][livox]") {
  std::vector<livox::PointRecord> points(96);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto k = static_cast<std::int32_t>(i);
    points[i] = {.x_mm = 1000 + k,
                 .y_mm = -2000 - 7 * k,
                 .z_mm = 300 * k - 5000,
                 .reflectivity = static_cast<std::uint8_t>(2 * i),
                 .tag = 0};
  }
  const livox::PacketStamp stamp{.timestamp_ns = 1'795'608'000'123'456'789,
                                 .time_interval_100ns = 4800,  // 480 us: 96 points, 5 us apart
                                 .udp_count = 65535,
                                 .frame_count = 7,
                                 .time_type = livox::TimeType::kPtp};
  std::vector<std::uint8_t> packet(1500);
  const std::size_t size = livox::write_point_packet(packet, stamp, points);
  REQUIRE(size == 1380);
  packet.resize(size);
  // The header as the facts lay it out.
  CHECK(packet[0] == 0);
  CHECK(load_le<std::uint16_t>(packet, 1) == 1380);
  CHECK(load_le<std::uint16_t>(packet, 3) == 4800);
  CHECK(load_le<std::uint16_t>(packet, 5) == 96);
  CHECK(load_le<std::uint16_t>(packet, 7) == 65535);
  CHECK(packet[9] == 7);
  CHECK(packet[10] == 1);  // data type 1: x y z int32 mm, reflectivity, tag
  CHECK(packet[11] == 1);  // gPTP / PTP: drivers keep the packet's time
  for (std::size_t i = 12; i < 24; ++i) CHECK(packet[i] == 0);
  CHECK(load_le<std::uint32_t>(packet, 24) == reference_crc32(std::span(packet).subspan(28)));
  CHECK(load_le<std::uint64_t>(packet, 28) == 1'795'608'000'123'456'789);
  // Point 5, at 36 + 5 x 14.
  CHECK(load_le<std::int32_t>(packet, 106) == 1005);
  CHECK(load_le<std::int32_t>(packet, 110) == -2035);
  CHECK(load_le<std::int32_t>(packet, 114) == -3500);
  CHECK(packet[118] == 10);
  CHECK(packet[119] == 0);

  std::vector<livox::Point> decoded;
  livox::PacketInfo info;
  REQUIRE(livox::decode_points(packet, decoded, &info) == livox::DecodeError::kNone);
  CHECK(info.crc_valid);
  CHECK(info.udp_count == 65535);
  REQUIRE(decoded.size() == 96);
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    INFO(i);
    CHECK(decoded[i].x == Approx(points[i].x_mm * 1e-3).margin(1e-6));
    CHECK(decoded[i].y == Approx(points[i].y_mm * 1e-3).margin(1e-6));
    CHECK(decoded[i].z == Approx(points[i].z_mm * 1e-3).margin(1e-6));
    CHECK(decoded[i].reflectivity == points[i].reflectivity);
    // 4800 x 100 / 96 = 5000 ns apart.
    CHECK(decoded[i].time_ns == 1'795'608'000'123'456'789 + 5000 * i);
  }
  // A shorter last packet carries what is left.
  std::vector<std::uint8_t> room(2000);
  CHECK(livox::write_point_packet(room, stamp, std::span(points).first(3)) == 36 + 3 * 14);
  std::vector<livox::PointRecord> too_many(97);
  CHECK(livox::write_point_packet(room, stamp, too_many) == 0);
  CHECK(livox::write_point_packet(std::span(room).first(1379), stamp, points) == 0);
}

TEST_CASE("Livox IMU packets: one record in 60 bytes", "[format][livox]") {
  const livox::ImuRecord imu{.gyro_rad_s = {0.01F, -0.02F, 0.5F},
                             .acceleration_g = {0.0F, 0.0F, 1.0F}};
  std::array<std::uint8_t, 80> out{};
  const std::size_t size = livox::write_imu_packet(out, {.timestamp_ns = 42}, imu);
  REQUIRE(size == 60);
  const auto packet = std::span<const std::uint8_t>(out).first(size);
  CHECK(load_le<std::uint16_t>(packet, 1) == 60);
  CHECK(load_le<std::uint16_t>(packet, 5) == 1);
  CHECK(packet[10] == 0);                          // data type 0: IMU
  CHECK(load_le<float>(packet, 36 + 8) == 0.5F);   // gyro z
  CHECK(load_le<float>(packet, 36 + 20) == 1.0F);  // acceleration z, g
  livox::ImuSample sample;
  REQUIRE(livox::decode_imu(packet, sample) == livox::DecodeError::kNone);
  CHECK(sample.record.gyro_rad_s == imu.gyro_rad_s);
  CHECK(sample.record.acceleration_g == imu.acceleration_g);
  CHECK(sample.time_ns == 42);
  std::vector<livox::Point> points;
  CHECK(livox::decode_points(packet, points) == livox::DecodeError::kNotPoints);
  CHECK(points.empty());
}

TEST_CASE("Livox spec decoder: malformed packets are refused with their reason",
          "[format][livox][hostile]") {
  std::vector<livox::PointRecord> points(96);
  std::vector<std::uint8_t> good(1380);
  REQUIRE(livox::write_point_packet(good, {}, points) == 1380);
  std::vector<livox::Point> decoded;
  livox::ImuSample imu;
  const auto decode = [&](auto mutate) {
    auto bad = good;
    mutate(bad);
    decoded.clear();
    return livox::decode_points(bad, decoded);
  };
  using E = livox::DecodeError;
  CHECK(decode([](auto& p) { p.resize(35); }) == E::kTooShort);
  CHECK(decode([](auto& p) { p.resize(1379); }) == E::kLengthMismatch);
  CHECK(decode([](auto& p) { p[0] = 1; }) == E::kBadVersion);
  CHECK(decode([](auto& p) { store_le<std::uint16_t>(p, 5, 95); }) == E::kSizeMismatch);
  CHECK(decode([](auto& p) { store_le<std::uint16_t>(p, 5, 65535); }) == E::kSizeMismatch);
  CHECK(decode([](auto& p) { p[10] = 4; }) == E::kUnknownDataType);
  CHECK(decode([](auto& p) { p[10] = 3; }) == E::kSizeMismatch);  // 96 x 10 B is not 1344
  CHECK(decoded.empty());
  CHECK(livox::decode_imu(good, imu) == E::kNotImu);
  // A wrong CRC decodes (no driver checks it) but says so.
  livox::PacketInfo info;
  auto bad_crc = good;
  bad_crc[24] ^= 1;
  REQUIRE(livox::decode_points(bad_crc, decoded, &info) == E::kNone);
  CHECK_FALSE(info.crc_valid);
}

TEST_CASE("Livox command port: what the unit answers, and what it leaves unanswered",
          "[format][livox][hostile]") {
  const livox::UnitState unit{.serial = "47MDL9C0020123", .address = 0x7F00'0002};
  std::array<std::uint8_t, livox::kMaxCommandFrame> out{};
  livox::CommandView view;
  // Discovery, as a host broadcasts it.
  auto answer = livox::answer_command(discovery_request(9), unit, out);
  REQUIRE(answer.outcome == livox::CommandOutcome::kAnswered);
  REQUIRE(livox::read_command(std::span(out).first(answer.size), view) ==
          livox::CommandError::kNone);
  CHECK(view.header.type == livox::CommandType::kAck);
  CHECK(view.header.sequence == 9);
  CHECK(view.data.size() == 24);
  CHECK(view.data[1] == 9);
  // A key-value configuration (0x0100, two keys): accepted, return code 0, no error key.
  std::array<std::uint8_t, 64> request{};
  const std::array<std::uint8_t, 14> keys{2, 0, 0, 0, 0x00, 0x00, 1, 0, 1, 0x1A, 0x00, 1, 0, 1};
  const std::size_t n = livox::write_command(request, {.sequence = 77, .command_id = 0x0100}, keys);
  answer = livox::answer_command(std::span(request).first(n), unit, out);
  REQUIRE(answer.outcome == livox::CommandOutcome::kAnswered);
  REQUIRE(answer.size == 27);
  REQUIRE(livox::read_command(std::span(out).first(answer.size), view) ==
          livox::CommandError::kNone);
  CHECK(view.header.command_id == 0x0100);
  CHECK(view.header.sequence == 77);
  CHECK(view.header.sender == livox::SenderType::kLidar);
  CHECK(std::vector<int>(view.data.begin(), view.data.end()) == std::vector<int>{0, 0, 0});
  // Internal information asked with no key list: answered, return code 1 (test_livox_params).
  const std::size_t info =
      livox::write_command(request, {.sequence = 78, .command_id = 0x0101}, {});
  answer = livox::answer_command(std::span(request).first(info), unit, out);
  CHECK(answer.outcome == livox::CommandOutcome::kAnswered);
  // Unanswered: a bad CRC, an acknowledgement, a lidar's frame, an unknown command.
  auto corrupt = discovery_request(9);
  corrupt[19] ^= 0x40;
  CHECK(livox::answer_command(corrupt, unit, out).outcome == livox::CommandOutcome::kMalformed);
  const std::size_t ack =
      livox::write_command(request, {.command_id = 0x0100, .type = livox::CommandType::kAck}, {});
  CHECK(livox::answer_command(std::span(request).first(ack), unit, out).outcome ==
        livox::CommandOutcome::kNotARequest);
  const std::size_t from_lidar = livox::write_command(
      request, {.command_id = 0x0000, .sender = livox::SenderType::kLidar}, {});
  CHECK(livox::answer_command(std::span(request).first(from_lidar), unit, out).outcome ==
        livox::CommandOutcome::kNotARequest);
  const std::size_t reboot = livox::write_command(request, {.command_id = 0x0200}, {});
  const auto unknown = livox::answer_command(std::span(request).first(reboot), unit, out);
  CHECK(unknown.outcome == livox::CommandOutcome::kUnknownCommand);
  CHECK(unknown.size == 0);
  // Too little room for the answer: none.
  CHECK(livox::answer_command(discovery_request(1), unit, std::span(out).first(40)).size == 0);
}
