// The units' side channels under hostile or careless clients (issue 33): TCP request/reply ports
// that a client who never reads must not lock, Livox SDK ports flooded or fed what no host sends,
// streams pointed anywhere. Each case is what the adversarial review tried, run against the real
// daemon over loopback. (Reloads, memory and disk: test_host_limits.cpp.)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/ip/address_v4.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "daemon_process.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/hesai/ptc.hpp"
#include "lidaremu/core/livox.hpp"
#include "lidaremu/core/pcap.hpp"
#include "lidaremu/daemon/net/destination_policy.hpp"
#include "raw_connection.hpp"
#include "round_trip.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;
using test::RawConnection;

namespace {

std::string repeated(const std::string& request, int times) {
  std::string all;
  for (int i = 0; i < times; ++i) all += request;
  return all;
}

std::string ptc_request(std::uint8_t command) {
  const auto bytes = core::hesai::ptc::frame(command, 0, {});
  return {bytes.begin(), bytes.end()};
}

// A whole PTC response: its 8-byte header and the payload it announces.
bool whole_ptc_response(const std::string& got) {
  if (got.size() < core::hesai::ptc::kHeaderSize) return false;
  const auto byte = [&](std::size_t i) { return static_cast<std::uint32_t>(std::uint8_t(got[i])); };
  const std::uint32_t payload = byte(4) << 24 | byte(5) << 16 | byte(6) << 8 | byte(7);
  return got.size() >= core::hesai::ptc::kHeaderSize + payload;
}

// Clients that pipeline requests into a tiny receive window and never read: the unit's replies
// pile up in its send buffer until its writes cannot complete.
std::vector<std::unique_ptr<RawConnection>> non_readers(const std::string& ip, std::uint16_t port,
                                                        const std::string& requests, int count) {
  std::vector<std::unique_ptr<RawConnection>> clients;
  for (int i = 0; i < count; ++i) {
    clients.push_back(std::make_unique<RawConnection>(ip, port, 1024));
    clients.back()->send_some(requests);
  }
  return clients;
}

struct ProbeTally {
  int probes = 0;
  int answered = 0;
};

// A newcomer every 250 ms for `span`, each on a fresh connection: answered within a second?
template <typename Ask>
ProbeTally probe(std::chrono::milliseconds span, Ask ask) {
  ProbeTally tally;
  const auto until = std::chrono::steady_clock::now() + span;
  while (std::chrono::steady_clock::now() < until) {
    ++tally.probes;
    tally.answered += ask() ? 1 : 0;
    std::this_thread::sleep_for(250ms);
  }
  return tally;
}

}  // namespace

TEST_CASE("Clients that never read their replies never lock PTC or TCP 7501", "[e2e][hostile]") {
  // The review: 24 clients pipelining requests on PTC (9347) or TCP 7501 without reading took
  // their sessions for good (the write had no deadline, and a session writing could not give way);
  // 0 of 237 newcomers were answered in 60 s. Now a session whose reply the client does not take
  // is waiting on its client, so it gives way to a newcomer, and is closed when a reply is not
  // taken within the write deadline (5 s); both are counted.
  namespace ptc = core::hesai::ptc;
  constexpr int kNonReaders = 40;  // more than the 32 connections a port holds
  test::UdpReceiver hesai_data, ouster_data;
  test::DaemonProcess hesai({"--model", "pandar-xt32", "--hits", "udp://127.0.0.1:0", "--out",
                             hesai_data.url(), "--sensor-ip", "127.0.0.21", "--physics", "ideal",
                             "--foxglove", "off"});
  test::DaemonProcess ouster({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--out",
                              ouster_data.url(), "--sensor-ip", "127.0.0.22", "--api-port",
                              test::api_port(), "--physics", "ideal", "--foxglove", "off"});
  REQUIRE(hesai.wait_for_output("PTC tcp", 5s));
  REQUIRE(ouster.wait_for_output("tcp 7501", 5s));

  const auto ptc_hogs = non_readers("127.0.0.21", 9347,
                                    repeated(ptc_request(ptc::kGetCalibration), 4000), kNonReaders);
  const auto text_hogs =
      non_readers("127.0.0.22", 7501, repeated("get_beam_intrinsics\n", 4000), kNonReaders);
  std::this_thread::sleep_for(500ms);  // every hog's session is stuck writing by now

  const auto ptc_tally = probe(4s, [] {
    RawConnection c("127.0.0.21", 9347);
    c.send_some(ptc_request(ptc::kGetConfig));
    return whole_ptc_response(c.receive(1s, whole_ptc_response));
  });
  const auto ends_line = [](const std::string& got) { return got.ends_with("\n"); };
  const auto text_tally = probe(4s, [&] {
    RawConnection c("127.0.0.22", 7501);
    c.send_some("get_sensor_info\n");
    return c.receive(1s, ends_line).find("\"prod_line\"") != std::string::npos;
  });
  std::cout << "non-readers: " << kNonReaders << " on each port; newcomers answered: PTC "
            << ptc_tally.answered << "/" << ptc_tally.probes << ", TCP 7501 " << text_tally.answered
            << "/" << text_tally.probes << '\n';
  CHECK(ptc_tally.answered == ptc_tally.probes);
  CHECK(text_tally.answered == text_tally.probes);

  // Past the write deadline every hog is gone: given way to a newcomer, or timed out writing.
  std::this_thread::sleep_for(3s);
  REQUIRE(hesai.stop() == 0);
  REQUIRE(ouster.stop() == 0);
  const auto closed = [](const test::DaemonProcess& d, const std::string& sensor,
                         const std::string& api, const std::string& reason) {
    return d.counter("lidaremu_api_connections_closed_total{sensor=\"" + sensor + "\",api=\"" +
                     api + "\",reason=\"" + reason + "\"}");
  };
  const auto ptc_stalled = closed(hesai, "pandar-xt32-0", "ptc", "write_timeout");
  const auto ptc_evicted = closed(hesai, "pandar-xt32-0", "ptc", "evicted");
  const auto text_stalled = closed(ouster, "os1-64-0", "tcp7501", "write_timeout");
  const auto text_evicted = closed(ouster, "os1-64-0", "tcp7501", "evicted");
  INFO("PTC: " << ptc_stalled << " timed out writing, " << ptc_evicted
               << " evicted; TCP 7501: " << text_stalled << " and " << text_evicted);
  // Under a sanitizer the unit answers so slowly that a hog may still be taking replies at the
  // end: the newcomers above are the check there.
  if (!test::kSanitized) {
    CHECK(ptc_stalled >= 1);
    CHECK(text_stalled >= 1);
    CHECK(ptc_stalled + ptc_evicted >= kNonReaders);
    CHECK(text_stalled + text_evicted >= kNonReaders);
  }
}

namespace {
// One UDP socket of the test's, sending to IP:PORT.
class UdpPoke {
 public:
  UdpPoke(const std::string& ip, std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    to_.sin_family = AF_INET;
    to_.sin_port = htons(port);
    ::inet_pton(AF_INET, ip.c_str(), &to_.sin_addr);
  }
  ~UdpPoke() { ::close(fd_); }
  UdpPoke(const UdpPoke&) = delete;
  UdpPoke& operator=(const UdpPoke&) = delete;
  // Whether the kernel took it.
  bool send(std::span<const std::uint8_t> bytes) const {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
    return ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to_),
                    sizeof to_) == static_cast<ssize_t>(bytes.size());
  }

 private:
  int fd_ = -1;
  sockaddr_in to_{};
};
}  // namespace

TEST_CASE("Livox SDK ports refuse and count by reason what no host sends, the kernel's drops too",
          "[e2e][hostile][livox]") {
  // The review: trailing bytes past a frame's length were accepted, datagrams over 2,048 bytes
  // were cut and parsed, malformed ones never logged, and the kernel's drops on 56000/56100 not
  // counted (677k of 1M counted under a flood).
  namespace livox = core::livox;
  test::UdpReceiver points;
  test::DaemonProcess daemon({"--model", "livox-mid360", "--scan-pattern", "test-pattern", "--hits",
                              "udp://127.0.0.1:0", "--out", points.url(), "--telemetry",
                              points.url(), "--sensor-ip", "127.0.0.26", "--foxglove", "off",
                              "--http", "off"});
  REQUIRE(daemon.wait_for_output("commands udp 127.0.0.26", 5s));
  std::array<std::uint8_t, livox::kMaxCommandFrame> frame{};
  const auto request = [&](std::uint32_t sequence) {
    const std::size_t size = livox::write_command(
        frame,
        {.sequence = sequence,
         .command_id = static_cast<std::uint16_t>(livox::CommandId::kDiscovery)},
        {});
    return std::vector<std::uint8_t>(frame.begin(),
                                     frame.begin() + static_cast<std::ptrdiff_t>(size));
  };
  const UdpPoke command("127.0.0.26", 56100);
  auto trailing = request(1);
  trailing.push_back(0xEE);
  REQUIRE(command.send(trailing));
  auto oversized = request(2);
  oversized.resize(3000, 0);
  REQUIRE(command.send(oversized));
  const std::vector<std::uint8_t> garbage(30, 0x55);
  REQUIRE(command.send(garbage));
  REQUIRE(command.send(request(3)));
  std::this_thread::sleep_for(200ms);
  // A flood of requests, faster than one thread answers: what the kernel drops is counted too.
  constexpr int kFlood = 200'000;
  std::uint64_t flooded = 0;
  const auto valid = request(4);
  for (int i = 0; i < kFlood; ++i) flooded += command.send(valid) ? 1 : 0;
  std::this_thread::sleep_for(1s);
  REQUIRE(daemon.stop() == 0);
  const auto outcome = [&](const std::string& what) {
    return daemon.counter(
        "lidaremu_livox_sdk_datagrams_total{sensor=\"livox-mid360-0\",outcome=\"" + what + "\"}");
  };
  CHECK(outcome("trailing_bytes") == 1);
  CHECK(outcome("oversized") == 1);
  CHECK(outcome("malformed") == 1);
  const auto answered = outcome("answered");
  const auto dropped = outcome("kernel_dropped");
  std::cout << "Livox command port flood: " << flooded << " sent, " << answered - 1 << " answered, "
            << dropped << " dropped by the kernel\n";
  // Every datagram the kernel took from the test is accounted for.
  CHECK(answered + dropped == flooded + 1);
  CHECK(daemon.output().find("refused: bytes past the frame's length") != std::string::npos);
  CHECK(daemon.output().find("refused: over the largest frame") != std::string::npos);
  CHECK(daemon.output().find("refused: not a frame Livox SDK2 reads") != std::string::npos);
}

TEST_CASE("Destinations: loopback, the client that asks, and the ranges allowed", "[net]") {
  const daemon::DestinationPolicy policy(
      {*daemon::parse_ipv4_range("10.0.0.0/8"), *daemon::parse_ipv4_range("192.168.7.9")});
  CHECK(policy.refusal("127.0.0.1", "192.168.1.5").empty());
  CHECK(policy.refusal("127.45.0.3", "192.168.1.5").empty());
  CHECK(policy.refusal("192.168.1.5", "192.168.1.5").empty());  // "send to me"
  CHECK(policy.refusal("10.200.3.4", "192.168.1.5").empty());
  CHECK(policy.refusal("192.168.7.9", "192.168.1.5").empty());
  for (const char* elsewhere :
       {"8.8.8.8", "192.168.1.6", "192.168.7.8", "255.255.255.255", "224.0.0.1", "0.0.0.0"}) {
    INFO(elsewhere);
    CHECK_THAT(policy.refusal(elsewhere, "192.168.1.5"), Catch::Contains("--allow-destinations"));
  }
  CHECK_THAT(policy.refusal("not-an-address", "127.0.0.1"), Catch::Contains("not an IPv4"));
  CHECK(daemon::DestinationPolicy().refusal("10.0.0.1", "127.0.0.1") != "");
  CHECK_FALSE(daemon::parse_ipv4_range("10.0.0.0/33"));
  CHECK_FALSE(daemon::parse_ipv4_range("10.0.0/8"));
  CHECK_FALSE(daemon::parse_ipv4_range("10.0.0.0/"));
  CHECK(daemon::parse_ipv4_range("0.0.0.0/0")->contains(0x08080808));
}

TEST_CASE("A unit's API points its stream only where the policy allows, counted and logged",
          "[e2e][hostile]") {
  // The review: PTC 0x20, Ouster udp_dest, Velodyne /cgi/setting/host (and Livox host ends,
  // test_livox_daemon) pointed a sensor's stream at any address, broadcast and multicast
  // included, logged but not counted.
  namespace ptc = core::hesai::ptc;
  test::UdpReceiver out;
  const std::string config = "/tmp/lidaremu-destinations-" + std::to_string(::getpid()) + ".toml";
  std::ofstream(config)
      << "[daemon]\nhttp = \"off\"\nfoxglove = \"off\"\nallow_destinations = [\"10.0.0.0/8\"]\n"
      << "[[sensor]]\nname = \"velodyne\"\nmodel = \"vlp16\"\nhits = \"udp://127.0.0.1:0\"\n"
      << "out = \"" << out.url()
      << "\"\nsensor_ip = \"127.0.0.27\"\napi_port = " << test::api_port() << "\n"
      << "[[sensor]]\nname = \"hesai\"\nmodel = \"pandar-xt32\"\nsensor_id = 1\n"
      << "hits = \"udp://127.0.0.1:0\"\nout = \"" << out.url() << "\"\nsensor_ip = \"127.0.0.28\"\n"
      << "[[sensor]]\nname = \"ouster\"\nmodel = \"os1-64\"\nsensor_id = 2\n"
      << "hits = \"udp://127.0.0.1:0\"\nout = \"" << out.url() << "\"\nsensor_ip = \"127.0.0.29\"\n"
      << "api_port = " << test::api_port() << "\n";
  test::DaemonProcess daemon({"--config", config});
  REQUIRE(daemon.wait_for_output("sensor ouster", 10s));
  const std::string velodyne = "http://127.0.0.27:" + test::api_port() + "/cgi/setting/host";
  const auto set_host = [&](const std::string& address) {
    return test::http_request("POST", velodyne, "addr=" + address + "&dport=2368", "",
                              {"Content-Type: application/x-www-form-urlencoded"})
        .status;
  };
  const auto ptc_destination = [&](std::array<std::uint8_t, 4> address) {
    RawConnection c("127.0.0.28", 9347);
    std::vector<std::uint8_t> payload(address.begin(), address.end());
    for (const std::uint8_t b : {0x09, 0x40, 0x27, 0x10}) payload.push_back(b);  // 2368, 10000
    const auto request = ptc::frame(ptc::kSetDestination, 0, payload);
    c.send_some(std::string(request.begin(), request.end()));
    const std::string reply = c.receive(3s, whole_ptc_response);
    return reply.size() >= ptc::kHeaderSize ? static_cast<int>(std::uint8_t(reply[3])) : -1;
  };
  const auto udp_dest = [&](const std::string& address) {
    return test::tcp_exchange("127.0.0.29", 7501,
                              "set_config_param udp_dest " + address + "\nreinitialize\n", 3s,
                              "reinitialize")
        .bytes;
  };
  for (const std::string elsewhere : {"8.8.8.8", "255.255.255.255", "224.0.0.1", "0.0.0.0"}) {
    INFO(elsewhere);
    CHECK(set_host(elsewhere) == 403);
    const auto a = boost::asio::ip::make_address_v4(elsewhere).to_bytes();
    CHECK(ptc_destination(a) == ptc::kInvalidData);
    const std::string answer = udp_dest(elsewhere);
    INFO(answer);
    CHECK(answer.find("--allow-destinations") != std::string::npos);
  }
  // Allowed: a range on --allow-destinations, then back to loopback.
  CHECK(set_host("10.1.2.3") == 200);
  CHECK(set_host("127.0.0.1") == 200);
  CHECK(ptc_destination({10, 1, 2, 3}) == ptc::kOk);
  CHECK(ptc_destination({127, 0, 0, 1}) == ptc::kOk);
  CHECK(udp_dest("10.1.2.3").find("error") == std::string::npos);
  REQUIRE(daemon.stop() == 0);
  for (const std::string sensor : {"velodyne", "hesai", "ouster"}) {
    INFO(sensor);
    const auto count = [&](const std::string& outcome) {
      return daemon.counter("lidaremu_destination_changes_total{sensor=\"" + sensor +
                            "\",outcome=\"" + outcome + "\"}");
    };
    CHECK(count("refused") == 4);
    CHECK(count("accepted") >= 1);
  }
  CHECK(daemon.output().find("127.0.0.1 asked to send to udp://8.8.8.8:") != std::string::npos);
  std::filesystem::remove(config);
}
