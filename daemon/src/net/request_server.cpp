#include "lidaremu/daemon/net/request_server.hpp"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cstring>
#include <vector>

#include "lidaremu/daemon/net/browser_guard.hpp"
#include "lidaremu/daemon/net/tcp_accept.hpp"

namespace lidaremu::daemon {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

class RequestSession : public std::enable_shared_from_this<RequestSession>, public Evictable {
 public:
  RequestSession(tcp::socket socket, std::shared_ptr<const RequestFraming> framing,
                 ServerLimits limits, std::shared_ptr<ConnectionCounts> counts,
                 std::shared_ptr<ConnectionTable> table)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        framing_(std::move(framing)),
        limits_(limits),
        counts_(std::move(counts)),
        slot_(std::move(table)),
        buffer_(framing_->max_request_bytes) {
    boost::system::error_code ec;
    remote_ = socket_.remote_endpoint(ec).address().to_string();
  }

  void start() {
    slot_.attach(weak_from_this());
    next();
  }

  void evict() override { close(nullptr); }

 private:
  enum class Deadline { kNone, kIdle, kRequest, kWrite };

  [[nodiscard]] std::span<const std::uint8_t> buffered() const {
    return {buffer_.data(), buffered_};
  }

  // Serves a request already buffered (a client may pipeline them), else reads more.
  void next() {
    if (!socket_.is_open()) return;
    const auto size = framing_->request_size(buffered());
    if (!size || (*size == 0 && buffered_ == buffer_.size())) {
      return close(&ConnectionCounts::malformed);  // not the protocol, or over the limit
    }
    if (*size > 0) return answer(*size);
    // Waiting on its client, idle or part-way through a request: the connection that has waited
    // longest gives way when the port is full.
    if (buffered_ == 0) {
      slot_.waiting(true);
      arm(framing_->idle_closes ? Deadline::kIdle : Deadline::kNone, limits_.request_timeout_s);
    } else if (deadline_ != Deadline::kRequest) {
      // A request begun must be whole in time, however slowly its bytes come (slowloris).
      slot_.waiting(true);
      arm(Deadline::kRequest, limits_.request_timeout_s);
    }
    socket_.async_read_some(
        asio::buffer(buffer_.data() + buffered_, buffer_.size() - buffered_),
        [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
          if (ec) return self->close(nullptr);  // the client closed, or a deadline passed
          self->buffered_ += n;
          self->next();
        });
  }

  void answer(std::size_t size) {
    const auto reply = framing_->answer(buffered().first(size), remote_);
    buffered_ -= size;
    std::memmove(buffer_.data(), buffer_.data() + size, buffered_);
    if (!reply) return close(&ConnectionCounts::malformed);
    ++counts_->requests;
    reply_ = *reply;
    // Until the client takes the reply the connection waits on it: it may give way to a
    // newcomer, and is closed at the write deadline.
    slot_.waiting(true);
    arm(Deadline::kWrite, limits_.write_timeout_s);
    asio::async_write(socket_, asio::buffer(reply_),
                      [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                        if (ec) return self->close(nullptr);
                        self->arm(Deadline::kNone, 0);
                        self->next();
                      });
  }

  void arm(Deadline deadline, int seconds) {
    deadline_ = deadline;
    ++armed_;  // a wait that expired as it was replaced must not close the connection
    if (deadline == Deadline::kNone) {
      timer_.cancel();
      return;
    }
    timer_.expires_after(std::chrono::seconds(seconds));
    timer_.async_wait(
        [weak = weak_from_this(), deadline, armed = armed_](const boost::system::error_code& ec) {
          auto self = weak.lock();
          if (!self || ec || self->armed_ != armed) return;
          self->close(deadline == Deadline::kWrite     ? &ConnectionCounts::write_timeouts
                      : deadline == Deadline::kRequest ? &ConnectionCounts::request_timeouts
                                                       : nullptr);  // idle: an ordinary end
        });
  }

  // Closes once, counting why (`reason` null: the client's doing, or an idle end).
  void close(std::uint64_t ConnectionCounts::*reason) {
    if (!socket_.is_open()) return;
    if (reason != nullptr) ++(*counts_.*reason);
    boost::system::error_code ignored;
    deadline_ = Deadline::kNone;
    timer_.cancel();
    socket_.close(ignored);
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  Deadline deadline_ = Deadline::kNone;
  std::uint64_t armed_ = 0;
  std::shared_ptr<const RequestFraming> framing_;
  ServerLimits limits_;
  std::shared_ptr<ConnectionCounts> counts_;
  TableSlot slot_;
  std::vector<std::uint8_t> buffer_;
  std::size_t buffered_ = 0;
  std::string reply_;
  std::string remote_;
};

}  // namespace

RequestServer::RequestServer(asio::io_context& io, const std::string& address, std::uint16_t port,
                             RequestFraming framing, ServerLimits limits)
    : acceptor_(open_acceptor(io, address, port, framing.name.c_str())),
      framing_(std::make_shared<const RequestFraming>(std::move(framing))),
      limits_(limits),
      counts_(std::make_shared<ConnectionCounts>()),
      connections_(std::make_shared<ConnectionTable>()) {
  accept_next();
}

RequestServer::~RequestServer() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

std::uint16_t RequestServer::port() const { return acceptor_.local_endpoint().port(); }

void RequestServer::accept_next() {
  accept_connections(
      acceptor_, [this] { return connections_->open() >= limits_.max_connections; },
      [this](tcp::socket socket) {
        std::make_shared<RequestSession>(std::move(socket), framing_, limits_, counts_,
                                         connections_)
            ->start();
      },
      [this] {
        const bool made = connections_->make_room();
        counts_->evicted += made ? 1 : 0;
        return made;
      },
      [this] { ++counts_->refused; });
}

RequestFraming line_framing(
    std::size_t max_line_bytes,
    std::function<std::string(const std::string& line, const std::string& remote)> handler) {
  RequestFraming f;
  f.name = "text API";
  f.max_request_bytes = max_line_bytes;
  f.idle_closes = true;
  f.request_size = [](std::span<const std::uint8_t> buffered) -> std::optional<std::size_t> {
    const auto end = std::find(buffered.begin(), buffered.end(), std::uint8_t{'\n'});
    return end == buffered.end() ? 0 : static_cast<std::size_t>(end - buffered.begin()) + 1;
  };
  f.answer = [handler = std::move(handler)](
                 std::span<const std::uint8_t> request,
                 const std::string& remote) -> std::optional<std::string> {
    std::string line(request.begin(), request.end());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    // A browser can POST to this port; its body's lines would run as commands. HTTP ends the
    // connection before any of its lines does.
    if (looks_like_http(line)) return std::nullopt;
    return handler(line, remote) + "\n";
  };
  return f;
}

}  // namespace lidaremu::daemon
