#pragma once
// What the daemon's TCP servers (HTTP APIs, TCP 7501, the Foxglove WebSocket) share: opening an
// acceptor with an actionable error, counting open connections, and the accept loop that
// refuses connections beyond the limit.
#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace lidaremu::daemon {

// A connection the server may close to make room: one waiting for its client's next request.
class Evictable {
 public:
  virtual ~Evictable() = default;
  virtual void evict() = 0;
};

// The connections of a request/reply server (io thread only). Slow clients (slowloris: a header
// byte every few seconds) and idle ones hold a connection while they wait; when every slot is
// taken, the connection that has waited longest for a request is closed for the newcomer, so a
// client that asks at once (a health probe) is always served.
class ConnectionTable {
 public:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::weak_ptr<Evictable> connection;
    bool waiting = true;  // for the client's request (not handling or answering one)
    Clock::time_point since = Clock::now();
  };
  [[nodiscard]] int open() const { return static_cast<int>(entries_.size()); }
  std::shared_ptr<Entry> add() { return entries_.emplace_back(std::make_shared<Entry>()); }
  void remove(const std::shared_ptr<Entry>& entry) { std::erase(entries_, entry); }
  // Closes the connection waiting longest; false when every one is busy with a request.
  bool make_room() {
    const auto oldest =
        std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
          return a->waiting != b->waiting ? a->waiting : a->since < b->since;
        });
    if (oldest == entries_.end() || !(*oldest)->waiting) return false;
    const auto victim = (*oldest)->connection.lock();
    entries_.erase(oldest);
    if (victim) victim->evict();
    ++evicted_;
    return true;
  }
  [[nodiscard]] std::uint64_t evicted() const { return evicted_; }

 private:
  std::vector<std::shared_ptr<Entry>> entries_;
  std::uint64_t evicted_ = 0;
};

// A session's place in its server's ConnectionTable, for the session's life.
class TableSlot {
 public:
  explicit TableSlot(std::shared_ptr<ConnectionTable> table)
      : table_(std::move(table)), entry_(table_->add()) {}
  ~TableSlot() { table_->remove(entry_); }
  TableSlot(const TableSlot&) = delete;
  TableSlot& operator=(const TableSlot&) = delete;
  void attach(std::weak_ptr<Evictable> connection) { entry_->connection = std::move(connection); }
  // Waiting for a request from now on (true), or busy with one (false).
  void waiting(bool waiting) {
    entry_->waiting = waiting;
    entry_->since = ConnectionTable::Clock::now();
  }

 private:
  std::shared_ptr<ConnectionTable> table_;
  std::shared_ptr<ConnectionTable::Entry> entry_;
};

namespace tcp_detail {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Binds and listens at once; throws std::runtime_error naming `what`, the address and a hint.
inline tcp::acceptor open_acceptor(asio::io_context& io, const std::string& address,
                                   std::uint16_t port, const char* what) {
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(address, ec);
  if (ec) throw std::runtime_error(std::string(what) + ": '" + address + "' is not an address");
  tcp::acceptor acceptor(io);
  const tcp::endpoint endpoint(ip, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    std::string hint;
    if (ec == asio::error::access_denied) {
      hint =
          " (ports below 1024 need root or CAP_NET_BIND_SERVICE: run as root, grant it with "
          "'setcap cap_net_bind_service=+ep lidaremud', or pick another port)";
    } else if (ec == asio::error::address_in_use) {
      hint = " (another process listens there)";
    } else if (ec == boost::system::errc::address_not_available) {
      hint = " (no interface has that address)";
    }
    throw std::runtime_error(std::string(what) + ": cannot listen on " + address + ":" +
                             std::to_string(port) + ": " + ec.message() + hint);
  }
  return acceptor;
}

// Closes the connection count when the last handle to a connection goes.
struct ConnectionSlot {
  std::shared_ptr<int> open;
  explicit ConnectionSlot(std::shared_ptr<int> count) : open(std::move(count)) { ++*open; }
  ~ConnectionSlot() { --*open; }
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;
};

// Accepts connections one after another for as long as the acceptor is open. When `full()`,
// `make_room()` may close one for the newcomer; otherwise the new one is closed at once
// (`refuse` counts it).
template <typename Full, typename Start, typename MakeRoom, typename Refuse>
void accept_connections(tcp::acceptor& acceptor, Full full, Start start, MakeRoom make_room,
                        Refuse refuse) {
  acceptor.async_accept([&acceptor, full, start, make_room, refuse](boost::system::error_code ec,
                                                                    tcp::socket socket) {
    // The acceptor may be gone (its server destroyed): aborted handlers touch nothing.
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (!ec) {
      if (full() && !make_room()) {
        refuse();
      } else {
        start(std::move(socket));
      }
    }
    accept_connections(acceptor, full, start, make_room, refuse);
  });
}

}  // namespace tcp_detail
using tcp_detail::accept_connections;
using tcp_detail::ConnectionSlot;
using tcp_detail::open_acceptor;
}  // namespace lidaremu::daemon
