// The threshold detector in double lanes (simd.hpp, detect_against_noise): the scalar
// expressions of s3_detection_threshold.cpp and physics::Receiver::noise_factor, operation for
// operation (the same association, no fused multiply-add), so the same bits on every target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/detection.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "lidaremu/core/simd.hpp"
#include "simd/lanes-inl.h"
#include "simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {

void detect_against_noise_impl(const DetectionCandidates& c, std::size_t n,
                               const DetectorNoise& detector) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const hn::Rebind<std::int32_t, F64Tag> di32;
  const std::size_t lanes = hn::Lanes(d);
  const auto zero = hn::Zero(d);
  const auto one = hn::Set(d, 1.0);
  const auto knee = hn::Set(d, detector.knee_w);
  const auto dark = hn::Set(d, detector.dark_noise_w);
  const auto k = hn::Set(d, detector.threshold_sigmas);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t m = std::min(lanes, n - i);
    // sigma = dark x noise_factor(ambient): sqrt(1 + max(ambient, 0) / knee), std::max's NaN.
    const auto ambient = hn::PromoteTo(d, load_first(df, c.ambient_w + i, m));
    const auto lit = hn::IfThenElse(hn::Lt(ambient, zero), zero, ambient);
    const auto sigma = hn::Mul(dark, hn::Sqrt(hn::Add(one, hn::Div(lit, knee))));
    const auto power = hn::PromoteTo(d, load_first(df, c.power_w + i, m));
    const auto z = hn::PromoteTo(d, load_first(df, c.z + i, m));
    const auto out = hn::Add(power, hn::Mul(sigma, z));
    const auto threshold = hn::Mul(k, sigma);
    store_first(df, hn::DemoteTo(df, out), c.power_w + i, m);
    store_first(df, hn::DemoteTo(df, sigma), c.noise_w + i, m);
    store_first(df, hn::DemoteTo(df, threshold), c.threshold_w + i, m);
    const auto detected = hn::IfThenElseZero(hn::Gt(out, threshold), one);
    store_first(di32, hn::DemoteTo(di32, detected), c.detected + i, m);
  }
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lidaremu::core::simd {

HWY_EXPORT(detect_against_noise_impl);

void detect_against_noise(const DetectionCandidates& candidates, std::size_t count,
                          const DetectorNoise& detector) {
  HWY_DYNAMIC_DISPATCH(detect_against_noise_impl)(candidates, count, detector);
}

}  // namespace lidaremu::core::simd
#endif  // HWY_ONCE
