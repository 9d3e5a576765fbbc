#pragma once
// The demo scene as an engine sends it, and the checks that what the daemon sent back decodes,
// with the spec decoders, to the engine's hits: shared by the end-to-end test files.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "daemon_process.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::test {

// One frame of the demo scene as raw7 rows, beam by beam (column-major).
std::vector<float> scene_rows(const core::ScanPattern& pattern);
// Rows that hit something (material id not 0).
std::size_t valid_rows(const std::vector<float>& rows);
// Every decoded VLP-16 point against the row the engine sent for its beam (range within the
// 1 mm quantum, position within it plus the azimuth quantum); returns the points compared.
std::size_t check_velodyne_round_trip(const std::vector<UdpReceiver::Datagram>& packets,
                                      const std::vector<float>& rows);
// Every decoded OS1-64 pixel against its row (within the 1 mm quantum); an empty row must come
// back as range 0. Returns the pixels compared.
std::size_t check_ouster_round_trip(const std::vector<UdpReceiver::Datagram>& packets,
                                    const std::vector<float>& rows,
                                    const std::string& metadata_file);

// Packets per second between packets[skip_head] and packets[size - skip_tail].
double steady_rate(const std::vector<UdpReceiver::Datagram>& packets, std::size_t skip_head,
                   std::size_t skip_tail);

// A UDP port nothing listens on now (bound and released).
std::uint16_t free_udp_port();
// A TCP port on 127.0.0.1 nothing listens on now (bound and released).
std::uint16_t free_tcp_port();
// Port 80, as drivers expect, when the test may bind it; otherwise another one.
std::string api_port();
// The port of "scheme://host:PORT".
std::uint16_t port_of(const std::string& url);

}  // namespace lidaremu::test
