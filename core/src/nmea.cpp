// NMEA sentences the emulated units send in their GPS / position packets.
#include "lidaremu/core/nmea.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "lidaremu/core/utc.hpp"

namespace lidaremu::core {
namespace {

// "ddmm.mmmm,H" (latitude, 2 degree digits) or "dddmm.mmmm,H" (longitude, 3).
int format_nmea_angle(char* out, std::size_t size, double deg, int degree_digits, char positive,
                      char negative) {
  const char hemisphere = deg >= 0 ? positive : negative;
  deg = std::fabs(deg);
  const int whole = static_cast<int>(deg);
  const double minutes = (deg - whole) * 60.0;
  return std::snprintf(out, size, "%0*d%07.4f,%c", degree_digits, whole, minutes, hemisphere);
}

}  // namespace

std::size_t format_gprmc(std::span<char> out, double unix_time_s, double latitude_deg,
                         double longitude_deg) {
  const UtcFields utc = utc_fields(static_cast<std::int64_t>(std::floor(unix_time_s)));
  char latitude[24];
  char longitude[24];
  format_nmea_angle(latitude, sizeof latitude, latitude_deg, 2, 'N', 'S');
  format_nmea_angle(longitude, sizeof longitude, longitude_deg, 3, 'E', 'W');
  char body[128];
  std::snprintf(body, sizeof body, "GPRMC,%02d%02d%02d,A,%s,%s,000.0,000.0,%02d%02d%02d,000.0,E,A",
                utc.hour, utc.minute, utc.second, latitude, longitude, utc.day, utc.month,
                utc.year % 100);
  std::uint8_t checksum = 0;
  for (const char* c = body; *c; ++c) checksum ^= static_cast<std::uint8_t>(*c);
  const int n = std::snprintf(out.data(), out.size(), "$%s*%02X\r\n", body, checksum);
  return n < 0 ? 0 : std::min(static_cast<std::size_t>(n), out.size() - 1);
}

std::string gprmc_sentence(double unix_time_s, double latitude_deg, double longitude_deg) {
  std::array<char, kGprmcMaxBytes> buffer{};
  return {buffer.data(), format_gprmc(buffer, unix_time_s, latitude_deg, longitude_deg)};
}

}  // namespace lidaremu::core
