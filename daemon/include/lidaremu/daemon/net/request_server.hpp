#pragma once
// The TCP request/reply ports of an emulated unit that are not HTTP: Hesai PTC (9347) and
// Ouster's TCP 7501 text protocol. One session for both, its protocol given as a framing (where a
// request ends, and its answer), so that each bound holds on every such port:
// - a request must be whole within the request timeout once its first byte is in;
// - replies are written one at a time, each within the write timeout: a client that pipelines
//   requests and never reads holds at most one reply unsent, and is closed at that deadline;
// - at most max_connections at once; when all are taken, the connection that has waited longest
//   on its client (idle between requests, or a reply not taken) gives way to the newcomer.
// (The Livox SDK2 command port is UDP: a datagram is a request, no session holds anything.)
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "lidaremu/daemon/net/http_server.hpp"

namespace lidaremu::daemon {

class ConnectionTable;  // tcp_accept.hpp

// What one port's connections came to (io thread only). /metrics:
// lidaremu_api_requests_total and lidaremu_api_connections_closed_total{reason}.
struct ConnectionCounts {
  std::uint64_t requests = 0;
  std::uint64_t refused = 0;           // over max_connections, none able to give way
  std::uint64_t evicted = 0;           // given way to a newcomer (idle, or a reply not taken)
  std::uint64_t request_timeouts = 0;  // a request begun and not whole within the timeout
  std::uint64_t write_timeouts = 0;    // a reply the client did not take within the timeout
  std::uint64_t malformed = 0;         // not the port's protocol, or a request over its limit
};

// How a port's byte stream is cut into requests and answered.
struct RequestFraming {
  // Names the port in errors ("Hesai PTC").
  std::string name;
  // The longest request the port takes whole; a longer one closes the connection (malformed).
  std::size_t max_request_bytes = 0;
  // The size of the first whole request in `buffered`: 0 while more must come; nothing when the
  // bytes are not this protocol (the connection closes, counted as malformed).
  std::function<std::optional<std::size_t>(std::span<const std::uint8_t> buffered)> request_size;
  // The reply to one whole request from `remote` (its IP); nothing: close without one (a request
  // the port refuses to run, counted as malformed).
  std::function<std::optional<std::string>(std::span<const std::uint8_t> request,
                                           const std::string& remote)>
      answer;
  // An idle connection closes after the request timeout (true), or stays open as long as the
  // client likes (false: the Hesai SDK holds its PTC connection from start and asks only once
  // data flows). Either way an idle one gives way to a newcomer when the port is full.
  bool idle_closes = false;
};

class RequestServer {
 public:
  // Binds at once; throws std::runtime_error naming the port and what to do.
  RequestServer(boost::asio::io_context& io, const std::string& address, std::uint16_t port,
                RequestFraming framing, ServerLimits limits = {});
  ~RequestServer();
  RequestServer(const RequestServer&) = delete;
  RequestServer& operator=(const RequestServer&) = delete;
  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] const ConnectionCounts& counts() const { return *counts_; }

 private:
  void accept_next();
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<const RequestFraming> framing_;  // shared with every session it starts
  ServerLimits limits_;
  std::shared_ptr<ConnectionCounts> counts_;
  std::shared_ptr<ConnectionTable> connections_;
};

// Ouster's TCP 7501 framing: one command per line ("\n", a "\r" before it dropped), one reply
// line back; a line that looks like HTTP (a browser's form POST) closes the connection before
// any of its lines runs.
RequestFraming line_framing(
    std::size_t max_line_bytes,
    std::function<std::string(const std::string& line, const std::string& remote)> handler);

}  // namespace lidaremu::daemon
