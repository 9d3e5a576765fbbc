#include "lidaremu/clients/wakeup_probe.hpp"

#include <time.h>

#include <algorithm>

#include "lidaremu/core/punctual_thread.hpp"

namespace lidaremu::clients {
namespace {
std::int64_t monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}
}  // namespace

WakeupProbe::WakeupProbe() : late_us_(kBuckets, 0) {
  thread_ = std::thread([this] { run(); });
}

WakeupProbe::~WakeupProbe() { stop(); }

void WakeupProbe::run() {
  realtime_ = core::make_thread_punctual();
  const std::int64_t period_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(kPeriod).count();
  std::int64_t due_ns = monotonic_ns();
  while (!stopping_.load(std::memory_order_relaxed)) {
    due_ns += period_ns;
    const timespec due{due_ns / 1'000'000'000, due_ns % 1'000'000'000};
    // Absolute deadlines: a late wake-up does not push the later ones back.
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nullptr) != 0) {
    }
    const std::int64_t now_ns = monotonic_ns();
    const auto late_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, now_ns - due_ns));
    max_ns_ = std::max(max_ns_, late_ns);
    ++late_us_[std::min<std::uint64_t>(late_ns / 1000, kBuckets - 1)];
    // After a stall longer than a period, the next deadline is the first still ahead: the
    // wake-ups missed while stalled are one late wake-up, not many.
    if (now_ns - due_ns > period_ns) due_ns += (now_ns - due_ns) / period_ns * period_ns;
  }
}

WakeupProbe::Summary WakeupProbe::stop() {
  if (stopped_) return summary_;
  stopped_ = true;
  stopping_.store(true, std::memory_order_relaxed);
  thread_.join();
  std::uint64_t total = 0;
  for (const std::uint32_t n : late_us_) total += n;
  summary_.wakeups = total;
  summary_.realtime = realtime_;
  summary_.max_us = static_cast<double>(max_ns_) / 1e3;
  // The smallest lateness at or above 99 % of the wake-ups, to the bucket's upper edge.
  const std::uint64_t rank = total - total / 100;
  std::uint64_t seen = 0;
  for (std::size_t us = 0; us < kBuckets && total > 0; ++us) {
    seen += late_us_[us];
    if (seen >= rank) {
      summary_.p99_us = std::min(static_cast<double>(us + 1), summary_.max_us);
      break;
    }
  }
  return summary_;
}

}  // namespace lidaremu::clients
