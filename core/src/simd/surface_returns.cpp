// The default surface's arithmetic in double lanes (simd.hpp, surface_returns): the scalar
// expressions of physics.hpp it replaces (lambertian_brdf, beckmann_masking, glossy_backscatter,
// crossover on coaxial optics, received_power), operation for operation (the same association, no
// fused multiply-add); the gloss lobe's exp is SLEEF's, the same bits on every instruction set.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/surface_returns.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <numbers>

#include "lidaremu/core/simd.hpp"
#include "simd/lanes-inl.h"
#include "simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {
namespace {

// std::max(x, 0.0): x unless x < 0 (a negative zero stays one, as there).
HWY_INLINE F64Vec at_least_zero(F64Vec x) {
  const F64Tag d;
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Zero(d), x);
}

// physics::beckmann_masking(cos, roughness).
HWY_INLINE F64Vec beckmann_masking(F64Vec cos_theta, F64Vec roughness) {
  const F64Tag d;
  const auto one = hn::Set(d, 1.0);
  const auto sin_theta = hn::Sqrt(at_least_zero(hn::Sub(one, hn::Mul(cos_theta, cos_theta))));
  const auto a = hn::Div(cos_theta, hn::Mul(roughness, sin_theta));
  const auto rational =
      hn::Div(hn::Add(hn::Mul(hn::Set(d, 3.535), a), hn::Mul(hn::Mul(hn::Set(d, 2.181), a), a)),
              hn::Add(hn::Add(one, hn::Mul(hn::Set(d, 2.276), a)),
                      hn::Mul(hn::Mul(hn::Set(d, 2.577), a), a)));
  const auto unmasked = hn::Or(hn::Not(hn::Gt(sin_theta, hn::Zero(d))), hn::Ge(a, hn::Set(d, 1.6)));
  return hn::IfThenElse(unmasked, one, rational);
}

// physics::glossy_backscatter(f0, roughness, cos).
HWY_INLINE F64Vec glossy_backscatter(F64Vec f0, F64Vec roughness, F64Vec cos_theta) {
  const F64Tag d;
  const auto zero = hn::Zero(d);
  const auto c2 = hn::Mul(cos_theta, cos_theta);
  const auto tan2 = hn::Div(hn::Sub(hn::Set(d, 1.0), c2), c2);
  const auto m2 = hn::Mul(roughness, roughness);
  const auto exponent = hn::Div(tan2, m2);
  const auto denominator =
      hn::Mul(hn::Mul(hn::Mul(hn::Mul(hn::Set(d, 4.0 * std::numbers::pi), m2), c2), c2), cos_theta);
  const auto lobe = hn::Div(
      hn::Mul(hn::Mul(f0, exp_lanes(hn::Neg(exponent))), beckmann_masking(cos_theta, roughness)),
      denominator);
  const auto lit =
      hn::And(hn::And(hn::Gt(f0, zero), hn::Gt(cos_theta, zero)),
              hn::And(hn::Gt(roughness, zero), hn::Not(hn::Gt(exponent, hn::Set(d, 700.0)))));
  return hn::IfThenElseZero(lit, lobe);
}

}  // namespace

void surface_returns_impl(const SurfaceCandidates& c, std::size_t n, const SurfaceOptics& o) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const std::size_t lanes = hn::Lanes(d);
  const auto pi = hn::Set(d, std::numbers::pi);
  const auto one = hn::Set(d, 1.0);
  const auto system_constant = hn::Set(d, o.system_constant);
  const auto full_overlap = hn::Set(d, o.full_overlap_m);
  const bool form_factor = o.full_overlap_m > 0;
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t k = std::min(lanes, n - i);
    const auto range = hn::PromoteTo(d, load_first(df, c.range_m + i, k));
    const auto cos_theta = hn::PromoteTo(d, load_first(df, c.cos_incidence + i, k));
    const auto gain = hn::PromoteTo(d, load_first(df, c.gain + i, k));
    const auto lambertian =
        hn::Div(hn::Mul(load_first(d, c.reflectivity + i, k), at_least_zero(cos_theta)), pi);
    const auto surface =
        hn::Add(lambertian, glossy_backscatter(load_first(d, c.fresnel_f0 + i, k),
                                               load_first(d, c.roughness + i, k), cos_theta));
    const auto brdf = hn::Mul(surface, gain);
    store_first(df, hn::DemoteTo(df, hn::Mul(brdf, pi)), c.lambertian + i, k);
    auto crossover = one;
    if (form_factor) {
      const auto share = hn::Div(range, full_overlap);
      crossover = hn::IfThenElse(hn::Ge(range, full_overlap), one, hn::Mul(share, share));
    }
    const auto power =
        hn::Mul(hn::Div(hn::Mul(hn::Mul(system_constant, brdf), crossover), hn::Mul(range, range)),
                load_first(d, c.ray_weight + i, k));
    store_first(df, hn::DemoteTo(df, power), c.power_w + i, k);
  }
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lidaremu::core::simd {

HWY_EXPORT(surface_returns_impl);

void surface_returns(const SurfaceCandidates& candidates, std::size_t count,
                     const SurfaceOptics& optics) {
  HWY_DYNAMIC_DISPATCH(surface_returns_impl)(candidates, count, optics);
}

}  // namespace lidaremu::core::simd
#endif  // HWY_ONCE
