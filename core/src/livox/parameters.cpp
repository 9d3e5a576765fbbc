// A Livox unit's key-value parameters: its 0x0101 answers and 0x0100 settings (parameters.hpp).
#include "lidaremu/core/livox/parameters.hpp"

#include <algorithm>
#include <cstring>

#include "lidaremu/core/byte_io.hpp"

namespace lidaremu::core::livox {
namespace {

constexpr std::uint8_t kOk = 0, kFailed = 1;
constexpr std::size_t kKeyListAt = 4;  // after the key count and two reserved bytes

// The value layouts SDK2 reads and writes (parse_lidar_state_info.cpp, build_request.cpp).
constexpr std::size_t kHostPortsBytes = 8;  // address[4], host port, lidar port
constexpr std::size_t kIpCfgBytes = 12;     // address[4], netmask[4], gateway[4]

struct KeyRule {
  ParamKey key;
  std::uint8_t bytes;  // the value's length
  bool writable;       // a host may set it (0x0100)
};
// Every key SDK2 names for a Mid-360, with its value's length (livox_lidar_def.h's
// DirectLidarStateInfo: 1-byte flags, int32 speeds and temperatures, 24-byte attitude, 20-byte
// FOV windows, 16-byte serial, 64-byte product string, 4-byte versions, 6-byte MAC, 32-byte
// status and HMS codes).
constexpr std::array<KeyRule, 44> kKeys{{
    {ParamKey::kPclDataType, 1, true},
    {ParamKey::kPatternMode, 1, true},
    {ParamKey::kDualEmitEn, 1, true},
    {ParamKey::kPointSendEn, 1, true},
    {ParamKey::kLidarIpCfg, kIpCfgBytes, true},
    {ParamKey::kStateInfoHostIpCfg, kHostPortsBytes, true},
    {ParamKey::kPointDataHostIpCfg, kHostPortsBytes, true},
    {ParamKey::kImuHostIpCfg, kHostPortsBytes, true},
    {ParamKey::kCtlHostIpCfg, kHostPortsBytes, true},
    {ParamKey::kLogHostIpCfg, kHostPortsBytes, true},
    {ParamKey::kVehicleSpeed, 4, true},
    {ParamKey::kEnvironmentTemp, 4, true},
    {ParamKey::kInstallAttitude, 24, true},
    {ParamKey::kBlindSpotSet, 4, true},
    {ParamKey::kFrameRate, 1, true},
    {ParamKey::kFovCfg0, 20, true},
    {ParamKey::kFovCfg1, 20, true},
    {ParamKey::kFovCfgEn, 1, true},
    {ParamKey::kDetectMode, 1, true},
    {ParamKey::kFuncIoCfg, 4, true},
    {ParamKey::kWorkMode, 1, true},
    {ParamKey::kGlassHeat, 1, true},
    {ParamKey::kImuDataEn, 1, true},
    {ParamKey::kFusaEn, 1, true},
    {ParamKey::kForceHeatEn, 1, true},
    {ParamKey::kWorkModeAfterBoot, 1, true},
    {ParamKey::kSn, 16, false},
    {ParamKey::kProductInfo, 64, false},
    {ParamKey::kVersionApp, 4, false},
    {ParamKey::kVersionLoader, 4, false},
    {ParamKey::kVersionHardware, 4, false},
    {ParamKey::kMac, 6, false},
    {ParamKey::kCurWorkState, 1, false},
    {ParamKey::kCoreTemp, 4, false},
    {ParamKey::kPowerUpCnt, 4, false},
    {ParamKey::kLocalTimeNow, 8, false},
    {ParamKey::kLastSyncTime, 8, false},
    {ParamKey::kTimeOffset, 8, false},
    {ParamKey::kTimeSyncType, 1, false},
    {ParamKey::kStatusCode, 32, false},
    {ParamKey::kLidarDiagStatus, 2, false},
    {ParamKey::kLidarFlashStatus, 1, false},
    {ParamKey::kFwType, 1, false},
    {ParamKey::kHmsCode, 32, false},
}};

const KeyRule* rule_of(std::uint16_t key) {
  const auto* r = std::find_if(kKeys.begin(), kKeys.end(), [key](const KeyRule& k) {
    return static_cast<std::uint16_t>(k.key) == key;
  });
  return r == kKeys.end() ? nullptr : r;
}

void put_address(std::span<std::uint8_t> value, std::size_t at, std::uint32_t address) {
  store_be(value, at, 4, address);  // dotted order: the first octet first
}
void put_host_ports(std::span<std::uint8_t> value, const HostPorts& h) {
  put_address(value, 0, h.host_address);
  store_le<std::uint16_t>(value, 4, h.host_port);
  store_le<std::uint16_t>(value, 6, h.lidar_port);
}
HostPorts read_host_ports(std::span<const std::uint8_t> value) {
  return {static_cast<std::uint32_t>(load_be(value, 0, 4)), load_le<std::uint16_t>(value, 4),
          load_le<std::uint16_t>(value, 6)};
}

// The unit's value of `rule`'s key, written into `value` (rule.bytes long, zeroed).
void write_value(const KeyRule& rule, const UnitState& unit, std::span<std::uint8_t> value) {
  switch (rule.key) {
    case ParamKey::kPclDataType:  // Cartesian, int32 mm: what a Mid-360 sends here
    case ParamKey::kPointSendEn:  // sending points
    case ParamKey::kWorkMode:     // normal (LivoxLidarWorkMode 1)
    case ParamKey::kImuDataEn:    // IMU packets on
    case ParamKey::kCurWorkState:
    case ParamKey::kFwType:  // application firmware, not the loader: SDK2 asks it first
      value[0] = 1;
      break;
    case ParamKey::kLidarIpCfg:
      put_address(value, 0, unit.address);
      put_address(value, 4, unit.netmask);
      put_address(value, 8, unit.gateway);
      break;
    case ParamKey::kStateInfoHostIpCfg:
      put_host_ports(value, unit.state_info);
      break;
    case ParamKey::kPointDataHostIpCfg:
      put_host_ports(value, unit.points);
      break;
    case ParamKey::kImuHostIpCfg:
      put_host_ports(value, unit.imu);
      break;
    case ParamKey::kSn:
      std::copy_n(unit.serial.begin(), std::min(unit.serial.size(), value.size()), value.begin());
      break;
    case ParamKey::kProductInfo: {
      constexpr std::string_view kProduct = "Livox Mid-360 (lidaremu)";
      std::copy(kProduct.begin(), kProduct.end(), value.begin());
      break;
    }
    case ParamKey::kLocalTimeNow:
      store_le<std::uint64_t>(value, 0, unit.time_ns);
      break;
    default:
      break;  // zero: off, none, no fault, not synchronised
  }
}

}  // namespace

std::size_t write_internal_info(std::span<const std::uint8_t> request, const UnitState& unit,
                                std::span<std::uint8_t> out) {
  if (out.size() < 3) return 0;
  std::fill(out.begin(), out.begin() + 3, std::uint8_t{0});
  const auto fail = [&] {
    out[0] = kFailed;
    return std::size_t{3};
  };
  if (request.size() < kKeyListAt) return fail();
  const std::size_t asked = load_le<std::uint16_t>(request, 0);
  if (request.size() != kKeyListAt + 2 * asked) return fail();
  std::size_t at = 3;
  std::uint16_t given = 0;
  for (std::size_t i = 0; i < asked; ++i) {
    const auto key = load_le<std::uint16_t>(request, kKeyListAt + 2 * i);
    const KeyRule* rule = rule_of(key);
    if (rule == nullptr) continue;
    if (at + 4 + rule->bytes > out.size()) break;  // what fits in one answer
    store_le<std::uint16_t>(out, at, key);
    store_le<std::uint16_t>(out, at + 2, rule->bytes);
    const auto value = out.subspan(at + 4, rule->bytes);
    std::fill(value.begin(), value.end(), std::uint8_t{0});
    write_value(*rule, unit, value);
    at += 4 + rule->bytes;
    ++given;
  }
  out[0] = kOk;
  store_le<std::uint16_t>(out, 1, given);
  return at;
}

std::array<std::uint8_t, 3> answer_work_mode(std::span<const std::uint8_t> request,
                                             const UnitState& unit, const ApplyWorkMode& apply) {
  const auto refuse = [](std::uint16_t key) {
    return std::array<std::uint8_t, 3>{kFailed, static_cast<std::uint8_t>(key & 0xFF),
                                       static_cast<std::uint8_t>(key >> 8)};
  };
  if (request.size() < kKeyListAt) return refuse(0);
  const std::size_t count = load_le<std::uint16_t>(request, 0);
  WorkModeChange change;
  std::size_t at = kKeyListAt;
  for (std::size_t i = 0; i < count; ++i) {
    if (at + 4 > request.size()) return refuse(0);
    const auto key = load_le<std::uint16_t>(request, at);
    const std::size_t length = load_le<std::uint16_t>(request, at + 2);
    at += 4;
    if (at + length > request.size()) return refuse(0);
    const auto value = request.subspan(at, length);
    at += length;
    const KeyRule* rule = rule_of(key);
    if (rule == nullptr || !rule->writable || length != rule->bytes) return refuse(key);
    switch (rule->key) {
      case ParamKey::kPclDataType:
        if (value[0] != 1) return refuse(key);  // only the Cartesian int32 records are sent
        break;
      case ParamKey::kPatternMode:
        if (value[0] != 0) return refuse(key);  // the scan table's pattern is the one there is
        break;
      case ParamKey::kLidarIpCfg:
        if (load_be(value, 0, 4) != unit.address) return refuse(key);  // it cannot move
        break;
      case ParamKey::kStateInfoHostIpCfg:
        change.state_info = read_host_ports(value);
        break;
      case ParamKey::kPointDataHostIpCfg:
        change.points = read_host_ports(value);
        if (change.points->host_port == 0 || change.points->host_address == 0) return refuse(key);
        break;
      case ParamKey::kImuHostIpCfg:
        change.imu = read_host_ports(value);
        if (change.imu->host_port == 0 || change.imu->host_address == 0) return refuse(key);
        break;
      default:
        break;  // accepted; nothing here depends on it
    }
  }
  if (at != request.size()) return refuse(0);
  if (!change.empty() && apply && !apply(change)) {
    return refuse(static_cast<std::uint16_t>(change.points ? ParamKey::kPointDataHostIpCfg
                                             : change.imu  ? ParamKey::kImuHostIpCfg
                                                           : ParamKey::kStateInfoHostIpCfg));
  }
  return {kOk, 0, 0};
}

}  // namespace lidaremu::core::livox
