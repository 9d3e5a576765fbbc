#include "round_trip.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cmath>

#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/velodyne.hpp"

namespace lidaremu::test {

std::vector<float> scene_rows(const core::ScanPattern& pattern) {
  std::vector<float> rows;
  clients::DemoScene().render(core::BeamGeometry(pattern), rows);
  return rows;
}

std::size_t valid_rows(const std::vector<float>& rows) {
  std::size_t n = 0;
  for (std::size_t i = 6; i < rows.size(); i += 7) n += rows[i] != 0;
  return n;
}

std::size_t check_velodyne_round_trip(const std::vector<UdpReceiver::Datagram>& packets,
                                      const std::vector<float>& rows) {
  const auto& model = *core::find_sensor_model("vlp16");
  core::velodyne::SpecDecoder decoder(model);
  std::size_t compared = 0;
  for (const auto& d : packets) {
    std::vector<core::velodyne::Point> points;
    REQUIRE(decoder.decode(d.bytes, points) == core::velodyne::DecodeError::kNone);
    for (const auto& p : points) {
      const double firing_offset_deg = p.laser * 2.304 * 360.0 / (1808 * 55.296);
      const auto column =
          static_cast<std::size_t>(std::lround((p.azimuth_deg - firing_offset_deg) / 360.0 * 1808) +
                                   1808) %
          1808;
      const float* row = &rows[(column * 16 + p.laser) * 7];
      REQUIRE(row[6] != 0);  // a return where the engine hit nothing would be invented
      const Eigen::Vector3d hit(row[0], row[1], row[2]);
      REQUIRE(std::fabs(p.distance_m - hit.norm()) <= 0.001 + 1e-5);
      REQUIRE((Eigen::Vector3d(p.x, p.y, p.z) - hit).norm() <=
              0.001 + hit.norm() * 0.015 * M_PI / 180);
      ++compared;
    }
  }
  return compared;
}

std::size_t check_ouster_round_trip(const std::vector<UdpReceiver::Datagram>& packets,
                                    const std::vector<float>& rows,
                                    const std::string& metadata_file) {
  const auto metadata = core::ouster::parse_metadata(slurp(metadata_file));
  core::ouster::SpecDecoder decoder(metadata);
  std::size_t compared = 0;
  for (const auto& d : packets) {
    std::vector<core::ouster::Column> columns;
    REQUIRE(decoder.decode(d.bytes, columns) == core::ouster::DecodeError::kNone);
    for (const auto& c : columns) {
      for (int row = 0; row < 64; ++row) {
        const float* r = &rows[(std::size_t{c.measurement_id} * 64 + row) * 7];
        if (r[6] == 0) {
          REQUIRE(c.pixels[row].range_mm == 0);
          continue;
        }
        const auto xyz = decoder.to_xyz(c, row);
        REQUIRE(std::hypot(xyz[0] - r[0], xyz[1] - r[1], xyz[2] - r[2]) <= 0.0005 + 1e-4);
        ++compared;
      }
    }
  }
  return compared;
}

double steady_rate(const std::vector<UdpReceiver::Datagram>& packets, std::size_t skip_head,
                   std::size_t skip_tail) {
  const auto& first = packets[skip_head];
  const auto& last = packets[packets.size() - skip_tail];
  return double(packets.size() - skip_head - skip_tail) / (last.arrival_s - first.arrival_s);
}

std::uint16_t free_udp_port() {
  const UdpReceiver probe;
  return probe.port();
}

std::uint16_t free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  const bool bound =
      ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  REQUIRE(bound);
  return ntohs(address.sin_port);
}

std::string api_port() { return ::geteuid() == 0 ? "80" : "18080"; }

std::uint16_t port_of(const std::string& url) {
  return static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

}  // namespace lidaremu::test
