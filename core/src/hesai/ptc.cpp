// Hesai PTC framing and payloads: every multi-byte field big-endian, strings NUL-padded.
#include "lidaremu/core/hesai/ptc.hpp"

#include <algorithm>

namespace lidaremu::core::hesai::ptc {
namespace {

class BigEndianWriter {
 public:
  explicit BigEndianWriter(std::size_t size) { bytes_.reserve(size); }
  void u8(std::uint8_t v) { bytes_.push_back(v); }
  void u16(std::uint16_t v) {
    u8(static_cast<std::uint8_t>(v >> 8));
    u8(static_cast<std::uint8_t>(v));
  }
  void u32(std::uint32_t v) {
    u16(static_cast<std::uint16_t>(v >> 16));
    u16(static_cast<std::uint16_t>(v));
  }
  template <std::size_t N>
  void bytes(const std::array<std::uint8_t, N>& b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
  }
  // Cut to `width`, NUL-padded.
  void text(const std::string& s, std::size_t width) {
    const std::size_t n = std::min(s.size(), width);
    bytes_.insert(bytes_.end(), s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
    bytes_.insert(bytes_.end(), width - n, 0);
  }
  void zeros(std::size_t n) { bytes_.insert(bytes_.end(), n, 0); }
  std::vector<std::uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<std::uint8_t> bytes_;
};

std::uint16_t be16(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint16_t>((b[at] << 8) | b[at + 1]);
}

}  // namespace

std::optional<Header> parse_header(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kHeaderSize || bytes[0] != kMagic0 || bytes[1] != kMagic1) return {};
  return Header{bytes[2], bytes[3],
                (std::uint32_t{bytes[4]} << 24) | (std::uint32_t{bytes[5]} << 16) |
                    (std::uint32_t{bytes[6]} << 8) | bytes[7]};
}

std::vector<std::uint8_t> frame(std::uint8_t command, std::uint8_t return_code,
                                std::span<const std::uint8_t> payload) {
  BigEndianWriter w(kHeaderSize + payload.size());
  w.u8(kMagic0);
  w.u8(kMagic1);
  w.u8(command);
  w.u8(return_code);
  w.u32(static_cast<std::uint32_t>(payload.size()));
  auto out = w.take();
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::vector<std::uint8_t> inventory_payload(const Inventory& inventory) {
  BigEndianWriter w(std::max(kInventorySize, inventory.size));
  w.text(inventory.serial, 18);
  w.text(inventory.date_of_manufacture, 16);
  w.bytes(inventory.mac);
  w.text(inventory.software_version, 16);
  w.text(inventory.hardware_version, 16);
  w.text(inventory.control_firmware, 16);
  w.text(inventory.sensor_firmware, 16);
  if (inventory.size == kInventoryAt128Size) w.zeros(std::size_t{4} * 16);  // FPGA strings
  w.u16(0);                                                                 // angle offset
  w.u8(inventory.model);
  w.u8(0);  // motor type
  w.u8(inventory.lines);
  const std::size_t written = 104 + 2 + 3 + (inventory.size == kInventoryAt128Size ? 64 : 0);
  w.zeros(std::max(kInventorySize, inventory.size) - written);
  return w.take();
}

std::vector<std::uint8_t> config_payload(const Config& c) {
  BigEndianWriter w(kConfigSize);
  w.bytes(c.ip);
  w.bytes(c.mask);
  w.bytes(c.gateway);
  w.bytes(c.destination_ip);
  w.u16(c.destination_port);
  w.u16(c.gps_port);
  w.u16(c.spin_rate);
  w.u8(c.sync);
  w.u16(c.sync_angle);
  w.u16(c.start_angle);
  w.u16(c.stop_angle);
  w.u8(c.clock_source);
  w.u8(c.udp_sequence);
  w.u8(c.trigger_method);
  w.u8(c.return_mode);
  w.u8(c.standby);
  w.u8(c.motor_status);
  w.u8(0);   // VLAN off
  w.u16(0);  // VLAN id
  w.u8(0);   // clock data format
  w.u8(0);   // noise filtering
  w.u8(0);   // reflectivity mapping: linear
  w.zeros(6);
  return w.take();
}

Config parse_config(std::span<const std::uint8_t> p) {
  Config c;
  if (p.size() < kConfigSize) return c;
  std::copy_n(p.begin(), 4, c.ip.begin());
  std::copy_n(p.begin() + 4, 4, c.mask.begin());
  std::copy_n(p.begin() + 8, 4, c.gateway.begin());
  std::copy_n(p.begin() + 12, 4, c.destination_ip.begin());
  c.destination_port = be16(p, 16);
  c.gps_port = be16(p, 18);
  c.spin_rate = be16(p, 20);
  c.sync = p[22];
  c.sync_angle = be16(p, 23);
  c.start_angle = be16(p, 25);
  c.stop_angle = be16(p, 27);
  c.clock_source = p[29];
  c.udp_sequence = p[30];
  c.trigger_method = p[31];
  c.return_mode = p[32];
  c.standby = p[33];
  c.motor_status = p[34];
  return c;
}

std::vector<std::uint8_t> status_payload(const Status& s) {
  const bool at128 = s.size == kStatusAt128Size;
  BigEndianWriter w(at128 ? kStatusAt128Size : kStatusSize);
  w.u32(s.uptime_s);
  w.u16(s.motor_rpm);
  for (int i = 0; i < (at128 ? 9 : 8); ++i) {
    w.u32(static_cast<std::uint32_t>(s.temperature_centideg));
  }
  w.u8(0);  // GPS PPS: unlocked (no GPS emulated)
  w.u8(0);  // GPRMC: unlocked
  w.u32(s.startups);
  w.u32(s.operating_minutes);
  w.u8(0);  // PTP: free run
  w.zeros(5);
  return w.take();
}

}  // namespace lidaremu::core::hesai::ptc
