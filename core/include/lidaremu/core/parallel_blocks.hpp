#pragma once
// tbb::parallel_for with the orderings ThreadSanitizer cannot see stated to it. Debian's libtbb
// is not built for TSan, so it does not see that spawning the tasks orders the caller's writes
// before the workers' reads, that the join orders the workers' last accesses (their bodies, and
// TBB's own bookkeeping in the caller's stack frames) before the caller goes on, nor that task
// memory libtbb recycles between threads was last used before it is handed out again. In TSan
// builds these edges are stated; elsewhere this is tbb::parallel_for and nothing else.
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace lidaremu::core::parallel_detail {

#if defined(__SANITIZE_THREAD__)
void before_fork(void* token);
void task_begin(void* token);
void task_end(void* token);
void after_join(void* token);
#else
inline void before_fork(void* /*token*/) {}
inline void task_begin(void* /*token*/) {}
inline void task_end(void* /*token*/) {}
inline void after_join(void* /*token*/) {}
#endif

}  // namespace lidaremu::core::parallel_detail

namespace lidaremu::core {

namespace parallel_detail {
// Out of line, so that TBB's frames (its wait node; isolate's too, when isolated) lie below the
// caller's, where after_join finds them: one call per parallel_for. (Around the call, isolate's
// frames lay above it, unreset, and a worker's write into them inside libtbb was reported
// against the caller's next use of that stack: ThreadSanitizer, raw rows located in parallel.)
template <bool Isolated, typename Range, typename Body>
[[gnu::noinline]] void fork_join(const Range& range, const Body& body) {
  if constexpr (Isolated) {
    tbb::this_task_arena::isolate([&] { tbb::parallel_for(range, body); });
  } else {
    tbb::parallel_for(range, body);
  }
}

template <bool Isolated, typename Range, typename Body>
void run_blocks(const Range& range, void* token, const Body& body) {
  before_fork(token);
  fork_join<Isolated>(range, [&](const Range& r) {
    task_begin(token);
    body(r);
    task_end(token);
  });
  after_join(token);
}
}  // namespace parallel_detail

// Runs body(subrange) over `range` on TBB's workers and the calling thread. `token` is any
// address private to this call site's data (the frame being processed): it carries the
// fork and join orderings, so unrelated pipelines stay unordered, and checked, between them.
template <typename Range, typename Body>
void parallel_blocks(const Range& range, void* token, const Body& body) {
  parallel_detail::run_blocks<false>(range, token, body);
}

// parallel_blocks, isolated: while it waits, the calling thread runs only these tasks (never
// another sensor's physics).
template <typename Range, typename Body>
void parallel_blocks_isolated(const Range& range, void* token, const Body& body) {
  parallel_detail::run_blocks<true>(range, token, body);
}

// Runs work() inside `arena` (tbb::task_arena::execute) with the same orderings stated: a thread
// that cannot join the arena (its slots for outside threads taken) has its work run by a worker
// while it waits inside libtbb, where ThreadSanitizer cannot see the hand-over either way.
template <typename Work>
void execute_in(tbb::task_arena& arena, void* token, const Work& work) {
  parallel_detail::before_fork(token);
  arena.execute([&] {
    parallel_detail::task_begin(token);
    work();
    parallel_detail::task_end(token);
  });
  parallel_detail::after_join(token);
}

}  // namespace lidaremu::core
