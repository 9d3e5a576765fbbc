// The Livox unit's UDP side channels against real sockets on loopback: a host's discovery and
// commands answered from the port they arrived at, malformed frames counted and unanswered.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "lidaremu/core/livox.hpp"
#include "lidaremu/daemon/vendor/livox/sdk_server.hpp"

using namespace lidaremu;
namespace asio = boost::asio;
using asio::ip::udp;

namespace {

// A host: sends a datagram, waits up to half a second for one back.
class Host {
 public:
  Host() : socket_(io_, udp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0)) {
    socket_.non_blocking(true);
  }
  void send(std::span<const std::uint8_t> bytes, std::uint16_t port) {
    socket_.send_to(asio::buffer(bytes.data(), bytes.size()),
                    udp::endpoint(asio::ip::make_address_v4("127.0.0.1"), port));
  }
  // The datagram and the port it came from; nothing within the wait.
  std::optional<std::pair<std::vector<std::uint8_t>, std::uint16_t>> receive(
      std::chrono::milliseconds wait = std::chrono::milliseconds(500)) {
    const auto until = std::chrono::steady_clock::now() + wait;
    std::vector<std::uint8_t> in(2048);
    udp::endpoint from;
    while (std::chrono::steady_clock::now() < until) {
      boost::system::error_code ec;
      const std::size_t n = socket_.receive_from(asio::buffer(in), from, 0, ec);
      if (!ec) {
        in.resize(n);
        return std::make_pair(in, from.port());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return std::nullopt;
  }

 private:
  asio::io_context io_;
  udp::socket socket_;
};

std::vector<std::uint8_t> request(std::uint16_t command, std::uint32_t sequence,
                                  std::span<const std::uint8_t> data = {}) {
  std::vector<std::uint8_t> frame(core::livox::kMaxCommandFrame);
  frame.resize(
      core::livox::write_command(frame, {.sequence = sequence, .command_id = command}, data));
  return frame;
}

}  // namespace

TEST_CASE("Livox side channels: discovery and commands answered over UDP, the rest counted",
          "[daemon][livox]") {
  asio::io_context io;
  std::optional<daemon::LivoxSdkServer> server;
  server.emplace(io, "127.0.0.1", 0, 0, "47MDL9C0020123");
  std::thread runner([&io] {
    const auto work = asio::make_work_guard(io);
    io.run();
  });
  const std::uint16_t discovery = server->discovery_port();
  const std::uint16_t command = server->command_port();
  REQUIRE(discovery != command);
  Host host;

  // Discovery: the DetectionData, from the discovery port.
  host.send(request(0x0000, 5), discovery);
  auto answer = host.receive();
  REQUIRE(answer);
  CHECK(answer->second == discovery);
  core::livox::CommandView view;
  REQUIRE(core::livox::read_command(answer->first, view) == core::livox::CommandError::kNone);
  CHECK(view.header.sequence == 5);
  CHECK(view.header.type == core::livox::CommandType::kAck);
  REQUIRE(view.data.size() == 24);
  CHECK(view.data[1] == 9);
  CHECK(std::vector<int>(view.data.begin() + 18, view.data.begin() + 22) ==
        std::vector<int>{127, 0, 0, 1});
  // The command port it states is the one it listens on (not always 56100: --api-port).
  CHECK((view.data[22] | view.data[23] << 8) == command);
  // A configuration on the command port: accepted, from the command port.
  const std::array<std::uint8_t, 4> no_keys{0, 0, 0, 0};
  host.send(request(0x0100, 6, no_keys), command);
  answer = host.receive();
  REQUIRE(answer);
  CHECK(answer->second == command);
  REQUIRE(core::livox::read_command(answer->first, view) == core::livox::CommandError::kNone);
  CHECK(view.header.command_id == 0x0100);
  CHECK(view.header.sequence == 6);
  // Unanswered and counted: a corrupted frame, garbage, an acknowledgement, an unknown command.
  auto corrupt = request(0x0000, 7);
  corrupt[20] ^= 0xFF;  // a frame without data states CRC 0
  host.send(corrupt, discovery);
  const std::array<std::uint8_t, 3> garbage{1, 2, 3};
  host.send(garbage, command);
  std::vector<std::uint8_t> ack(core::livox::kMaxCommandFrame);
  ack.resize(core::livox::write_command(
      ack, {.command_id = 0x0100, .type = core::livox::CommandType::kAck}, {}));
  host.send(ack, command);
  host.send(request(0x0200, 8), command);
  CHECK_FALSE(host.receive(std::chrono::milliseconds(200)));
  // Still answering after all that.
  host.send(request(0x0000, 9), discovery);
  REQUIRE(host.receive());
  const auto counts = server->counts();
  CHECK(counts.answered == 3);
  CHECK(counts.malformed == 2);
  CHECK(counts.not_requests == 1);
  CHECK(counts.unknown == 1);

  // Gone while the io thread runs: its ports close, nothing answers.
  server.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  host.send(request(0x0000, 10), discovery);
  CHECK_FALSE(host.receive(std::chrono::milliseconds(200)));
  io.stop();
  runner.join();
  CHECK_THROWS_WITH(daemon::LivoxSdkServer(io, "no-address", 0, 0, "x"),
                    Catch::Contains("not an IPv4 address"));
}
