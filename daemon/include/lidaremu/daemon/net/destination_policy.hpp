#pragma once
// Where a client of an emulated unit's API may point the unit's streams (PTC 0x20, Ouster
// udp_dest, Velodyne /cgi/setting/host, Livox SDK2's host ends). A real driver asks the unit to
// send to itself; anyone able to reach the API could otherwise turn a sensor's stream into a
// flood aimed anywhere, broadcast and multicast included. Allowed: a loopback address, the
// address of the client asking, and the ranges on --allow-destinations; anything else is refused
// with the protocol's own error and counted (lidaremu_destination_changes_total).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lidaremu::daemon {

struct Ipv4Range {
  std::uint32_t network = 0;  // host order
  std::uint32_t mask = 0;
  [[nodiscard]] bool contains(std::uint32_t address) const { return (address & mask) == network; }
};

// "10.0.0.0/8", or an address alone (a /32); nothing when it is neither.
std::optional<Ipv4Range> parse_ipv4_range(std::string_view text);

class DestinationPolicy {
 public:
  DestinationPolicy() = default;
  explicit DestinationPolicy(std::vector<Ipv4Range> allowed) : allowed_(std::move(allowed)) {}
  // Empty when a client at `requester` may point a stream at `destination`; otherwise why not,
  // in words a user can act on.
  [[nodiscard]] std::string refusal(const std::string& destination,
                                    const std::string& requester) const;

 private:
  std::vector<Ipv4Range> allowed_;
};

}  // namespace lidaremu::daemon
