#pragma once
// The paced emitter must wake on time even when physics keeps every core busy: the default
// timer slack (50 us) is half the pacing budget, and the fair scheduler lets a waking thread
// wait for its turn (milliseconds on a loaded 2-core machine). (Lowering the physics threads'
// priority instead was measured and refused: preempted TBB workers stall each parallel_for's
// join, and physics took 3-5x longer.)

namespace lidaremu::daemon {

// Exact wake-ups for the calling thread (timer slack 1 ns) and, where the process may (root,
// CAP_SYS_NICE or an RLIMIT_RTPRIO), the real-time round-robin class at a low priority, so a
// wake-up preempts physics. Returns whether the real-time class was granted.
bool make_thread_punctual();

// Blocks SIGHUP, SIGINT and SIGTERM in the calling worker thread, so that the kernel hands them
// to the thread that waits for them (the io_context's) instead of one sleeping in a queue, where
// a sanitizer's deferred delivery could hold them for as long as it sleeps.
void leave_signals_to_the_main_thread();

}  // namespace lidaremu::daemon
