#pragma once
// The daemon's threads: their names, the physics' arena, signals. The paced emitter is made
// punctual (core::make_thread_punctual). (Lowering the physics threads' priority instead was
// measured and refused: preempted TBB workers stall each parallel_for's join, and physics took
// 3-5x longer.)

#include <tbb/task_arena.h>

#include "lidaremu/core/punctual_thread.hpp"

namespace lidaremu::daemon {

// What each of the daemon's threads is, in its name (at most 15 characters, the kernel's limit):
// lidaremu-bench reads the CPU each kind spends per beam from /proc (the serial part of a sensor
// is its input, encoding and sending thread). The physics workers are TBB's; the io thread and
// anything else keeps the process's name.
inline constexpr const char* kInputThreadName = "lre-input";
inline constexpr const char* kProcessingThreadName = "lre-process";
inline constexpr const char* kSendingThreadName = "lre-send";
inline constexpr const char* kPhysicsThreadName = "lre-physics";
inline constexpr const char* kLocatingThreadName = "lre-locate";  // raw rows' beams (RawIngest)
void name_this_thread(const char* name);

// The arena every sensor's physics runs in (its processing thread enters it for each step, the
// physics gate letting one frame in at a time, so the one slot for a thread from outside is the
// gate holder's), with an observer naming the TBB workers that join it. One for the process, made
// on first use and never destroyed: an observer of each processing thread's own implicit arena (as
// before) left TBB's proxy of it behind when the thread ended first (LeakSanitizer: 40 bytes each
// time a sensor's pipeline was replaced).
tbb::task_arena& physics_arena();

// Blocks SIGHUP, SIGINT and SIGTERM in the calling worker thread, so that the kernel hands them
// to the thread that waits for them (the io_context's) instead of one sleeping in a queue, where
// a sanitizer's deferred delivery could hold them for as long as it sleeps.
void leave_signals_to_the_main_thread();

}  // namespace lidaremu::daemon
