// Rain's expected drops per beam (simd.hpp, rain_drop_means) in double lanes: the scalar
// expressions of s4b_rain.cpp and physics::BeamCone, operation for operation (the same
// association, no fused multiply-add), so that every mean is the same float on every target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rain_drops.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numbers>

#include "lidaremu/core/simd.hpp"
#include "simd/lanes-inl.h"
#include "simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {

void rain_drop_means_impl(const RainDrops& t, const double* reach_m, float* detectable, float* rest,
                          std::size_t n) {
  const F64Tag d;
  const hn::RebindToSigned<F64Tag> di;
  const hn::Rebind<std::int32_t, F64Tag> di32;
  const hn::Rebind<float, F64Tag> df;
  const std::size_t lanes = hn::Lanes(d);
  const double w0 = t.exit_radius_m + 0.0 * t.tan_half_angle;  // BeamCone::radius_m(0)
  const bool cone = !(t.tan_half_angle < 1e-12);
  const auto exit_radius = hn::Set(d, t.exit_radius_m);
  const auto tan_half_angle = hn::Set(d, t.tan_half_angle);
  const auto w0_cubed = hn::Set(d, w0 * w0 * w0);
  const auto three_tan = hn::Set(d, 3.0 * t.tan_half_angle);
  const auto cylinder_area = hn::Set(d, std::numbers::pi * t.exit_radius_m * t.exit_radius_m);
  const auto pi = hn::Set(d, std::numbers::pi);
  const auto drops_per_m3 = hn::Set(d, t.drops_per_m3);
  const auto start = hn::Set(d, t.start_m);
  const auto step = hn::Set(d, t.step_m);
  const auto steps = hn::Set(d, static_cast<double>(t.steps));
  const auto last = hn::Set(d, t.cumulative[t.steps]);
  const auto zero = hn::Zero(d);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t c = std::min(lanes, n - i);
    const auto reach = load_first(d, reach_m + i, c);
    // The beam's cone from 0 to its reach (BeamCone::volume_m3), every drop in it.
    hn::Vec<F64Tag> volume;
    if (cone) {
      const auto w1 = hn::Add(exit_radius, hn::Mul(reach, tan_half_angle));
      volume = hn::Div(hn::Mul(pi, hn::Sub(hn::Mul(hn::Mul(w1, w1), w1), w0_cubed)), three_tan);
    } else {
      volume = hn::Mul(cylinder_area, hn::Sub(reach, zero));
    }
    const auto all = hn::Mul(drops_per_m3, volume);
    // Those that could be detected: the table read between its steps (expected_within).
    const auto x = hn::Div(hn::Sub(reach, start), step);
    const auto inside = hn::Gt(x, zero);  // false for NaN
    const auto beyond = hn::Ge(x, steps);
    // The step below x, truncated as the scalar cast does (x < steps here, so it fits 32 bits:
    // AVX2 has no 64-bit conversion of its own, which Highway would emulate).
    const auto step_below =
        hn::DemoteTo(di32, hn::IfThenElse(hn::And(inside, hn::Not(beyond)), x, zero));
    const auto index = hn::PromoteTo(di, step_below);
    const auto below = hn::GatherIndex(d, t.cumulative, index);
    const auto above = hn::GatherIndex(d, t.cumulative + 1, index);
    const auto between =
        hn::Add(below, hn::Mul(hn::Sub(x, hn::PromoteTo(d, step_below)), hn::Sub(above, below)));
    const auto expected = hn::IfThenElse(beyond, last, hn::IfThenElseZero(inside, between));
    const auto seen = hn::IfThenElse(hn::Lt(all, expected), all, expected);  // std::min
    store_first(df, hn::DemoteTo(df, seen), detectable + i, c);
    store_first(df, hn::DemoteTo(df, hn::Sub(all, seen)), rest + i, c);
  }
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lidaremu::core::simd {

HWY_EXPORT(rain_drop_means_impl);

void rain_drop_means(const RainDrops& table, std::span<const double> reach_m,
                     std::span<float> detectable, std::span<float> rest) {
  const std::size_t n = std::min({reach_m.size(), detectable.size(), rest.size()});
  HWY_DYNAMIC_DISPATCH(rain_drop_means_impl)
  (table, reach_m.data(), detectable.data(), rest.data(), n);
}

}  // namespace lidaremu::core::simd
#endif  // HWY_ONCE
