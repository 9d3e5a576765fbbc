// What the vector kernel's tests share: putting the best instruction set back when a test that
// forces one ends, and running a check on every instruction set the build dispatches to.
#pragma once

#include <string>

#include "lidaremu/core/simd.hpp"

namespace lidaremu::core::simd_test {

// Restores the best target when a test that forces one ends, passed or not.
struct TargetGuard {
  TargetGuard() = default;
  TargetGuard(const TargetGuard&) = delete;
  TargetGuard& operator=(const TargetGuard&) = delete;
  ~TargetGuard() { simd::use_target("best"); }
};

// Runs check(target) once with each instruction set this machine can run forced in turn, the
// best first, and puts the best back afterwards, passed or not.
template <typename Check>
void on_every_target(Check&& check) {
  const TargetGuard guard;
  for (const std::string& t : simd::available_targets()) {
    simd::use_target(t);
    check(t);
  }
}

}  // namespace lidaremu::core::simd_test
