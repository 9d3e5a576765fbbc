#include "lidaremu/daemon/net/browser_guard.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/ip/address.hpp>
#include <cctype>

namespace lidaremu::daemon {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// "host:port", "[v6]:port" or "host" -> host (without brackets).
std::string host_part(std::string_view host_header) {
  if (host_header.starts_with('[')) {
    const auto close = host_header.find(']');
    return lower(host_header.substr(1, close == std::string_view::npos ? close : close - 1));
  }
  return lower(host_header.substr(0, host_header.rfind(':')));
}

bool is_address(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

std::string this_machine() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return {};
  return lower(name.data());
}

bool listed(const std::vector<std::string>& list, const std::string& value) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& item) { return lower(item) == value; });
}

}  // namespace

std::optional<std::string> refuse_cross_site(const HttpRequest& request,
                                             const BrowserPolicy& policy) {
  if (!request.host.empty()) {
    const std::string host = host_part(request.host);
    static const std::string machine = this_machine();
    if (!is_address(host) && host != "localhost" && host != machine &&
        !listed(policy.allowed_hosts, host)) {
      return "Host '" + request.host +
             "' is not an address of this daemon (a DNS-rebinding page looks like this): use an "
             "address, or allow the name with http_allowed_hosts / --http-allow-host";
    }
  }
  const std::string origin = lower(request.origin);
  const bool allowed_origin = !origin.empty() && listed(policy.allowed_origins, origin);
  if (!origin.empty() && !allowed_origin && origin != "http://" + lower(request.host)) {
    return "cross-origin request from '" + request.origin +
           "' refused: allow that page with http_allowed_origins / --http-allow-origin";
  }
  const std::string site = lower(request.sec_fetch_site);
  if ((site == "cross-site" || site == "same-site") && !allowed_origin) {
    return "a browser marked this request " + site +
           ": refused (allow its page with http_allowed_origins / --http-allow-origin)";
  }
  return std::nullopt;
}

bool looks_like_http(std::string_view line) {
  static constexpr auto kMethods = std::to_array<std::string_view>(
      {"GET ", "POST ", "PUT ", "DELETE ", "HEAD ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE "});
  const bool request_line = std::any_of(kMethods.begin(), kMethods.end(),
                                        [&](std::string_view m) { return line.starts_with(m); }) &&
                            line.find(" HTTP/") != std::string_view::npos;
  const std::string start = lower(line.substr(0, 16));
  return request_line || start.starts_with("host:") || start.starts_with("origin:") ||
         start.starts_with("content-type:");
}

}  // namespace lidaremu::daemon
