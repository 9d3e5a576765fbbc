#include "lidaremu/core/parallel_blocks.hpp"

#include <cstdint>

#if defined(__SANITIZE_THREAD__)
extern "C" {
void __tsan_acquire(void* addr);  // NOLINT(bugprone-reserved-identifier)
void __tsan_release(void* addr);  // NOLINT(bugprone-reserved-identifier)
void AnnotateNewMemory(const char* file, int line, const volatile void* mem, long size);
}

namespace lidaremu::core::parallel_detail {
namespace {

// libtbb takes tasks from per-thread pools backed by tbbmalloc: when a processing thread ends
// (a pipeline retired), its blocks go to the next pipeline's thread. Each fork acquires what
// every finished join released, so a recycled block is ordered after its last use.
int recycled_task_memory = 0;

}  // namespace

void before_fork(void* token) {
  __tsan_acquire(&recycled_task_memory);
  __tsan_release(token);
}
void task_begin(void* token) { __tsan_acquire(token); }
void task_end(void* token) { __tsan_release(token); }
// The frames parallel_for left below the caller (TBB's wait node among them) are dead once it
// returns, but the workers' last touch of them (the join's atomic, read back inside libtbb's
// wait) is invisible, so the caller's next use of that stack would look like a race. Their
// shadow is reset: from the top of this call's own frame (the frame address plus the saved
// frame pointer and return address, where those dead frames lay too) 64 KiB down, which covers
// TBB's frames with room to spare and stays far inside any thread's stack.
[[gnu::noinline]] void after_join(void* token) {
  __tsan_acquire(token);
  constexpr long kDepth = 64 * 1024;
  const auto top = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) + 16;
  AnnotateNewMemory(__FILE__, __LINE__, reinterpret_cast<const volatile void*>(top - kDepth),
                    kDepth);
  __tsan_release(&recycled_task_memory);
}

}  // namespace lidaremu::core::parallel_detail
#endif
