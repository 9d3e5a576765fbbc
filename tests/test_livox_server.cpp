// The Livox unit's UDP side channels against real sockets on loopback: a host's discovery and
// commands answered from the port they arrived at, malformed frames counted and unanswered.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
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
  // Bound to `address` (any free port), able to broadcast as Livox SDK2 does.
  explicit Host(const char* address = "127.0.0.1")
      : socket_(io_, udp::endpoint(asio::ip::make_address_v4(address), 0)) {
    socket_.non_blocking(true);
    socket_.set_option(asio::socket_base::broadcast(true));
  }
  void send(std::span<const std::uint8_t> bytes, std::uint16_t port, const char* to = "127.0.0.1") {
    socket_.send_to(asio::buffer(bytes.data(), bytes.size()),
                    udp::endpoint(asio::ip::make_address_v4(to), port));
  }
  struct Datagram {
    std::vector<std::uint8_t> bytes;
    udp::endpoint from;
  };
  std::optional<Datagram> receive_from(
      std::chrono::milliseconds wait = std::chrono::milliseconds(500)) {
    const auto until = std::chrono::steady_clock::now() + wait;
    std::vector<std::uint8_t> in(2048);
    udp::endpoint from;
    while (std::chrono::steady_clock::now() < until) {
      boost::system::error_code ec;
      const std::size_t n = socket_.receive_from(asio::buffer(in), from, 0, ec);
      if (!ec) {
        in.resize(n);
        return Datagram{in, from};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return std::nullopt;
  }
  // The datagram and the port it came from; nothing within the wait.
  std::optional<std::pair<std::vector<std::uint8_t>, std::uint16_t>> receive(
      std::chrono::milliseconds wait = std::chrono::milliseconds(500)) {
    auto d = receive_from(wait);
    if (!d) return std::nullopt;
    return std::make_pair(std::move(d->bytes), d->from.port());
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

// What a discovery answer says: the unit's address and command port (DetectionData).
struct Found {
  std::string address;
  std::uint16_t command_port = 0;
  std::string from;  // where the answer came from
};
std::optional<Found> found_in(const Host::Datagram& d) {
  core::livox::CommandView view;
  if (core::livox::read_command(d.bytes, view) != core::livox::CommandError::kNone ||
      view.header.command_id != 0x0000 || view.data.size() != 24) {
    return std::nullopt;
  }
  return Found{std::to_string(view.data[18]) + "." + std::to_string(view.data[19]) + "." +
                   std::to_string(view.data[20]) + "." + std::to_string(view.data[21]),
               static_cast<std::uint16_t>(view.data[22] | view.data[23] << 8),
               d.from.address().to_string() + ":" + std::to_string(d.from.port())};
}

// Runs `command` (a shell line) and says whether it succeeded.
bool run(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;  // NOLINT(cert-env33-c)
}

}  // namespace

TEST_CASE("Livox SDK2's broadcast discovery on loopback: every unit answers for itself",
          "[daemon][livox][discovery]") {
  // SDK2 broadcasts 0x0000 to 255.255.255.255:56000 from the host address of its config; on
  // loopback the datagram leaves on lo and reaches only sockets bound to every address or to
  // the broadcast address, never one bound to a unit's 127.0.0.x.
  asio::io_context io;
  std::optional<daemon::LivoxSdkServer> first, second;
  first.emplace(io, "127.0.0.41", 0, 0, "47MDL9C0020141");
  const std::uint16_t port = first->discovery_port();
  second.emplace(io, "127.0.0.42", port, 0, "47MDL9C0020142");  // another unit, the same port
  std::thread runner([&io] {
    const auto work = asio::make_work_guard(io);
    io.run();
  });
  Host host;
  host.send(request(0x0000, 1), port, "255.255.255.255");
  std::vector<Found> answers;
  while (auto d = host.receive_from()) {
    auto f = found_in(*d);
    REQUIRE(f);
    answers.push_back(*f);
  }
  std::sort(answers.begin(), answers.end(),
            [](const Found& a, const Found& b) { return a.address < b.address; });
  REQUIRE(answers.size() == 2);  // each unit once
  CHECK(answers[0].address == "127.0.0.41");
  CHECK(answers[0].from == "127.0.0.41:" + std::to_string(port));  // from its own address
  CHECK(answers[0].command_port == first->command_port());
  CHECK(answers[1].address == "127.0.0.42");
  CHECK(answers[1].from == "127.0.0.42:" + std::to_string(port));
  CHECK(answers[1].command_port == second->command_port());
  // A unicast to one unit: that unit alone answers.
  host.send(request(0x0000, 2), port, "127.0.0.42");
  const auto d = host.receive_from();
  REQUIRE(d);
  CHECK(found_in(*d)->address == "127.0.0.42");
  CHECK_FALSE(host.receive_from(std::chrono::milliseconds(200)));
  first.reset();
  second.reset();
  io.stop();
  runner.join();
}

TEST_CASE("Livox SDK2's broadcast discovery across a veth pair, the host in another namespace",
          "[daemon][livox][discovery][netns]") {
  // As a daemon in a container on a bridge, or on another machine: the host's namespace has
  // only its end of a veth pair (10.213.x.1); the unit (10.213.x.2) is on the other end, here.
  if (::geteuid() != 0 || !run("ip netns list")) {
    WARN("needs root and ip netns (CI has both): not run");
    return;
  }
  const std::string id = std::to_string(::getpid() % 200 + 20);
  const std::string ns = "lidaremu-host-" + id, outer = "lre-u" + id, inner = "lre-h" + id;
  const std::string unit_ip = "10.213." + id + ".2", host_ip = "10.213." + id + ".1";
  run("ip netns del " + ns);
  run("ip link del " + outer);
  REQUIRE(run("ip netns add " + ns));
  REQUIRE(run("ip link add " + outer + " type veth peer name " + inner));
  REQUIRE(run("ip link set " + inner + " netns " + ns));
  REQUIRE(run("ip addr add " + unit_ip + "/24 dev " + outer));
  REQUIRE(run("ip link set " + outer + " up"));
  REQUIRE(run("ip netns exec " + ns + " ip addr add " + host_ip + "/24 dev " + inner));
  REQUIRE(run("ip netns exec " + ns + " ip link set " + inner + " up"));
  REQUIRE(run("ip netns exec " + ns + " ip link set lo up"));
  asio::io_context io;
  std::optional<daemon::LivoxSdkServer> unit;
  unit.emplace(io, unit_ip, 0, 0, "47MDL9C0020143");
  std::thread runner([&io] {
    const auto work = asio::make_work_guard(io);
    io.run();
  });
  const std::uint16_t port = unit->discovery_port();
  // The host: a thread in the other namespace (a network namespace is a thread's own).
  std::vector<Found> answers;
  std::string failure;
  std::thread host_thread([&] {
    const int fd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
      failure = "cannot enter " + ns;
      if (fd >= 0) ::close(fd);
      return;
    }
    ::close(fd);
    Host host(host_ip.c_str());
    // The link may take a moment to carry traffic: SDK2 repeats its broadcast every second.
    for (int attempt = 0; attempt < 20 && answers.empty(); ++attempt) {
      host.send(request(0x0000, static_cast<std::uint32_t>(attempt)), port, "255.255.255.255");
      while (auto d = host.receive_from(std::chrono::milliseconds(250))) {
        if (auto f = found_in(*d)) answers.push_back(*f);
      }
    }
  });
  host_thread.join();
  unit.reset();
  io.stop();
  runner.join();
  run("ip netns del " + ns);  // takes its veth end, and so the pair, with it
  run("ip link del " + outer);
  REQUIRE(failure.empty());
  REQUIRE_FALSE(answers.empty());
  CHECK(answers[0].address == unit_ip);
  CHECK(answers[0].from == unit_ip + ":" + std::to_string(port));
  CHECK(answers[0].command_port != 0);
}

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
