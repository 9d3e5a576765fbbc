#pragma once
// Requests that change state must come from a tool, or from a page the operator allowed, never
// from whatever web page a browser on the same machine happens to show. Tools (curl, the Ouster
// SDK, nebula, Python) send no Origin and no Sec-Fetch-* headers; browsers send Origin on every
// cross-origin write and Sec-Fetch-Site on every request, and a DNS-rebinding page reaches us
// under its own host name. So a write is refused when:
//  - its Host names neither an address, nor localhost, nor this machine, nor an allowed host;
//  - its Origin is "null" or another origin than the Host it was sent to, unless allowed;
//  - its Sec-Fetch-Site says cross-site or same-site, unless its Origin is allowed.
// The emulated sensor APIs use this as it is (the SDK's writes are GETs and POSTs whose content
// type is the client library's choice); the daemon's own API also requires PUT and JSON.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lidaremu/daemon/net/http_server.hpp"

namespace lidaremu::daemon {

struct BrowserPolicy {
  // Host names (not addresses: those are always accepted) clients may use, e.g. a compose
  // service name; compared without the port, case-insensitively.
  std::vector<std::string> allowed_hosts;
  // Origins ("http://host:port") whose pages may change state.
  std::vector<std::string> allowed_origins;
};

// The reason a state-changing request is refused (answer 403 with it), or nothing.
std::optional<std::string> refuse_cross_site(const HttpRequest& request,
                                             const BrowserPolicy& policy);

// An HTTP request line or header arriving on a line-protocol port (TCP 7501): a browser's form
// POST carrying commands in its body. The connection is closed before any line runs.
bool looks_like_http(std::string_view line);

}  // namespace lidaremu::daemon
