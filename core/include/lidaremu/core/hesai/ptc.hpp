#pragma once
// Hesai PTC, the TCP 9347 control protocol (FORMATS-HESAI-ROBOSENSE.md "Hesai PTC", from the Hesai
// SDK's PTC parser and nebula's hardware interface): an 8-byte header (0x47 0x74, command,
// return code, payload length as a big-endian u32) then the payload, the same both ways. The
// payloads of what nebula reads (inventory, config, status) as field tables, big-endian.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace lidaremu::core::hesai::ptc {

inline constexpr std::uint8_t kMagic0 = 0x47;
inline constexpr std::uint8_t kMagic1 = 0x74;
inline constexpr std::size_t kHeaderSize = 8;
// What the unit reads of one request; a longer one is refused (the connection closes).
inline constexpr std::uint32_t kMaxPayload = 64 * 1024;

enum Command : std::uint8_t {
  kGetCalibration = 0x05,
  kPtpDiagnostics = 0x06,
  kGetInventory = 0x07,
  kGetConfig = 0x08,
  kGetStatus = 0x09,
  kSetSpinRate = 0x17,
  kSetSyncAngle = 0x18,
  kSetTriggerMethod = 0x1B,
  kSetStandbyMode = 0x1C,
  kSetReturnMode = 0x1E,
  kSetClockSource = 0x1F,
  kSetDestination = 0x20,
  kSetControlPort = 0x21,
  kSetLidarRange = 0x22,
  kGetLidarRange = 0x23,
  kSetPtpConfig = 0x24,
  kReset = 0x25,
  kGetPtpConfig = 0x26,
  kGetLidarMonitor = 0x27,
  kGetHighResolution = 0x28,
  kSetHighResolution = 0x29,
  kSetRotateDirection = 0x2A,
  kSetPtpLockOffset = 0x39,
  kGetPtpLockOffset = 0x3A,
  kSetUpCloseBlockage = 0x58,
  kGetUpCloseBlockage = 0x59,
  kGetFiretimes = 0xA9,  // the Hesai SDK's; its QT128 parser reads the answer, the others log it
};

enum ReturnCode : std::uint8_t {
  kOk = 0,
  kInvalidParameter = 1,
  kInvalidData = 3,
  kUnsupportedCommand = 5,
};

struct Header {
  std::uint8_t command = 0;
  std::uint8_t return_code = 0;
  std::uint32_t payload_size = 0;
};
// The header of a request or response; nothing when the magic bytes are not there.
std::optional<Header> parse_header(std::span<const std::uint8_t> bytes);
// Header and payload, ready to send.
std::vector<std::uint8_t> frame(std::uint8_t command, std::uint8_t return_code,
                                std::span<const std::uint8_t> payload);

// Return modes in PTC (the config's return_mode byte and SET_RETURN_MODE) on the XT and QT128:
// 0 last, 1 strongest, 2 last and strongest, 3 first, 4 last and first, 5 first and strongest;
// the QT64's 2 is its dual, first and last (nebula's hesai_common). Which a model offers: its
// registry row (HesaiTraits::return_modes).
inline constexpr std::uint8_t kPtcLast = 0;
inline constexpr std::uint8_t kPtcStrongest = 1;
inline constexpr std::uint8_t kPtcLastStrongest = 2;
inline constexpr std::uint8_t kPtcFirst = 3;
inline constexpr std::uint8_t kPtcLastFirst = 4;
inline constexpr std::uint8_t kPtcFirstStrongest = 5;
inline constexpr std::uint8_t kPtcQt64Dual = 2;  // first and last

// GET_INVENTORY_INFO: sn[18] date[16] mac[6] sw_ver[16] hw_ver[16] control_fw[16]
// sensor_fw[16] angle_offset u16, model u8, motor_type u8, lines u8, 11 reserved: 120 bytes; the
// OT128's goes on to 162 (pn[32] from 109, customer_pn_enable, customer_pn[20]: nebula reads
// them and refuses a shorter reply; FORMATS-MORE.md 1.7).
inline constexpr std::size_t kInventorySize = 120;
inline constexpr std::size_t kInventoryOt128Size = 162;
// The AT128's (FORMATS-MORE.md 2.8): the first 104 bytes as above, then four FPGA version and
// checksum strings of 16 bytes, angle offset i16 at 168, model at 170, motor type, lines at 172,
// motor and encoder correction flags, 9 reserved: 184 bytes.
inline constexpr std::size_t kInventoryAt128Size = 184;
inline constexpr std::size_t kInventoryAt128ModelAt = 170;
inline constexpr std::size_t kInventoryAt128LinesAt = 172;
inline constexpr std::size_t kInventoryModelAt = 106;
inline constexpr std::size_t kInventoryLinesAt = 108;
struct Inventory {
  std::string serial;
  std::string date_of_manufacture;
  std::array<std::uint8_t, 6> mac{};
  std::string software_version;
  std::string hardware_version;
  std::string control_firmware;
  std::string sensor_firmware;
  std::uint8_t model = 0;
  std::uint8_t lines = 0;
  // kInventoryOt128Size: its part numbers past 120 bytes, sent as zeros; kInventoryAt128Size:
  // the AT128's layout (FPGA strings as zeros before the model byte).
  std::size_t size = kInventorySize;
};
std::vector<std::uint8_t> inventory_payload(const Inventory& inventory);

// GET_PTP_CONFIG: status, profile, domain, network, then (profile 0, 1588v2) the logging
// intervals; the OT128's "automotive" profile is 3 on the wire with 5 bytes (nebula throws on
// any other profile value or a shorter reply).
inline constexpr std::uint8_t kPtpProfileAutomotive = 3;
inline constexpr std::uint8_t kPtpNetworkL2 = 1;
inline constexpr std::uint8_t kPtpSwitchTsn = 1;
// GET_LIDAR_MONITOR: input current, voltage and power, phase offset (i32 each), 48 reserved.
inline constexpr std::size_t kLidarMonitorSize = 64;
// GET_PTP_LOCK_OFFSET: one byte; nebula's default threshold is 100.
inline constexpr std::uint8_t kPtpLockOffset = 100;

// GET_CONFIG_INFO (XT and 40P): addresses, ports, spin rate, sync, angles, clock source, UDP
// sequence, trigger, return mode, standby, motor status, VLAN, then clock data format, noise
// filtering, reflectivity mapping and 6 reserved: 47 bytes.
inline constexpr std::size_t kConfigSize = 47;
struct Config {
  std::array<std::uint8_t, 4> ip{}, mask{}, gateway{}, destination_ip{};
  std::uint16_t destination_port = 2368;
  std::uint16_t gps_port = 10110;
  std::uint16_t spin_rate = 600;
  std::uint8_t sync = 0;
  std::uint16_t sync_angle = 0;
  std::uint16_t start_angle = 0;
  std::uint16_t stop_angle = 3600;
  std::uint8_t clock_source = 0;
  std::uint8_t udp_sequence = 1;
  std::uint8_t trigger_method = 0;
  std::uint8_t return_mode = kPtcLastStrongest;
  std::uint8_t standby = 0;
  std::uint8_t motor_status = 0;
};
std::vector<std::uint8_t> config_payload(const Config& config);
Config parse_config(std::span<const std::uint8_t> payload);  // for clients and tests

// GET_LIDAR_STATUS (XT and 40P): uptime u32, motor speed u16, 8 temperatures (i32, 0.01 degree
// C), PPS lock, GPRMC status, start-ups u32, operating minutes u32, PTP state, 5 reserved:
// 54 bytes.
inline constexpr std::size_t kStatusSize = 54;
// The AT128's: nine temperatures (transmitter, FPGA, receiver, main and power boards, the hot
// spot), PPS and GPRMC unused, start-ups at 44, operating minutes at 48, PTP state at 52, 5
// reserved: 58 bytes.
inline constexpr std::size_t kStatusAt128Size = 58;
struct Status {
  std::uint32_t uptime_s = 0;
  std::uint16_t motor_rpm = 0;
  std::int32_t temperature_centideg = 4000;
  std::uint32_t startups = 1;
  std::uint32_t operating_minutes = 0;
  std::size_t size = kStatusSize;  // kStatusAt128Size: nine temperatures
};
std::vector<std::uint8_t> status_payload(const Status& status);

}  // namespace lidaremu::core::hesai::ptc
