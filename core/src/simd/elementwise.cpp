// Elementary functions over arrays of floats, in SIMD lanes, for the stages that gather a run's
// candidates or echoes into arrays (the same bits on every target: see simd.hpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/elementwise.cpp"
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
namespace {

// x[i] = fn(x[i]), in place.
template <typename Fn>
HWY_INLINE void each_in_place(float* x, std::size_t n, Fn fn) {
  const F32Tag d;
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t c = std::min(lanes, n - i);
    store_first(d, fn(load_first(d, x + i, c)), x + i, c);
  }
}

}  // namespace

void exp_impl(float* x, std::size_t n) {
  each_in_place(x, n, [](F32Vec v) { return exp_lanes(v); });
}
void asin_impl(float* x, std::size_t n) {
  each_in_place(x, n, [](F32Vec v) { return asin_lanes(v); });
}
void asin_root_ratio_impl(const float* numerator, const float* denominator, float* out,
                          std::size_t n) {
  const F32Tag d;
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t c = std::min(lanes, n - i);
    const F32Vec num = load_first(d, numerator + i, c);
    const F32Vec den = load_first(d, denominator + i, c);
    // Lanes where the ratio is 1 or more (or NaN) are 0 before the asin, as in the scalar form.
    const F32Vec root = hn::IfThenElseZero(hn::Gt(den, num), hn::Sqrt(hn::Div(num, den)));
    store_first(d, asin_lanes(root), out + i, c);
  }
}
void attenuate_two_way_impl(double extinction_per_m, const float* range_m, float* power_w,
                            std::size_t n) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const std::size_t lanes = hn::Lanes(d);
  const auto minus_two_extinction = hn::Set(d, -2.0 * extinction_per_m);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t c = std::min(lanes, n - i);
    const auto range = hn::PromoteTo(d, load_first(df, range_m + i, c));
    const auto transmission = hn::DemoteTo(df, exp_lanes(hn::Mul(minus_two_extinction, range)));
    store_first(df, hn::Mul(load_first(df, power_w + i, c), transmission), power_w + i, c);
  }
}
void atan2_impl(const double* y, const double* x, double* out, std::size_t n) {
  const F64Tag d;
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t c = std::min(lanes, n - i);
    store_first(d, atan2_lanes(load_first(d, y + i, c), load_first(d, x + i, c)), out + i, c);
  }
}

// std::round(range x scale / unit) (halves away from zero) for ranges at or above zero, kept
// within [0, most], a vector of ranges at a time: the product and the division IEEE operations
// in double lanes (a scale of 1 multiplies exactly), then round_up_halves.
template <typename Store>
HWY_INLINE void range_units(const float* range_m, double scale, double unit_m, double most,
                            std::size_t n, const Store& store) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const std::size_t lanes = hn::Lanes(d);
  const auto metres_scale = hn::Set(d, scale);
  const auto unit = hn::Set(d, unit_m);
  const auto zero = hn::Zero(d);
  const auto cap = hn::Set(d, most);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t c = std::min(lanes, n - i);
    const auto quotient =
        hn::Div(hn::Mul(hn::PromoteTo(d, load_first(df, range_m + i, c)), metres_scale), unit);
    store(hn::DemoteTo(hn::Rebind<std::int32_t, F64Tag>(),
                       hn::Min(hn::Max(round_up_halves(quotient), zero), cap)),
          i, c);
  }
}

void range_units_u16_impl(const float* range_m, double unit_m, std::uint16_t* out, std::size_t n) {
  const hn::Rebind<std::uint16_t, F64Tag> du;
  range_units(range_m, 1.0, unit_m, 65535.0, n, [&](auto units, std::size_t i, std::size_t c) {
    store_first(du, hn::DemoteTo(du, units), out + i, c);
  });
}

void range_units_u32_impl(const float* range_m, double scale, double unit_m, std::uint32_t* out,
                          std::size_t n) {
  const hn::Rebind<std::uint32_t, F64Tag> du;
  range_units(range_m, scale, unit_m, 2147483647.0, n,
              [&](auto units, std::size_t i, std::size_t c) {
                store_first(du, hn::BitCast(du, units), out + i, c);
              });
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lidaremu::core::simd {

HWY_EXPORT(exp_impl);
HWY_EXPORT(asin_impl);
HWY_EXPORT(asin_root_ratio_impl);
HWY_EXPORT(atan2_impl);
HWY_EXPORT(attenuate_two_way_impl);
HWY_EXPORT(range_units_u16_impl);
HWY_EXPORT(range_units_u32_impl);

void exp_each(std::span<float> x) { HWY_DYNAMIC_DISPATCH(exp_impl)(x.data(), x.size()); }
void asin_each(std::span<float> x) { HWY_DYNAMIC_DISPATCH(asin_impl)(x.data(), x.size()); }
void asin_root_ratio(std::span<const float> numerator, std::span<const float> denominator,
                     std::span<float> out) {
  const std::size_t n = std::min({numerator.size(), denominator.size(), out.size()});
  HWY_DYNAMIC_DISPATCH(asin_root_ratio_impl)(numerator.data(), denominator.data(), out.data(), n);
}
void attenuate_two_way(double extinction_per_m, std::span<const float> range_m,
                       std::span<float> power_w) {
  const std::size_t n = std::min(range_m.size(), power_w.size());
  HWY_DYNAMIC_DISPATCH(attenuate_two_way_impl)(extinction_per_m, range_m.data(), power_w.data(), n);
}
void atan2_each(std::span<const double> y, std::span<const double> x, std::span<double> out) {
  const std::size_t n = std::min({y.size(), x.size(), out.size()});
  HWY_DYNAMIC_DISPATCH(atan2_impl)(y.data(), x.data(), out.data(), n);
}
void range_units_u16(std::span<const float> range_m, double unit_m, std::span<std::uint16_t> out) {
  const std::size_t n = std::min(range_m.size(), out.size());
  HWY_DYNAMIC_DISPATCH(range_units_u16_impl)(range_m.data(), unit_m, out.data(), n);
}
void range_units_u32(std::span<const float> range_m, double unit_m, std::span<std::uint32_t> out) {
  const std::size_t n = std::min(range_m.size(), out.size());
  HWY_DYNAMIC_DISPATCH(range_units_u32_impl)(range_m.data(), 1.0, unit_m, out.data(), n);
}
void scaled_range_units_u32(std::span<const float> range_m, double scale, double unit,
                            std::span<std::uint32_t> out) {
  const std::size_t n = std::min(range_m.size(), out.size());
  HWY_DYNAMIC_DISPATCH(range_units_u32_impl)(range_m.data(), scale, unit, out.data(), n);
}

}  // namespace lidaremu::core::simd
#endif  // HWY_ONCE
