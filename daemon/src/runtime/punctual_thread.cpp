#include "lidaremu/daemon/runtime/punctual_thread.hpp"

#include <pthread.h>
#include <signal.h>
#include <tbb/task_scheduler_observer.h>

namespace lidaremu::daemon {

void name_this_thread(const char* name) { ::pthread_setname_np(::pthread_self(), name); }

namespace {
class PhysicsWorkerNames final : public tbb::task_scheduler_observer {
 public:
  explicit PhysicsWorkerNames(tbb::task_arena& arena) : tbb::task_scheduler_observer(arena) {
    observe(true);
  }
  void on_scheduler_entry(bool is_worker) override {
    if (is_worker) name_this_thread(kPhysicsThreadName);
  }
};

struct PhysicsArena {
  tbb::task_arena arena;
  PhysicsWorkerNames names{arena};
};
}  // namespace

tbb::task_arena& physics_arena() {
  // Never destroyed: TBB's own state may be gone by the time static destructors run.
  static PhysicsArena* const shared = new PhysicsArena;
  return shared->arena;
}

void leave_signals_to_the_main_thread() {
  sigset_t control{};
  sigemptyset(&control);
  sigaddset(&control, SIGHUP);
  sigaddset(&control, SIGINT);
  sigaddset(&control, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &control, nullptr);
}

}  // namespace lidaremu::daemon
