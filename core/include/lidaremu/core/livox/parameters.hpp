#pragma once
// A Livox unit's key-value parameters (Livox SDK2's ParamKeyName, livox_lidar_def.h): what it
// reports to 0x0101 (internal information) and what a host may set with 0x0100 (work-mode
// control), with the values' wire layouts as SDK2's parse_lidar_state_info.cpp and
// build_request.cpp read and write them: addresses as four bytes in dotted order, numbers
// little-endian.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

namespace lidaremu::core::livox {

enum class ParamKey : std::uint16_t {
  kPclDataType = 0x0000,
  kPatternMode = 0x0001,
  kDualEmitEn = 0x0002,
  kPointSendEn = 0x0003,
  kLidarIpCfg = 0x0004,
  kStateInfoHostIpCfg = 0x0005,
  kPointDataHostIpCfg = 0x0006,
  kImuHostIpCfg = 0x0007,
  kCtlHostIpCfg = 0x0008,
  kLogHostIpCfg = 0x0009,
  kVehicleSpeed = 0x0010,
  kEnvironmentTemp = 0x0011,
  kInstallAttitude = 0x0012,
  kBlindSpotSet = 0x0013,
  kFrameRate = 0x0014,
  kFovCfg0 = 0x0015,
  kFovCfg1 = 0x0016,
  kFovCfgEn = 0x0017,
  kDetectMode = 0x0018,
  kFuncIoCfg = 0x0019,
  kWorkMode = 0x001A,
  kGlassHeat = 0x001B,
  kImuDataEn = 0x001C,
  kFusaEn = 0x001D,
  kForceHeatEn = 0x001E,
  kWorkModeAfterBoot = 0x0020,
  kSn = 0x8000,
  kProductInfo = 0x8001,
  kVersionApp = 0x8002,
  kVersionLoader = 0x8003,
  kVersionHardware = 0x8004,
  kMac = 0x8005,
  kCurWorkState = 0x8006,
  kCoreTemp = 0x8007,
  kPowerUpCnt = 0x8008,
  kLocalTimeNow = 0x8009,
  kLastSyncTime = 0x800A,
  kTimeOffset = 0x800B,
  kTimeSyncType = 0x800C,
  kStatusCode = 0x800D,
  kLidarDiagStatus = 0x800E,
  kLidarFlashStatus = 0x800F,
  kFwType = 0x8010,
  kHmsCode = 0x8011,
};

// Where a stream goes: the host's address (host order) and port, and the unit's port it leaves.
struct HostPorts {
  std::uint32_t host_address = 0;
  std::uint16_t host_port = 0;
  std::uint16_t lidar_port = 0;
  bool operator==(const HostPorts&) const = default;
};

// What the unit reports of itself and its streams.
struct UnitState {
  std::string_view serial;    // up to 16 characters, zero-padded
  std::uint32_t address = 0;  // IPv4, host order
  std::uint32_t netmask = 0xFFFF'FF00;
  std::uint32_t gateway = 0;
  std::uint16_t command_port = 56100;
  HostPorts state_info{};  // push messages (the unit sends none; reported as configured)
  HostPorts points{};
  HostPorts imu{};
  std::uint64_t time_ns = 0;  // the unit's clock now
};

// The host ends a 0x0100 request asks for (empty: unchanged).
struct WorkModeChange {
  std::optional<HostPorts> state_info, points, imu;
  [[nodiscard]] bool empty() const { return !state_info && !points && !imu; }
};
// The daemon's side: applies a change, or refuses it (false).
using ApplyWorkMode = std::function<bool(const WorkModeChange&)>;

// The answer data to a 0x0101 request (key count u16, reserved u16, the keys): return code 0,
// then each key the unit has, in the order asked, as {key u16, length u16, value} (a key it has
// not is left out; param_num counts those given); a malformed request gets return code 1 and no
// parameters. Its size, within `out`.
std::size_t write_internal_info(std::span<const std::uint8_t> request, const UnitState& unit,
                                std::span<std::uint8_t> out);

// The answer data to a 0x0100 request (key count u16, reserved u16, {key, length, value}...):
// return code u8 and error key u16 (SDK2's LivoxLidarAsyncControlResponse). Applied: the point,
// IMU and state-information host ends (through `apply`); checked: the point data type (1, what a
// Mid-360 sends here), the scan pattern (0, the non-repetitive one) and the unit's own address
// (it cannot move); the other keys SDK2 names are accepted and change nothing. Refused with
// return code 1 and the key at fault: an unknown or read-only key, a value of the wrong length
// or that cannot be done, a request whose keys overrun it (error key 0). Nothing is applied
// unless every key is accepted.
std::array<std::uint8_t, 3> answer_work_mode(std::span<const std::uint8_t> request,
                                             const UnitState& unit, const ApplyWorkMode& apply);

}  // namespace lidaremu::core::livox
