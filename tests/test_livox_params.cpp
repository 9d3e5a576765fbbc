// A Livox unit's key-value parameters as Livox SDK2 asks and sets them (its
// general_command_handler.cpp, build_request.cpp and parse_lidar_state_info.cpp): 0x0101
// (internal information, the firmware type first) and 0x0100 (the host ends at connection).
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/livox.hpp"

using namespace lidaremu::core;

namespace {

// A 0x0101 request as SDK2 builds it: key count, two reserved bytes, the keys.
std::vector<std::uint8_t> keys_request(const std::vector<std::uint16_t>& keys) {
  std::vector<std::uint8_t> r(4 + 2 * keys.size(), 0);
  store_le<std::uint16_t>(r, 0, static_cast<std::uint16_t>(keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i) store_le<std::uint16_t>(r, 4 + 2 * i, keys[i]);
  return r;
}

struct KeyValue {
  std::uint16_t key;
  std::vector<std::uint8_t> value;
};
// A 0x0100 request: key count, two reserved bytes, {key, length, value} each.
std::vector<std::uint8_t> settings_request(const std::vector<KeyValue>& kvs) {
  std::vector<std::uint8_t> r(4, 0);
  store_le<std::uint16_t>(r, 0, static_cast<std::uint16_t>(kvs.size()));
  for (const auto& kv : kvs) {
    const std::size_t at = r.size();
    r.resize(at + 4 + kv.value.size());
    store_le<std::uint16_t>(r, at, kv.key);
    store_le<std::uint16_t>(r, at + 2, static_cast<std::uint16_t>(kv.value.size()));
    std::copy(kv.value.begin(), kv.value.end(), r.begin() + static_cast<std::ptrdiff_t>(at + 4));
  }
  return r;
}
// HostIpInfoValue: the address in dotted order, host port, lidar port, little-endian.
std::vector<std::uint8_t> host_ends(std::array<std::uint8_t, 4> ip, std::uint16_t host,
                                    std::uint16_t lidar) {
  std::vector<std::uint8_t> v(8);
  std::copy(ip.begin(), ip.end(), v.begin());
  store_le<std::uint16_t>(v, 4, host);
  store_le<std::uint16_t>(v, 6, lidar);
  return v;
}

// The parameters of an answer, by key.
std::map<std::uint16_t, std::vector<std::uint8_t>> parameters(std::span<const std::uint8_t> a,
                                                              std::size_t& count) {
  std::map<std::uint16_t, std::vector<std::uint8_t>> out;
  REQUIRE(a.size() >= 3);
  count = load_le<std::uint16_t>(a, 1);
  std::size_t at = 3;
  for (std::size_t i = 0; i < count; ++i) {
    REQUIRE(at + 4 <= a.size());
    const auto key = load_le<std::uint16_t>(a, at);
    const auto length = load_le<std::uint16_t>(a, at + 2);
    REQUIRE(at + 4 + length <= a.size());
    out[key].assign(a.begin() + static_cast<std::ptrdiff_t>(at + 4),
                    a.begin() + static_cast<std::ptrdiff_t>(at + 4 + length));
    at += 4 + length;
  }
  CHECK(at == a.size());
  return out;
}

const livox::UnitState kUnit{.serial = "47MDL9C0020123",
                             .address = 0x7F00'0007,
                             .points = {0x7F00'0001, 56301, 56300},
                             .imu = {0x7F00'0001, 56401, 56400},
                             .time_ns = 1'795'608'000'000'000'000ULL};

}  // namespace

TEST_CASE("Livox 0x0101: the firmware type SDK2 asks first, then every key of its Mid-360 list",
          "[format][livox][params]") {
  std::array<std::uint8_t, livox::kMaxCommandFrame - livox::kCommandHeaderSize> out{};
  // SDK2's QueryFwType: one key, 0x8010. It wants that key first, one byte long; without it
  // it asks again ten times, then takes the unit for the loader.
  std::size_t count = 0;
  auto size = livox::write_internal_info(keys_request({0x8010}), kUnit, out);
  REQUIRE(size == 3 + 4 + 1);
  CHECK(out[0] == 0);  // ret_code
  auto p = parameters(std::span(out).first(size), count);
  CHECK(count == 1);
  CHECK(load_le<std::uint16_t>(out, 3) == 0x8010);
  CHECK(p[0x8010] == std::vector<std::uint8_t>{1});  // the application firmware
  // The Mid-360's list (GetQueryLidarInternalInfoKeys), with one key the unit has not: every
  // key answered but that one, each with its value's length.
  const std::vector<std::uint16_t> mid360{
      0x0000, 0x0001, 0x0004, 0x0005, 0x0006, 0x0007, 0x0012, 0x0015, 0x0016, 0x0017, 0x0018,
      0x0019, 0x001A, 0x001C, 0x8000, 0x8001, 0x8002, 0x8003, 0x8004, 0x8005, 0x8006, 0x8007,
      0x8008, 0x8009, 0x800A, 0x800B, 0x800C, 0x800E, 0x8010, 0x8011, 0x7777};
  size = livox::write_internal_info(keys_request(mid360), kUnit, out);
  p = parameters(std::span(out).first(size), count);
  CHECK(count == 30);
  CHECK_FALSE(p.contains(0x7777));
  CHECK(p[0x0000] == std::vector<std::uint8_t>{1});  // Cartesian int32 records
  CHECK(p[0x0001] == std::vector<std::uint8_t>{0});  // non-repetitive
  CHECK(p[0x0004] == std::vector<std::uint8_t>{127, 0, 0, 7, 255, 255, 255, 0, 0, 0, 0, 0});
  CHECK(p[0x0006] == host_ends({127, 0, 0, 1}, 56301, 56300));
  CHECK(p[0x0007] == host_ends({127, 0, 0, 1}, 56401, 56400));
  CHECK(p[0x0012].size() == 24);
  CHECK(p[0x0015].size() == 20);
  CHECK(p[0x001A] == std::vector<std::uint8_t>{1});  // normal
  CHECK(std::string(p[0x8000].begin(), p[0x8000].begin() + 14) == "47MDL9C0020123");
  CHECK(p[0x8000].size() == 16);
  CHECK(p[0x8001].size() == 64);
  CHECK(p[0x8005].size() == 6);
  CHECK(p[0x8006] == std::vector<std::uint8_t>{1});
  CHECK(load_le<std::uint64_t>(p[0x8009], 0) == kUnit.time_ns);
  CHECK(p[0x8011].size() == 32);
  // A request whose key count is not its length: return code 1, nothing else.
  auto bad = keys_request({0x8010, 0x8000});
  bad.pop_back();
  size = livox::write_internal_info(bad, kUnit, out);
  CHECK(size == 3);
  CHECK(out[0] == 1);
  CHECK(livox::write_internal_info({}, kUnit, out) == 3);
}

TEST_CASE("Livox 0x0100: SDK2's connection sets the host ends, which move the streams",
          "[format][livox][params]") {
  // build_request.cpp's BuildUpdateMid360LidarCfgRequest: state information, points, IMU.
  const auto request = settings_request({{0x0005, host_ends({192, 168, 1, 50}, 56201, 56200)},
                                         {0x0006, host_ends({192, 168, 1, 50}, 56301, 56300)},
                                         {0x0007, host_ends({192, 168, 1, 50}, 56401, 56400)}});
  std::optional<livox::WorkModeChange> taken;
  const livox::ApplyWorkMode take = [&](const livox::WorkModeChange& c) {
    taken = c;
    return true;
  };
  CHECK(livox::answer_work_mode(request, kUnit, take) == std::array<std::uint8_t, 3>{0, 0, 0});
  REQUIRE(taken);
  REQUIRE(taken->points);
  CHECK(*taken->points == livox::HostPorts{0xC0A8'0132, 56301, 56300});
  REQUIRE(taken->imu);
  CHECK(*taken->imu == livox::HostPorts{0xC0A8'0132, 56401, 56400});
  REQUIRE(taken->state_info);
  CHECK(taken->state_info->host_port == 56201);
  // The sensor refuses (it cannot send there): return code 1, the points' key.
  const livox::ApplyWorkMode refuse = [](const livox::WorkModeChange&) { return false; };
  CHECK(livox::answer_work_mode(request, kUnit, refuse) ==
        std::array<std::uint8_t, 3>{1, 0x06, 0x00});
  // livox_ros_driver2's settings from its config: accepted as the unit is; nothing to apply.
  taken.reset();
  const auto driver = settings_request(
      {{0x0000, {1}}, {0x0001, {0}}, {0x001C, {1}}, {0x0012, std::vector<std::uint8_t>(24, 0)}});
  CHECK(livox::answer_work_mode(driver, kUnit, take) == std::array<std::uint8_t, 3>{0, 0, 0});
  CHECK_FALSE(taken);
  // What the unit cannot do, each refused naming its key, nothing applied.
  const auto refused = [&](const std::vector<KeyValue>& kvs, std::uint16_t key) {
    taken.reset();
    const auto answer = livox::answer_work_mode(settings_request(kvs), kUnit, take);
    CHECK(answer == std::array<std::uint8_t, 3>{1, static_cast<std::uint8_t>(key & 0xFF),
                                                static_cast<std::uint8_t>(key >> 8)});
    CHECK_FALSE(taken);
  };
  refused({{0x0006, host_ends({10, 0, 0, 1}, 56301, 56300)}, {0x0000, {2}}}, 0x0000);  // int16 cm
  refused({{0x0001, {1}}}, 0x0001);                                    // the repetitive pattern
  refused({{0x0004, std::vector<std::uint8_t>(12, 9)}}, 0x0004);       // another address
  refused({{0x8000, std::vector<std::uint8_t>(16, 0)}}, 0x8000);       // read-only
  refused({{0x7777, {1}}}, 0x7777);                                    // unknown
  refused({{0x0006, {127, 0, 0, 1}}}, 0x0006);                         // short value
  refused({{0x0006, host_ends({0, 0, 0, 0}, 56301, 56300)}}, 0x0006);  // nowhere
  refused({{0x0007, host_ends({127, 0, 0, 1}, 0, 56400)}}, 0x0007);    // port 0
  // A key list that overruns its request, or a count it does not hold: error key 0.
  auto overrun = settings_request({{0x0000, {1}}});
  overrun.pop_back();
  CHECK(livox::answer_work_mode(overrun, kUnit, take) == std::array<std::uint8_t, 3>{1, 0, 0});
  auto more = settings_request({{0x0000, {1}}});
  more[0] = 2;
  CHECK(livox::answer_work_mode(more, kUnit, take) == std::array<std::uint8_t, 3>{1, 0, 0});
  auto trailing = settings_request({{0x0000, {1}}});
  trailing.push_back(0);
  CHECK(livox::answer_work_mode(trailing, kUnit, take) == std::array<std::uint8_t, 3>{1, 0, 0});
}
