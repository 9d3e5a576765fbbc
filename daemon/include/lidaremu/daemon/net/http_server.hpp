#pragma once
// A small HTTP/1.1 server (Boost.Beast) on the daemon's io_context, for the web APIs real
// sensors answer. It bounds every input: header and body sizes, time to send a request,
// connections open at once. (Request/reply ports that are not HTTP: request_server.hpp.)
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace lidaremu::daemon {

class ConnectionTable;  // tcp_accept.hpp

struct HttpRequest {
  std::string method;                        // "GET", "POST", ...
  std::string path;                          // without the query
  std::map<std::string, std::string> query;  // percent-decoded
  std::string body;
  std::string remote_ip;
  std::string authorization;  // the Authorization header, if any
  // What tells a browser's request from a tool's (browser_guard.hpp); empty when absent.
  std::string host;
  std::string origin;
  std::string sec_fetch_site;
  std::string content_type;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Instead of `body`: a large body kept elsewhere, sent without a copy (a beam table: 6 MiB,
  // whose copies cost the io thread ~50 ms on a virtual machine's page faults).
  std::shared_ptr<const std::string> shared_body = nullptr;
};

struct ServerLimits {
  std::size_t max_header_bytes = std::size_t{8} * 1024;
  std::size_t max_body_bytes = std::size_t{64} * 1024;
  std::size_t max_line_bytes = std::size_t{4} * 1024;
  // At most this many connections; when all are taken, the one that has waited longest for a
  // request is closed for a newcomer (a slow or idle client never locks out a health probe).
  int max_connections = 32;
  // A whole request (headers and body), or the wait for the next one on a kept-alive
  // connection, within this; then the connection closes.
  int request_timeout_s = 5;
  // A reply the client has not taken within this closes the connection (request_server.hpp).
  int write_timeout_s = 5;
};

// Counts what a server refused, for logs and metrics.
struct ServerCounters {
  std::uint64_t requests = 0;
  std::uint64_t malformed = 0;  // 400: not HTTP, or a header or body over the limit
  std::uint64_t refused = 0;    // connections beyond max_connections, none of them idle
  std::uint64_t evicted = 0;    // idle or slow connections closed to make room for a new one
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Binds at once; throws std::runtime_error naming the address and what to do.
  HttpServer(boost::asio::io_context& io, const std::string& address, std::uint16_t port,
             Handler handler, ServerLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] const ServerCounters& counters() const { return *counters_; }

 private:
  void accept_next();
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<Handler> handler_;  // shared with every session it starts
  ServerLimits limits_;
  std::shared_ptr<ServerCounters> counters_;
  std::shared_ptr<ConnectionTable> connections_;
};

// "a%20b" -> "a b"; '+' is a space in a query.
std::string percent_decode(std::string_view text);
std::map<std::string, std::string> parse_query(std::string_view query);

}  // namespace lidaremu::daemon
