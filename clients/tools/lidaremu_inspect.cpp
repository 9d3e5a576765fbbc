// lidaremu-inspect: listen where a driver would (or read a capture), decode with the spec
// decoders, and print one line per frame: what a person checks first when pointing a simulator at
// a sensor emulator, or when a dataset job has written its --pcap.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "lidaremu/clients/packet_inspector.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/family.hpp"
#include "lidaremu/core/pcap.hpp"

namespace {

using Bytes = std::span<const std::uint8_t>;

// Listens on 127.0.0.1:port (and the DIFOP port for RoboSense) until `duration` passed or
// `enough`; false when a port cannot be bound.
bool listen_live(int port, int difop_port, bool robosense, double duration,
                 const std::function<bool()>& enough,
                 const std::function<void(Bytes, double)>& feed,
                 const std::function<void(Bytes)>& feed_difop) {
  const auto listen_on = [](int udp_port) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(udp_port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int buffer = 8 << 20;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer);
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      std::cerr << "lidaremu-inspect: cannot listen on 127.0.0.1:" << udp_port
                << " (port in use?)\n";
      ::close(fd);
      return -1;
    }
    return fd;
  };
  const int fd = listen_on(port);
  if (fd < 0) return false;
  const int difop_fd = robosense ? listen_on(difop_port) : -1;
  if (robosense && difop_fd < 0) return false;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::vector<std::uint8_t> datagram(65536);
  while (std::chrono::duration<double>(Clock::now() - start).count() < duration && !enough()) {
    std::array<pollfd, 2> p{{{fd, POLLIN, 0}, {difop_fd, POLLIN, 0}}};
    if (::poll(p.data(), robosense ? 2 : 1, 100) <= 0) continue;
    if (robosense && (p[1].revents & POLLIN) != 0) {
      const ssize_t d = ::recv(difop_fd, datagram.data(), datagram.size(), 0);
      if (d > 0) feed_difop({datagram.data(), static_cast<std::size_t>(d)});
    }
    if ((p[0].revents & POLLIN) == 0) continue;
    const ssize_t n = ::recv(fd, datagram.data(), datagram.size(), 0);
    if (n <= 0) continue;
    feed({datagram.data(), static_cast<std::size_t>(n)},
         std::chrono::duration<double>(Clock::now() - start).count());
  }
  ::close(fd);
  if (difop_fd >= 0) ::close(difop_fd);
  return true;
}

}  // namespace

// CLI11 throws while options are declared only for programming errors (duplicate names);
// every runtime failure is caught below and turned into a message and an exit code.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  using namespace lidaremu;
  CLI::App app{
      "lidaremu-inspect: decode a Velodyne, Ouster, Hesai, RoboSense or Livox UDP stream and "
      "summarise each frame"};
  std::string model_name = "vlp16", metadata_file, pcap_file;
  int port = 0;
  int difop_port = 0;
  double duration = 10;
  int max_frames = 0;
  app.add_option("--model", model_name, core::sensor_model_names())->capture_default_str();
  app.add_option("--port", port,
                 "UDP port on 127.0.0.1 (default 2368 Velodyne and Hesai, 7502 Ouster, 6699 "
                 "RoboSense MSOP, 56301 Livox points)");
  app.add_option("--difop-port", difop_port,
                 "RoboSense: the DIFOP port on 127.0.0.1 (default 7788); no point is decoded "
                 "before a DIFOP, as rs_driver waits for one");
  app.add_option("--metadata", metadata_file,
                 "Ouster metadata JSON (as written by --metadata-out)");
  app.add_option("--duration", duration, "stop after this many seconds")->capture_default_str();
  app.add_option("--frames", max_frames, "stop after this many complete frames (0: no limit)");
  app.add_option("--pcap", pcap_file,
                 "read the datagrams sent to --port (and --difop-port) from this capture (the "
                 "daemon's --pcap, tcpdump's) instead of listening; --duration does not apply");
  CLI11_PARSE(app, argc, argv);
  const core::SensorModel* model = core::find_sensor_model(model_name);
  if (!model) {
    std::cerr << "lidaremu-inspect: unknown model " << model_name << '\n';
    return 2;
  }
  const core::Family& family = core::family_of(*model);
  std::optional<core::ouster::Metadata> metadata;
  if (family.stream_needs_metadata()) {
    if (metadata_file.empty()) {
      std::cerr << "lidaremu-inspect: " << family.name() << " streams need --metadata FILE\n";
      return 2;
    }
    std::ifstream in(metadata_file);
    std::stringstream text;
    text << in.rdbuf();
    try {
      metadata = core::ouster::parse_metadata(text.str());
    } catch (const std::exception& e) {
      std::cerr << "lidaremu-inspect: " << metadata_file << ": " << e.what() << '\n';
      return 2;
    }
  }
  if (port == 0) port = family.default_ports().data;
  if (difop_port == 0) difop_port = family.default_ports().telemetry;
  int frames = 0;
  std::uint64_t packets = 0, points = 0;
  // The scan the stream is cut by: a spinning head's at its default rate (a frame ends where the
  // columns wrap, whatever the rate), an Ouster's from its metadata, a Livox unit's firings as
  // its packets carry them.
  core::ScanPattern pattern;
  pattern.model = model;
  if (core::rpm_driven(*model)) {
    pattern = *core::make_rpm_scan(*model, model->spin.default_rpm).pattern;
  } else if (metadata) {
    pattern.columns_per_frame = metadata->columns_per_frame;
  }
  clients::PacketInspector inspector(pattern, metadata, [&](const clients::FrameSummary& f) {
    ++frames;
    points += f.points.size();
    std::cout << f.describe() << std::endl;
  });
  const bool robosense = inspector.needs_side_channel();  // its DIFOP comes first
  double first = -1, last = 0;
  const auto feed = [&](Bytes bytes, double t) {
    if (first < 0) first = t;
    last = t;
    ++packets;
    inspector.feed(bytes, t);
  };
  if (!pcap_file.empty()) {
    try {
      core::PcapReader capture(pcap_file);
      while (max_frames == 0 || frames < max_frames) {
        const auto d = capture.next();
        if (!d) break;
        if (robosense && d->destination_port == difop_port) inspector.feed_difop(d->payload);
        if (d->destination_port == port) feed(d->payload, d->capture_time_s);
      }
    } catch (const std::exception& e) {
      std::cerr << "lidaremu-inspect: " << e.what() << '\n';
      return 2;
    }
  } else {
    std::cout << "lidaremu-inspect: listening on 127.0.0.1:" << port << " for " << model_name
              << std::endl;
    if (!listen_live(
            port, difop_port, robosense, duration,
            [&] { return max_frames != 0 && frames >= max_frames; }, feed,
            [&](Bytes bytes) { inspector.feed_difop(bytes); })) {
      return 1;
    }
  }
  const double span = last - first;
  std::cout << "lidaremu-inspect: " << packets << " packets (" << inspector.bad_packets()
            << " undecodable), " << frames << " frames, " << points << " points; mean rate "
            << (packets > 1 && span > 0 ? static_cast<double>(packets - 1) / span : 0.0)
            << " packets/s";
  if (robosense) std::cout << "; " << inspector.packets_before_difop() << " before the first DIFOP";
  std::cout << std::endl;
  return packets > 0 && inspector.bad_packets() == 0 ? 0 : 1;
}
