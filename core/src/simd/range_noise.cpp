// Range noise in double lanes (simd.hpp, range_noise_shifts): physics::range_noise_sigma_m times
// the draw, operation for operation (the same association, no fused multiply-add), so the same
// bits on every instruction set.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/range_noise.cpp"
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

void range_noise_shifts_impl(const RangeNoiseEchoes& e, std::size_t n, double floor_m,
                             double pulse_m) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const std::size_t lanes = hn::Lanes(d);
  const auto zero = hn::Zero(d);
  const auto floor = hn::Set(d, floor_m);
  const auto pulse = hn::Set(d, pulse_m);
  const auto two = hn::Set(d, 2.0);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t m = std::min(lanes, n - i);
    const auto power = hn::PromoteTo(d, load_first(df, e.power_w + i, m));
    const auto noise = hn::PromoteTo(d, load_first(df, e.noise_w + i, m));
    // range_noise_sigma_m: max(floor, pulse / sqrt(2 SNR)), the floor without noise or power.
    const auto snr = hn::Div(power, noise);
    const auto spread = hn::Div(pulse, hn::Sqrt(hn::Mul(two, snr)));
    const auto widest = hn::IfThenElse(hn::Lt(floor, spread), spread, floor);
    const auto unlit = hn::Or(hn::Not(hn::Gt(noise, zero)), hn::Not(hn::Gt(power, zero)));
    const auto sigma = hn::IfThenElse(unlit, floor, widest);
    store_first(df, hn::DemoteTo(df, hn::Mul(sigma, hn::PromoteTo(d, load_first(df, e.z + i, m)))),
                e.shift_m + i, m);
  }
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lidaremu::core::simd {

HWY_EXPORT(range_noise_shifts_impl);

void range_noise_shifts(const RangeNoiseEchoes& echoes, std::size_t count, double floor_m,
                        double pulse_m) {
  HWY_DYNAMIC_DISPATCH(range_noise_shifts_impl)(echoes, count, floor_m, pulse_m);
}

}  // namespace lidaremu::core::simd
#endif  // HWY_ONCE
