#pragma once
// What the daemon's TCP servers (HTTP APIs, TCP 7501, the Foxglove WebSocket) share: opening an
// acceptor with an actionable error, counting open connections, and the accept loop that
// refuses connections beyond the limit.
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <stdexcept>
#include <string>

namespace lidaremu::daemon {
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

// Accepts connections one after another for as long as the acceptor is open; beyond
// `max_open` connections a new one is closed at once (`refuse` counts it). `open` is read here,
// counted by each session's ConnectionSlot.
template <typename Start, typename Refuse>
void accept_connections(tcp::acceptor& acceptor, const int& open, int max_open, Start start,
                        Refuse refuse) {
  acceptor.async_accept([&acceptor, &open, max_open, start, refuse](boost::system::error_code ec,
                                                                    tcp::socket socket) {
    // The acceptor may be gone (its server destroyed): aborted handlers touch nothing.
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (!ec) {
      if (open >= max_open) {
        refuse();
      } else {
        start(std::move(socket));
      }
    }
    accept_connections(acceptor, open, max_open, start, refuse);
  });
}

}  // namespace tcp_detail
using tcp_detail::accept_connections;
using tcp_detail::ConnectionSlot;
using tcp_detail::open_acceptor;
}  // namespace lidaremu::daemon
