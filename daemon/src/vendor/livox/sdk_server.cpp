#include "lidaremu/daemon/vendor/livox/sdk_server.hpp"

#include <array>
#include <atomic>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <stdexcept>

#include "lidaremu/core/livox.hpp"

namespace lidaremu::daemon {
namespace asio = boost::asio;
using asio::ip::udp;

namespace {

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
    std::array<std::uint8_t, 2048> in{};
    std::array<std::uint8_t, core::livox::kMaxCommandFrame> out{};
  };
  Port discovery;
  Port command;
  std::string serial;
  // What discovery says of the unit: the command port is the one bound (--api-port may move it).
  core::livox::UnitInfo unit;
  std::atomic<std::uint64_t> answered{0}, malformed{0}, not_requests{0}, unknown{0};

  State(udp::socket d, udp::socket c, std::string s, std::uint32_t address)
      : discovery{std::move(d), {}, {}, {}},
        command{std::move(c), {}, {}, {}},
        serial(std::move(s)),
        unit{.serial = serial,
             .address = address,
             .command_port = command.socket.local_endpoint().port()} {}
};

namespace {

void receive_next(const std::shared_ptr<LivoxSdkServer::State>& state,
                  LivoxSdkServer::State::Port& port);

}  // namespace

LivoxSdkServer::LivoxSdkServer(asio::io_context& io, const std::string& address,
                               std::uint16_t discovery_port, std::uint16_t command_port,
                               std::string serial) {
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address_v4(address, ec);
  if (ec) throw std::runtime_error("Livox: '" + address + "' is not an IPv4 address");
  // Broadcasts arrive at sockets bound to every address. None reaches a loopback address: there
  // a host asks the unit's own address, and binding it keeps several units' discoveries apart
  // (a unicast datagram goes to the most specifically bound socket).
  const auto discovery_ip = ip.is_loopback() ? ip : asio::ip::address_v4::any();
  state_ = std::make_shared<State>(open_udp(io, discovery_ip, discovery_port, "discovery"),
                                   open_udp(io, ip, command_port, "command port"),
                                   std::move(serial), ip.to_uint());
  receive_next(state_, state_->discovery);
  receive_next(state_, state_->command);
}

LivoxSdkServer::~LivoxSdkServer() {
  // Closed on the io thread that runs the receives; the state lives until they have ended.
  asio::post(state_->command.socket.get_executor(), [state = state_] {
    boost::system::error_code ignored;
    state->discovery.socket.close(ignored);
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
  return {state_->answered.load(), state_->malformed.load(), state_->not_requests.load(),
          state_->unknown.load()};
}

namespace {

void receive_next(const std::shared_ptr<LivoxSdkServer::State>& state,
                  LivoxSdkServer::State::Port& port) {
  port.socket.async_receive_from(
      asio::buffer(port.in), port.from,
      [state, &port](const boost::system::error_code& ec, std::size_t size) {
        if (ec == asio::error::operation_aborted || !port.socket.is_open()) return;
        if (!ec) {
          const auto answer =
              core::livox::answer_command(std::span(port.in).first(size), state->unit, port.out);
          switch (answer.outcome) {
            case core::livox::CommandOutcome::kAnswered:
              ++state->answered;
              break;
            case core::livox::CommandOutcome::kMalformed:
              ++state->malformed;
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
            port.socket.send_to(asio::buffer(port.out.data(), answer.size), port.from, 0, ignored);
          }
        }
        receive_next(state, port);
      });
}

}  // namespace

}  // namespace lidaremu::daemon
