#pragma once
// Address text the units' APIs accept.
#include <boost/asio/ip/address_v4.hpp>
#include <string>

namespace lidaremu::daemon {

inline bool is_ipv4(const std::string& text) {
  boost::system::error_code ec;
  boost::asio::ip::make_address_v4(text, ec);
  return !ec;
}

}  // namespace lidaremu::daemon
