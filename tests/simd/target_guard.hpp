// What the vector kernel's tests share: putting the best instruction set back when a test that
// forces one ends.
#pragma once

#include "lidaremu/core/simd.hpp"

namespace lidaremu::core::simd_test {

// Restores the best target when a test that forces one ends, passed or not.
struct TargetGuard {
  TargetGuard() = default;
  TargetGuard(const TargetGuard&) = delete;
  TargetGuard& operator=(const TargetGuard&) = delete;
  ~TargetGuard() { simd::use_target("best"); }
};

}  // namespace lidaremu::core::simd_test
