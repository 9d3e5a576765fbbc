#include "lidaremu/daemon/vendor/livox/sdk_server.hpp"

#include <linux/sock_diag.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <stdexcept>

#include "lidaremu/core/livox.hpp"
#include "lidaremu/daemon/ops/log_marks.hpp"

namespace lidaremu::daemon {
namespace asio = boost::asio;
using asio::ip::udp;

namespace {

// Datagrams the kernel dropped on this socket (its receive buffer full): SO_MEMINFO's drops,
// the socket's own count (Linux 4.x and later). 0 for a closed socket.
std::uint64_t socket_drops(udp::socket& socket) {
  if (!socket.is_open()) return 0;
  std::array<std::uint32_t, SK_MEMINFO_VARS> info{};
  socklen_t size = sizeof info;
  if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_MEMINFO, info.data(), &size) != 0 ||
      size < sizeof(std::uint32_t) * (SK_MEMINFO_DROPS + 1)) {
    return 0;
  }
  return info[SK_MEMINFO_DROPS];
}

udp::socket open_udp(asio::io_context& io, const asio::ip::address& ip, std::uint16_t port,
                     const char* what) {
  udp::socket socket(io);
  boost::system::error_code ec;
  const udp::endpoint endpoint(ip, port);
  socket.open(endpoint.protocol(), ec);
  // Several emulated units on one host each hear a broadcast.
  if (!ec) socket.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) socket.bind(endpoint, ec);
  if (ec) {
    throw std::runtime_error(std::string("Livox ") + what + ": cannot bind " + ip.to_string() +
                             ":" + std::to_string(port) + ": " + ec.message());
  }
  return socket;
}

}  // namespace

struct LivoxSdkServer::State {
  struct Port {
    udp::socket socket;
    udp::endpoint from;
    // One byte more than the largest frame: a datagram that fills it is over the limit (the
    // kernel cut it to fit), refused unread.
    std::array<std::uint8_t, core::livox::kMaxCommandFrame + 1> in{};
    std::array<std::uint8_t, core::livox::kMaxCommandFrame> out{};
    const char* name;  // in the log
  };
  Port discovery;
  // Livox SDK2 finds a unit by broadcasting to 255.255.255.255: a socket bound there hears it
  // (with every other unit's on the host, each answering for itself from its own discovery
  // socket), while a unicast to another unit never reaches it. Closed when discovery itself is
  // bound to every address.
  Port broadcast;
  Port command;
  std::string serial;
  // What the unit says of itself: the command port is the one bound (--api-port may move it);
  // its streams' ends as the host last set them. Read and changed on the io thread only.
  core::livox::UnitState unit;
  LivoxApply apply;
  std::atomic<std::uint64_t> answered{0}, malformed{0}, not_requests{0}, unknown{0},
      trailing_bytes{0}, oversized{0};
  std::uint64_t refused = 0;  // io thread: the three refusals together, for the log's rate

  State(udp::socket d, udp::socket b, udp::socket c, std::string s, std::uint32_t address,
        core::livox::HostPorts points, core::livox::HostPorts imu, LivoxApply a)
      : discovery{std::move(d), {}, {}, {}, "discovery"},
        broadcast{std::move(b), {}, {}, {}, "discovery (broadcast)"},
        command{std::move(c), {}, {}, {}, "command"},
        serial(std::move(s)),
        unit{.serial = serial,
             .address = address,
             .command_port = command.socket.local_endpoint().port(),
             .points = points,
             .imu = imu},
        apply(std::move(a)) {}
};

namespace {

// Answers from `reply` (the port's own socket, or the unit's discovery socket for a broadcast).
void receive_next(const std::shared_ptr<LivoxSdkServer::State>& state,
                  LivoxSdkServer::State::Port& port, udp::socket& reply);

}  // namespace

LivoxSdkServer::LivoxSdkServer(asio::io_context& io, const std::string& address,
                               std::uint16_t discovery_port, std::uint16_t command_port,
                               std::string serial, core::livox::HostPorts points,
                               core::livox::HostPorts imu, LivoxApply apply) {
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address_v4(address, ec);
  if (ec) throw std::runtime_error("Livox: '" + address + "' is not an IPv4 address");
  // Discovery on the unit's own address (a unicast to it, its answers leave from it) and on the
  // limited broadcast address, the same port (broadcasts, on loopback too: a host socket bound
  // to 127.0.0.1 sends them out on lo). Bound to every address instead when the unit has none.
  auto discovery = open_udp(io, ip, discovery_port, "discovery");
  udp::socket broadcast(io);
  if (!ip.is_unspecified()) {
    broadcast = open_udp(io, asio::ip::address_v4::broadcast(), discovery.local_endpoint().port(),
                         "discovery (broadcast)");
  }
  state_ = std::make_shared<State>(std::move(discovery), std::move(broadcast),
                                   open_udp(io, ip, command_port, "command port"),
                                   std::move(serial), ip.to_uint(), points, imu, std::move(apply));
  receive_next(state_, state_->discovery, state_->discovery.socket);
  if (state_->broadcast.socket.is_open()) {
    receive_next(state_, state_->broadcast, state_->discovery.socket);
  }
  receive_next(state_, state_->command, state_->command.socket);
}

LivoxSdkServer::~LivoxSdkServer() {
  // Closed on the io thread that runs the receives; the state lives until they have ended.
  asio::post(state_->command.socket.get_executor(), [state = state_] {
    boost::system::error_code ignored;
    state->discovery.socket.close(ignored);
    state->broadcast.socket.close(ignored);
    state->command.socket.close(ignored);
  });
}

std::uint16_t LivoxSdkServer::discovery_port() const {
  return state_->discovery.socket.local_endpoint().port();
}
std::uint16_t LivoxSdkServer::command_port() const {
  return state_->command.socket.local_endpoint().port();
}

LivoxSdkCounts LivoxSdkServer::counts() const {
  State& s = *state_;  // the sockets: read on the io thread, as they are used
  return {.answered = s.answered.load(),
          .malformed = s.malformed.load(),
          .not_requests = s.not_requests.load(),
          .unknown = s.unknown.load(),
          .trailing_bytes = s.trailing_bytes.load(),
          .oversized = s.oversized.load(),
          .kernel_drops = socket_drops(s.discovery.socket) + socket_drops(s.broadcast.socket) +
                          socket_drops(s.command.socket)};
}

namespace {

void receive_next(const std::shared_ptr<LivoxSdkServer::State>& state,
                  LivoxSdkServer::State::Port& port, udp::socket& reply) {
  port.socket.async_receive_from(
      asio::buffer(port.in), port.from,
      [state, &port, &reply](const boost::system::error_code& ec, std::size_t size) {
        if (ec == asio::error::operation_aborted || !port.socket.is_open()) return;
        if (!ec) {
          state->unit.time_ns =
              static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count());
          // A host end the host sets is the unit's once the sensor has taken it.
          const auto take = [&state, &port](const core::livox::WorkModeChange& change) {
            if (!state->apply || !state->apply(change, port.from.address().to_string())) {
              return false;
            }
            if (change.state_info) state->unit.state_info = *change.state_info;
            if (change.points) state->unit.points = *change.points;
            if (change.imu) state->unit.imu = *change.imu;
            return true;
          };
          // Refusals, logged at the 1st, 2nd, 3rd, 10th, 100th...: a flood never floods the log.
          const auto refuse = [&](std::atomic<std::uint64_t>& count, const char* why) {
            ++count;
            if (worth_logging(++state->refused)) {
              spdlog::warn(
                  "Livox unit {}: {} port: datagram of {} bytes from {}:{} refused: {} "
                  "({} refused so far)",
                  state->serial, port.name, size, port.from.address().to_string(), port.from.port(),
                  why, state->refused);
            }
          };
          if (size > core::livox::kMaxCommandFrame) {
            refuse(state->oversized, "over the largest frame (1,400 bytes)");
            return receive_next(state, port, reply);
          }
          const auto answer = core::livox::answer_command(std::span(port.in).first(size),
                                                          state->unit, port.out, take);
          switch (answer.outcome) {
            case core::livox::CommandOutcome::kAnswered:
              ++state->answered;
              break;
            case core::livox::CommandOutcome::kMalformed:
              refuse(state->malformed,
                     "not a frame Livox SDK2 reads (size, start byte, version, length or CRC)");
              break;
            case core::livox::CommandOutcome::kTrailingBytes:
              refuse(state->trailing_bytes, "bytes past the frame's length");
              break;
            case core::livox::CommandOutcome::kNotARequest:
              ++state->not_requests;
              break;
            case core::livox::CommandOutcome::kUnknownCommand:
              ++state->unknown;
              break;
          }
          if (answer.size > 0) {
            boost::system::error_code ignored;  // UDP: a lost answer is the host's to repeat
            reply.send_to(asio::buffer(port.out.data(), answer.size), port.from, 0, ignored);
          }
        }
        receive_next(state, port, reply);
      });
}

}  // namespace

}  // namespace lidaremu::daemon
