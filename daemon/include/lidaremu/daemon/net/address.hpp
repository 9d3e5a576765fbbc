#pragma once
// Address text the units' APIs accept, and where an address is.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address_v4.hpp>
#include <boost/asio/ip/udp.hpp>
#include <cstdint>
#include <string>

namespace lidaremu::daemon {

inline bool is_ipv4(const std::string& text) {
  boost::system::error_code ec;
  boost::asio::ip::make_address_v4(text, ec);
  return !ec;
}

// Whether `address` is one of this machine's (a socket can be bound to it): loopback, or an
// interface's own address.
inline bool is_local_address(const std::string& address) {
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address_v4(address, ec);
  if (ec) return false;
  if (ip.is_loopback()) return true;
  boost::asio::io_context io;
  boost::asio::ip::udp::socket probe(io);
  probe.open(boost::asio::ip::udp::v4(), ec);
  if (!ec) probe.bind({ip, 0}, ec);
  return !ec;
}

// The port a unit's stream leaves from: its own (`own`, 0 for any), unless the host it sends
// to is this machine and listens on that very port. A driver there binds every address on its
// port without SO_REUSEADDR (the ROS velodyne driver's input.cc), which no other socket on the
// machine may then hold, and which it cannot bind once another holds it: the unit's packets
// then leave from any port, so that either may start first.
inline std::uint16_t source_port_for(std::uint16_t own, const std::string& to_host,
                                     std::uint16_t to_port) {
  return own != 0 && own == to_port && is_local_address(to_host) ? 0 : own;
}

}  // namespace lidaremu::daemon
