#include "lidaremu/core/punctual_thread.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

namespace lidaremu::core {

bool make_thread_punctual() {
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  // Low real-time priority: above every normal thread, below the kernel's own real-time work.
  // Such a thread only sleeps and does a little on waking: it cannot starve the machine.
  sched_param param{};
  param.sched_priority = 5;
  return ::pthread_setschedparam(::pthread_self(), SCHED_RR, &param) == 0;
}

}  // namespace lidaremu::core
