#pragma once
// When a problem that can repeat per datagram or per request is worth a log line: at 1, 2, 3,
// 10, 100, 1000, ... occurrences, so that a flood of bad input never floods the log but every
// kind of problem is seen (and its count, in the line and in /metrics).
#include <cstdint>

namespace lidaremu::daemon {

inline bool worth_logging(std::uint64_t count) {
  if (count <= 3) return true;
  while (count % 10 == 0) count /= 10;
  return count == 1;
}

// Whether a count that moved from `before` to `now` (by more than one at a time) passed one of
// the counts worth_logging names.
inline bool passes_log_mark(std::uint64_t before, std::uint64_t now) {
  if (now <= before) return false;
  if (before < 3) return true;  // 1, 2 or 3 is among (before, now]
  for (std::uint64_t mark = 10; mark <= now; mark *= 10) {
    if (mark > before) return true;
    if (mark > now / 10) break;  // the next mark is past now (and would not overflow)
  }
  return false;
}

}  // namespace lidaremu::daemon
