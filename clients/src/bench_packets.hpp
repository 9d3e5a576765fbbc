#pragma once
// lidaremu-bench's readers of the daemon's packets (bench_packets.cpp), for bench.cpp.
#include <cstdint>
#include <span>
#include <string>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/hesai/format.hpp"
#include "lidaremu/core/robosense/format.hpp"

namespace lidaremu::clients {

// A --profile value (the daemon refuses anything else before the bench counts a packet).
core::OusterProfile profile_of(const std::string& flag);

// The sensor time of a data packet's first column, as the daemon stamped it (seconds; -1 for a
// packet too short to hold it).
double packet_sensor_time_s(std::span<const std::uint8_t> packet, bool ouster,
                            const std::string& profile);

// Hesai: the tail's date and microseconds, the start of the packet's last column (seconds; -1
// for a packet of another size).
double hesai_packet_time_s(std::span<const std::uint8_t> packet,
                           const core::hesai::ModelFormat& format);

// RoboSense: the MSOP header's time, the start of the packet's first block (seconds; -1 for a
// packet that is no MSOP packet of the model).
double robosense_packet_time_s(std::span<const std::uint8_t> packet,
                               const core::robosense::ModelFormat& format);

// Livox: the point packet's timestamp, its first firing (seconds; -1 for a packet that is no
// Livox packet).
double livox_packet_time_s(std::span<const std::uint8_t> packet);

}  // namespace lidaremu::clients
