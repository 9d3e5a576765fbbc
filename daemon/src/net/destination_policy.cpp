#include "lidaremu/daemon/net/destination_policy.hpp"

#include <boost/asio/ip/address_v4.hpp>
#include <charconv>

namespace lidaremu::daemon {

std::optional<Ipv4Range> parse_ipv4_range(std::string_view text) {
  const auto slash = text.find('/');
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address_v4(std::string(text.substr(0, slash)), ec);
  if (ec) return std::nullopt;
  int bits = 32;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
    if (error != std::errc() || end != digits.data() + digits.size() || bits < 0 || bits > 32) {
      return std::nullopt;
    }
  }
  const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
  return Ipv4Range{address.to_uint() & mask, mask};
}

std::string DestinationPolicy::refusal(const std::string& destination,
                                       const std::string& requester) const {
  boost::system::error_code ec;
  const auto to = boost::asio::ip::make_address_v4(destination, ec);
  if (ec) return "destination '" + destination + "' is not an IPv4 address";
  if (to.is_loopback() || destination == requester) return {};
  for (const Ipv4Range& range : allowed_) {
    if (range.contains(to.to_uint())) return {};
  }
  return "destination " + destination +
         " refused: a stream may go to a loopback address, to "
         "the client that asks (" +
         requester + "), or to a range on --allow-destinations";
}

}  // namespace lidaremu::daemon
