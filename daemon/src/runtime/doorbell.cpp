#include "lidaremu/daemon/runtime/doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>

namespace lidaremu::daemon {
namespace {
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "the futex word is the atomic's own");

std::uint32_t* word_of(std::atomic<std::uint32_t>& a) {
  return reinterpret_cast<std::uint32_t*>(&a);  // NOLINT: the futex's word, as asserted above
}

long futex(std::uint32_t* word, int op, std::uint32_t value, const timespec* deadline) {
  return ::syscall(SYS_futex, word, op, value, deadline, nullptr, FUTEX_BITSET_MATCH_ANY);
}
}  // namespace

void Doorbell::ring() {
  if (rung_.exchange(1, std::memory_order_acq_rel) == 0) {
    futex(word_of(rung_), FUTEX_WAKE_PRIVATE, 1, nullptr);
  }
}

bool Doorbell::wait(std::optional<double> deadline_s) {
  timespec deadline{};
  if (deadline_s) {
    // Whole nanoseconds, rounded up (never woken before the deadline asked); a deadline past
    // (or absurd) is a deadline now.
    constexpr std::int64_t kNs = 1'000'000'000;
    const double ns = std::ceil(std::clamp(*deadline_s, 0.0, 1e9) * 1e9);
    const auto whole_ns = static_cast<std::int64_t>(ns);
    deadline.tv_sec = static_cast<time_t>(whole_ns / kNs);
    deadline.tv_nsec = static_cast<long>(whole_ns % kNs);
  }
  for (;;) {
    if (take()) return true;
    // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline (std::chrono::steady_clock's
    // clock); it returns at once if the bell was rung since the look above (EAGAIN).
    const long r =
        futex(word_of(rung_), FUTEX_WAIT_BITSET_PRIVATE, 0, deadline_s ? &deadline : nullptr);
    // Woken, rung meanwhile, or a signal: look again. The deadline, or anything else (never
    // seen; a wait that cannot be made must not become a spin): back to the caller.
    if (r != 0 && errno != EAGAIN && errno != EINTR) return take();
  }
}

}  // namespace lidaremu::daemon
