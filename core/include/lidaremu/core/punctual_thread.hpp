#pragma once
// A thread that must wake on time even when physics keeps every core busy: the default timer
// slack (50 us) is half the pacing budget, and the fair scheduler lets a waking thread wait for
// its turn (milliseconds on a loaded 2-core machine). The daemon's paced sender is one; the
// bench's wake-up probe (which measures what such a thread gets from the host) is the other.

namespace lidaremu::core {

// Exact wake-ups for the calling thread (timer slack 1 ns) and, where the process may (root,
// CAP_SYS_NICE or an RLIMIT_RTPRIO), the real-time round-robin class at a low priority, so a
// wake-up preempts physics. Returns whether the real-time class was granted.
bool make_thread_punctual();

}  // namespace lidaremu::core
