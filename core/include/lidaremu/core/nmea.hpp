#pragma once
// NMEA sentences the emulated units carry in their GPS / position packets (Velodyne position
// packets, Hesai GPS packets), written without allocating.
#include <cstddef>
#include <span>
#include <string>

namespace lidaremu::core {

// The longest sentence format_gprmc writes, with its terminator (both packets have more room).
inline constexpr std::size_t kGprmcMaxBytes = 88;

// "$GPRMC,...*hh\r\n" for a UNIX time and position, into `out` without allocating; returns its
// length (at most out.size() - 1).
std::size_t format_gprmc(std::span<char> out, double unix_time_s, double latitude_deg,
                         double longitude_deg);
std::string gprmc_sentence(double unix_time_s, double latitude_deg, double longitude_deg);

}  // namespace lidaremu::core
