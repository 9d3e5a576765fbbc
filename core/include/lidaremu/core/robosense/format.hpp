#pragma once
// RoboSense mechanical heads (FORMATS-HESAI-ROBOSENSE.md section 2): the MSOP point packets (UDP
// 6699) and the DIFOP device-information packets (UDP 7788) as declarative tables, one row per
// model, read by both the encoder and the spec decoder. Every multi-byte field is big-endian.
// Offsets are from the start of the UDP payload; rs_driver v1.5 (decoder_RSHELIOS.hpp,
// decoder_RSBP.hpp, decoder.hpp) reads the same bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lidaremu::core::robosense {

inline constexpr std::size_t kPacketSize = 1248;  // MSOP and DIFOP alike; rs_driver checks it
inline constexpr int kBlocks = 12;
inline constexpr int kChannels = 32;
inline constexpr std::size_t kHeaderSize = 42;
inline constexpr std::size_t kBlockSize = 100;  // flag, azimuth, 32 x {distance u16, intensity u8}
inline constexpr std::size_t kRecordSize = 3;
inline constexpr std::size_t kRecordsAt = 4;  // within a block
inline constexpr std::uint16_t kBlockFlag = 0xFFEE;
inline constexpr std::size_t kIndexAt = 1242;  // u32 after the blocks (written 0)
inline constexpr std::size_t kTailAt = 1246;
inline constexpr std::uint16_t kMsopTail = 0x00FF;   // FORMATS: "00 FF" [?], read by no driver
inline constexpr std::uint16_t kDifopTail = 0x0FF0;  // FORMATS: "0F F0" [?], read by no driver

[[nodiscard]] constexpr std::size_t block_at(int block) {
  return kHeaderSize + static_cast<std::size_t>(block) * kBlockSize;
}
[[nodiscard]] constexpr std::size_t record_at(int block, int channel) {
  return block_at(block) + kRecordsAt + static_cast<std::size_t>(channel) * kRecordSize;
}
static_assert(block_at(kBlocks) == kIndexAt && kTailAt + 2 == kPacketSize);

// How a packet tells its time: 6 bytes of UNIX seconds and 4 of microseconds (Helios, Bpearl
// v4), or year-2000, month, day, hour, minute, second, then ms u16 and us u16 (RS16/32, Bpearl
// v3: rs_driver's RSTimestampYMD).
enum class TimeForm : std::uint8_t { kUtcMicros, kYmd };
inline constexpr std::size_t kTimeBytes = 10;

// A header byte a model always sends with one value (its lidar type, its range resolution).
struct FixedByte {
  std::uint16_t offset = 0;
  std::uint8_t value = 0;
};

struct MsopFormat {
  std::array<std::uint8_t, 8> id{};
  std::uint8_t id_bytes = 0;  // rs_driver compares this many bytes of the id
  std::uint16_t time_at = 20;
  TimeForm time_form = TimeForm::kUtcMicros;
  std::uint16_t temperature_at = 38;  // rs_driver's parseTempInLe: 0.0625 degC steps
  std::array<FixedByte, 3> fixed{};   // unused rows have offset 0
};

// How a DIFOP carries each channel's vertical and horizontal angle.
enum class AngleForm : std::uint8_t {
  // 32 x {sign u8 (0 +, 1 -), u16 in 0.01 degree} at vertical_at, the same at horizontal_at
  // (Helios, Bpearl).
  kSignedCdeg,
  // The same in 0.001 degree (RS-LiDAR-32; rs_driver rounds to 0.01 degree).
  kSignedMdeg,
  // RS-LiDAR-16: 16 x u24 unsigned pitch in 0.0001 degree at vertical_at, channels 0-7 pointing
  // down (rs_driver negates them), no horizontal offsets (rs_driver truncates to 0.01 degree).
  kPitch16,
};

// The DIFOP packet: the fields drivers read (rs_driver's RSHELIOSDifopPkt / RSBPDifopPkt /
// RS16DifopPkt / RS32DifopPkt, nebula's info packets).
struct DifopFormat {
  std::uint16_t rpm_at = 8;
  std::uint16_t lidar_ip_at = 10;
  std::uint16_t dest_ip_at = 14;
  std::uint16_t mac_at = 18;
  std::uint16_t msop_port_at = 24;
  std::uint16_t difop_port_at = 28;  // Helios (RSEthNetV2); V1 units: 28 too (port3)
  std::uint16_t fov_start_at = 32;   // 0.01 degree
  std::uint16_t fov_end_at = 34;
  std::uint16_t phase_lock_at = 38;
  std::uint16_t serial_at = 292;  // 6 bytes
  std::uint16_t zero_angle_at = 298;
  std::uint16_t return_mode_at = 300;
  std::uint16_t sync_mode_at = 0;    // Helios: 301 (time-sync mode); 0: none
  std::uint16_t sync_status_at = 0;  // Helios: 302 (nebula: its use_sensor_time)
  std::uint16_t time_at = 303;
  TimeForm time_form = TimeForm::kUtcMicros;
  std::uint16_t gprmc_at = 382;
  std::size_t gprmc_bytes = 86;
  AngleForm angle_form = AngleForm::kSignedCdeg;
  std::uint16_t vertical_at = 468;
  std::uint16_t horizontal_at = 564;  // 0: none (RS-LiDAR-16)
};
inline constexpr std::array<std::uint8_t, 8> kDifopId{0xA5, 0xFF, 0x00, 0x5A,
                                                      0x11, 0x11, 0x55, 0x55};
inline constexpr std::size_t kAngleBytes = 3;  // every form: sign and u16, or u24
// An angle's sign byte: 0 positive, anything else negative, 0xFF "not calibrated" (rs_driver
// then waits for another DIFOP). rs_driver accepts -90 .. 180 degrees.
inline constexpr std::uint8_t kAngleUncalibrated = 0xFF;
inline constexpr int kAngleMinCdeg = -9000;
inline constexpr int kAngleMaxCdeg = 17999;

struct ModelFormat {
  std::string_view model;  // the --model spelling
  MsopFormat msop;
  DifopFormat difop;
  double distance_unit_m = 0.0025;
  // Firings of every channel a single-return block holds: 2 on the RS-LiDAR-16, whose 16
  // channels fill slots 0-15 with one firing and 16-31 with the next (in dual return, the two
  // echoes of one firing); 1 elsewhere (dual return there takes two blocks a firing).
  int firings_per_block = 1;
};

// RS-Helios (32 channels): 4-byte id, UTC time, 2.5 mm (nebula reads byte 17 as the range
// resolution: 1 is 2.5 mm); lidar type at 30 (rs_driver) left 0, as nothing checks it.
inline constexpr ModelFormat kHelios{
    .model = "rs-helios",
    .msop = {.id = {0x55, 0xAA, 0x05, 0x5A, 0, 0, 0, 0},
             .id_bytes = 4,
             .time_at = 20,
             .time_form = TimeForm::kUtcMicros,
             .temperature_at = 38,
             .fixed = {{{17, 1}}}},
    .difop = {.sync_mode_at = 301, .sync_status_at = 302, .time_form = TimeForm::kUtcMicros},
    .distance_unit_m = 0.0025};

// RS-Bpearl, the v4 hardware (rs_driver: lidar type 0x03 at 31 and model 0x04 at 32 select UTC
// time, 2.5 mm and the v4 firing table): 8-byte id; the DIFOP's time at 303 in YMD form (V1
// layout: 301-302 are its software version).
inline constexpr ModelFormat kBpearl{
    .model = "rs-bpearl",
    .msop = {.id = {0x55, 0xAA, 0x05, 0x0A, 0x5A, 0xA5, 0x50, 0xA0},
             .id_bytes = 8,
             .time_at = 20,
             .time_form = TimeForm::kUtcMicros,
             .temperature_at = 38,
             .fixed = {{{31, 0x03}, {32, 0x04}}}},
    .difop = {.time_form = TimeForm::kYmd},
    .distance_unit_m = 0.0025};

// RS-Bpearl v3: the same packets with neither v4 byte, so rs_driver and nebula both take it for
// a v3; its time in YMD form (rs_driver's parseTimeYMD; nebula's bpearl_v3 reads these bytes as
// UTC seconds, against the vendor's driver), 5 mm.
inline constexpr ModelFormat kBpearlV3{
    .model = "rs-bpearl-v3",
    .msop = {.id = {0x55, 0xAA, 0x05, 0x0A, 0x5A, 0xA5, 0x50, 0xA0},
             .id_bytes = 8,
             .time_at = 20,
             .time_form = TimeForm::kYmd,
             .temperature_at = 38,
             .fixed = {}},
    .difop = {.time_form = TimeForm::kYmd},
    .distance_unit_m = 0.005};

// RS-LiDAR-16 (FORMATS-MORE.md section 3): the Bpearl's 8-byte id, model byte 0x01 at 30 (the
// manual's table 4; rs_driver does not check it), YMD time, 5 mm; two firings a block; the DIFOP's
// pitch table at 1165.
inline constexpr ModelFormat kRs16{.model = "rs16",
                                   .msop = {.id = {0x55, 0xAA, 0x05, 0x0A, 0x5A, 0xA5, 0x50, 0xA0},
                                            .id_bytes = 8,
                                            .time_at = 20,
                                            .time_form = TimeForm::kYmd,
                                            .temperature_at = 38,
                                            .fixed = {{{30, 0x01}}}},
                                   .difop = {.time_form = TimeForm::kYmd,
                                             .angle_form = AngleForm::kPitch16,
                                             .vertical_at = 1165,
                                             .horizontal_at = 0},
                                   .distance_unit_m = 0.005,
                                   .firings_per_block = 2};

// RS-LiDAR-32: the same header with model byte 0x02; angles in 0.001 degree at 468 and 564.
inline constexpr ModelFormat kRs32{
    .model = "rs32",
    .msop = {.id = {0x55, 0xAA, 0x05, 0x0A, 0x5A, 0xA5, 0x50, 0xA0},
             .id_bytes = 8,
             .time_at = 20,
             .time_form = TimeForm::kYmd,
             .temperature_at = 38,
             .fixed = {{{30, 0x02}}}},
    .difop = {.time_form = TimeForm::kYmd, .angle_form = AngleForm::kSignedMdeg},
    .distance_unit_m = 0.005};

inline constexpr auto kModelFormats =
    std::to_array<const ModelFormat*>({&kHelios, &kBpearl, &kBpearlV3, &kRs16, &kRs32});

}  // namespace lidaremu::core::robosense
