// What the report stage derives from its echoes, in double lanes (simd.hpp, report_echoes and
// photon_counts): the scalar expressions of physics.hpp it replaces (quantise_range,
// received_power of the white target with the coaxial crossover, estimated_reflectivity below the
// white target, Receiver::photons, echo_pulse_width_from_asin_s), operation for operation (the
// same association, no fused multiply-add), so the same bits on every instruction set.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/report_echoes.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <span>

#include "lidaremu/core/physics.hpp"
#include "lidaremu/core/simd.hpp"
#include "simd/lanes-inl.h"
#include "simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {
namespace {

// Receiver::photons(watts x watts_per_unit, seconds), clamped to [fewest, 65535], as int32 lanes
// (truncated, as the cast to an unsigned 16-bit count truncates).
HWY_INLINE hn::Vec<hn::Rebind<std::int32_t, F64Tag>> photon_count(F64Vec watts,
                                                                  const PhotonCounting& c) {
  const F64Tag d;
  const auto photons =
      hn::Mul(hn::Div(hn::Mul(hn::Mul(watts, hn::Set(d, c.watts_per_unit)), hn::Set(d, c.seconds)),
                      hn::Set(d, c.photon_energy_j)),
              hn::Set(d, c.quantum_efficiency));
  const auto clamped = hn::Min(hn::Max(photons, hn::Set(d, c.fewest)), hn::Set(d, 65535.0));
  return hn::DemoteTo(hn::Rebind<std::int32_t, F64Tag>(), clamped);
}

}  // namespace

void photon_counts_impl(const float* power_w, const PhotonCounting& counting, std::uint16_t* out,
                        std::size_t n) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const hn::Rebind<std::uint16_t, F64Tag> du;
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t k = std::min(lanes, n - i);
    const auto watts = hn::PromoteTo(d, load_first(df, power_w + i, k));
    store_first(du, hn::DemoteTo(du, photon_count(watts, counting)), out + i, k);
  }
}

void report_echoes_impl(const ReportEchoes& e, std::size_t n, const ReportScales& s) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const hn::Rebind<std::int32_t, F64Tag> di;
  const hn::Rebind<std::uint16_t, F64Tag> du;
  const std::size_t lanes = hn::Lanes(d);
  const auto zero = hn::Zero(d);
  const auto one = hn::Set(d, 1.0);
  const auto unit = hn::Set(d, s.range_unit_m);
  const auto max_range = hn::Set(d, s.max_range_m);
  const auto white_constant = hn::Set(d, s.system_constant * (1.0 / std::numbers::pi));
  const auto full_overlap = hn::Set(d, s.full_overlap_m);
  const bool form_factor = s.full_overlap_m > 0;
  const auto min_overlap = hn::Set(d, s.min_overlap);
  const auto two_tau = hn::Set(d, 2.0 * s.pulse_half_width_s);
  const auto two_over_pi = hn::Set(d, 2.0 / std::numbers::pi);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t k = std::min(lanes, n - i);
    const auto range_f = load_first(df, e.range_m + i, k);
    const auto range = hn::PromoteTo(d, range_f);
    const auto power = hn::PromoteTo(d, load_first(df, e.power_w + i, k));
    const auto threshold = hn::PromoteTo(d, load_first(df, e.threshold_w + i, k));

    // physics::quantise_range of the float sum.
    const auto offset_range =
        hn::PromoteTo(d, hn::Add(range_f, load_first(df, e.range_offset_m + i, k)));
    const auto quantised = hn::Mul(round_up_halves(hn::Div(offset_range, unit)), unit);
    const auto outside = hn::Or(hn::Le(quantised, zero), hn::Gt(quantised, max_range));
    store_first(df, hn::DemoteTo(df, hn::IfThenZeroElse(outside, quantised)),
                e.reported_range_m + i, k);

    // received_power(K, 1/pi, r, T, max(xi, min_overlap)): ((K x 1/pi) T) xi / r^2, the first
    // product the same for every echo.
    auto crossover = one;
    if (e.crossover != nullptr) {
      crossover = load_first(d, e.crossover + i, k);
    } else if (form_factor) {
      const auto share = hn::Div(range, full_overlap);
      crossover = hn::IfThenElse(hn::Ge(range, full_overlap), one, hn::Mul(share, share));
    }
    crossover = hn::IfThenElse(hn::Lt(crossover, min_overlap), min_overlap, crossover);
    const auto transmission = hn::PromoteTo(d, load_first(df, e.transmission + i, k));
    const auto white =
        hn::Div(hn::Mul(hn::Mul(white_constant, transmission), crossover), hn::Mul(range, range));
    store_first(d, white, e.white_w + i, k);

    // estimated_reflectivity: 0 without light, lround(100 x equivalent) up to the white target's,
    // -1 (the scalar expression's) above.
    const auto equivalent = hn::Div(power, white);
    const auto dark = hn::Or(hn::Not(hn::Gt(white, zero)), hn::Not(hn::Gt(power, zero)));
    const auto percent = round_up_halves(hn::Mul(hn::Set(d, 100.0), equivalent));
    const auto brighter = hn::AndNot(dark, hn::Gt(equivalent, one));
    const auto reflectivity =
        hn::IfThenElse(brighter, hn::Set(d, -1.0), hn::IfThenZeroElse(dark, percent));
    store_first(di, hn::DemoteTo(di, reflectivity), e.reflectivity + i, k);

    store_first(du, hn::DemoteTo(du, photon_count(power, s.signal)), e.signal_photons + i, k);

    // echo_pulse_width_from_asin_s x 1e9: 2 tau_H (1 - 2/pi asin) + 2 extent / c.
    const auto asin_ratio = hn::PromoteTo(d, load_first(df, e.asin_ratio + i, k));
    const auto extent = hn::PromoteTo(d, load_first(df, e.extent_m + i, k));
    const auto above = hn::Mul(two_tau, hn::Sub(one, hn::Mul(two_over_pi, asin_ratio)));
    const auto width_s = hn::Add(
        above, hn::Div(hn::Mul(hn::Set(d, 2.0), extent), hn::Set(d, physics::kSpeedOfLight)));
    const auto width_ns =
        hn::IfThenElseZero(hn::Gt(power, threshold), hn::Mul(width_s, hn::Set(d, 1e9)));
    store_first(df, hn::DemoteTo(df, width_ns), e.pulse_width_ns + i, k);
  }
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lidaremu::core::simd {

HWY_EXPORT(photon_counts_impl);
HWY_EXPORT(report_echoes_impl);

void photon_counts(std::span<const float> power_w, const PhotonCounting& counting,
                   std::span<std::uint16_t> out) {
  const std::size_t n = std::min(power_w.size(), out.size());
  HWY_DYNAMIC_DISPATCH(photon_counts_impl)(power_w.data(), counting, out.data(), n);
}

void report_echoes(const ReportEchoes& echoes, std::size_t count, const ReportScales& scales) {
  HWY_DYNAMIC_DISPATCH(report_echoes_impl)(echoes, count, scales);
}

}  // namespace lidaremu::core::simd
#endif  // HWY_ONCE
