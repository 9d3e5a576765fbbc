#pragma once
// UTC calendar fields of a Unix time, by arithmetic (std::chrono's civil calendar), for the
// packets that carry a date (Velodyne NMEA and HDL-64E status bytes). gmtime_r takes glibc's
// global lock on every call: on the sending threads of every sensor, once per position packet.
#include <chrono>
#include <cstdint>

namespace lidaremu::core {

struct UtcFields {
  int year;    // e.g. 2026
  int month;   // 1..12
  int day;     // 1..31
  int hour;    // 0..23
  int minute;  // 0..59
  int second;  // 0..59
};

inline UtcFields utc_fields(std::int64_t unix_seconds) {
  using namespace std::chrono;
  const sys_seconds t{seconds{unix_seconds}};
  const sys_days day = floor<days>(t);
  const year_month_day date{day};
  const hh_mm_ss<seconds> time{t - day};
  return {static_cast<int>(date.year()),
          static_cast<int>(static_cast<unsigned>(date.month())),
          static_cast<int>(static_cast<unsigned>(date.day())),
          static_cast<int>(time.hours().count()),
          static_cast<int>(time.minutes().count()),
          static_cast<int>(time.seconds().count())};
}

// The Unix time of UTC calendar fields (the inverse of utc_fields for valid fields; a day past
// the month's end rolls over, as the calendar arithmetic does).
inline std::int64_t unix_seconds(const UtcFields& f) {
  using namespace std::chrono;
  const sys_days day{year{f.year} / month{static_cast<unsigned>(f.month)} /
                     std::chrono::day{static_cast<unsigned>(f.day)}};
  return day.time_since_epoch().count() * 86400LL + f.hour * 3600LL + f.minute * 60LL + f.second;
}

}  // namespace lidaremu::core
