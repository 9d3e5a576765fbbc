#include "lidaremu/daemon/net/http_server.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <stdexcept>

#include "lidaremu/daemon/net/tcp_accept.hpp"

namespace lidaremu::daemon {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

class HttpSession : public std::enable_shared_from_this<HttpSession>, public Evictable {
 public:
  HttpSession(tcp::socket socket, std::shared_ptr<HttpServer::Handler> handler, ServerLimits limits,
              std::shared_ptr<ServerCounters> counters, std::shared_ptr<ConnectionTable> table)
      : stream_(std::move(socket)),
        handler_(std::move(handler)),
        limits_(limits),
        counters_(std::move(counters)),
        slot_(std::move(table)) {
    boost::system::error_code ec;
    remote_ = stream_.socket().remote_endpoint(ec).address().to_string();
  }

  void start() {
    slot_.attach(weak_from_this());
    read_next();
  }

  void evict() override { close(); }

 private:
  void read_next() {
    slot_.waiting(true);
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(limits_.max_header_bytes));
    parser_->body_limit(limits_.max_body_bytes);
    // The whole request (or the wait for the next one on a kept-alive connection) within this.
    stream_.expires_after(std::chrono::seconds(limits_.request_timeout_s));
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    slot_.waiting(false);
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset) {
      return close();
    }
    if (ec) {
      // Not HTTP, or over a limit: say so once and close.
      ++counters_->malformed;
      http::response<http::string_body> bad{http::status::bad_request, 11};
      bad.set(http::field::content_type, "text/plain");
      bad.set(http::field::connection, "close");
      bad.body() = "bad request: " + ec.message() + "\n";
      bad.prepare_payload();
      return send(std::move(bad), true);
    }
    ++counters_->requests;
    const auto& request = parser_->get();
    HttpRequest in;
    in.method = std::string(request.method_string());
    const std::string_view target(request.target().data(), request.target().size());
    const auto question = target.find('?');
    in.path = std::string(target.substr(0, question));
    if (question != std::string_view::npos) in.query = parse_query(target.substr(question + 1));
    in.body = request.body();
    in.remote_ip = remote_;
    const auto header = [&](auto field) {
      const auto it = request.find(field);
      return it == request.end() ? std::string() : std::string(it->value());
    };
    in.authorization = header(http::field::authorization);
    in.host = header(http::field::host);
    in.origin = header(http::field::origin);
    in.sec_fetch_site = header("Sec-Fetch-Site");
    in.content_type = header(http::field::content_type);
    HttpResponse out = (*handler_)(in);
    const auto answer = [&]<typename Body>(typename Body::value_type body) {
      http::response<Body> response{static_cast<http::status>(out.status), request.version()};
      response.set(http::field::server, "lidaremu");
      response.set(http::field::content_type, out.content_type);
      response.keep_alive(request.keep_alive());
      response.body() = std::move(body);
      response.prepare_payload();
      send(std::move(response), !request.keep_alive(), out.shared_body);
    };
    if (out.shared_body) {
      answer.operator()<http::span_body<const char>>(
          {out.shared_body->data(), out.shared_body->size()});
    } else {
      answer.operator()<http::string_body>(std::move(out.body));
    }
  }

  // `keep`: what the body points into, held until the write completes.
  template <typename Body>
  void send(http::response<Body>&& response, bool close_after,
            std::shared_ptr<const std::string> keep = {}) {
    auto message = std::make_shared<http::response<Body>>(std::move(response));
    http::async_write(stream_, *message,
                      [self = shared_from_this(), message, keep = std::move(keep), close_after](
                          beast::error_code ec, std::size_t) {
                        if (ec || close_after) return self->close();
                        self->read_next();
                      });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<HttpServer::Handler> handler_;
  ServerLimits limits_;
  std::shared_ptr<ServerCounters> counters_;
  TableSlot slot_;
  std::string remote_;
};

}  // namespace

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 &&
               hex(text[i + 2]) >= 0) {
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::map<std::string, std::string> parse_query(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const auto eq = pair.find('=');
    out[percent_decode(pair.substr(0, eq))] =
        eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

HttpServer::HttpServer(asio::io_context& io, const std::string& address, std::uint16_t port,
                       Handler handler, ServerLimits limits)
    : acceptor_(open_acceptor(io, address, port, "web API")),
      handler_(std::make_shared<Handler>(std::move(handler))),
      limits_(limits),
      counters_(std::make_shared<ServerCounters>()),
      connections_(std::make_shared<ConnectionTable>()) {
  accept_next();
}

HttpServer::~HttpServer() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

std::uint16_t HttpServer::port() const { return acceptor_.local_endpoint().port(); }

void HttpServer::accept_next() {
  accept_connections(
      acceptor_, [this] { return connections_->open() >= limits_.max_connections; },
      [this](tcp::socket socket) {
        std::make_shared<HttpSession>(std::move(socket), handler_, limits_, counters_, connections_)
            ->start();
      },
      [this] {
        const bool made = connections_->make_room();
        counters_->evicted += made;
        return made;
      },
      [this] { ++counters_->refused; });
}

}  // namespace lidaremu::daemon
