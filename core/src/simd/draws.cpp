// Keyed random draws in SIMD lanes, compiled once per instruction set and dispatched at run time;
// the samplers use only operations that round the same way on every target (see simd.hpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/draws.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <numbers>

#include "lidaremu/core/simd.hpp"
#include "simd/lanes-inl.h"
#include "simd/philox-inl.h"
#include "simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {
namespace {

using I32Tag = hn::RebindToSigned<F32Tag>;

// (top 23 bits + 1/2) / 2^23: every step exact in float, never 0 or 1.
HWY_INLINE F32Vec open_unit_lanes(U32Vec w) {
  const F32Tag df;
  const I32Tag di;
  const auto top = hn::BitCast(di, hn::ShiftRight<9>(w));
  return hn::Mul(hn::Add(hn::ConvertTo(df, top), hn::Set(df, 0.5f)), hn::Set(df, 0x1p-23f));
}

HWY_INLINE F32Vec normal_lanes(const PhiloxWords& w) {
  const F32Tag df;
  const F32Vec radius = hn::Sqrt(hn::Mul(hn::Set(df, -2.0f), log_lanes(open_unit_lanes(w.w0))));
  const F32Vec angle =
      hn::Mul(hn::Set(df, 2.0f * std::numbers::pi_v<float>), open_unit_lanes(w.w1));
  return hn::Mul(radius, cos_lanes(angle));
}

// Inversion, in the `small` lanes: the smallest k whose CDF reaches u; stop too once the terms no
// longer move the CDF in float, where u may sit above the CDF's rounded limit.
HWY_INLINE F32Vec poisson_inversion(F32Vec mean, hn::Mask<F32Tag> small, F32Vec u) {
  const F32Tag df;
  F32Vec term = exp_lanes(hn::Neg(hn::IfThenElseZero(small, mean)));
  F32Vec cdf = term;
  F32Vec k = hn::Zero(df);
  auto active = hn::And(small, hn::Gt(u, cdf));
  constexpr int kMaxSteps = 96;  // kPoissonInversionLimit + 20 sigma
  // 1/k rounded once, the same float on every target (a multiply is 3x faster than a divide).
  static constexpr auto kInverse = [] {
    std::array<float, kMaxSteps + 1> inverse{};
    for (std::size_t i = 1; i < inverse.size(); ++i) inverse[i] = 1.0f / static_cast<float>(i);
    return inverse;
  }();
  for (int step = 1; step <= kMaxSteps && !hn::AllFalse(df, active); ++step) {
    k = hn::IfThenElse(active, hn::Add(k, hn::Set(df, 1.0f)), k);
    term = hn::Mul(hn::Mul(term, mean), hn::Set(df, kInverse[static_cast<std::size_t>(step)]));
    cdf = hn::IfThenElse(active, hn::Add(cdf, term), cdf);
    active =
        hn::And(active, hn::And(hn::Gt(u, cdf), hn::Gt(term, hn::Mul(cdf, hn::Set(df, 0x1p-24f)))));
  }
  return k;
}

// A lane's steps depend only on that lane (inactive lanes keep their values), so the result does
// not depend on the vector width.
HWY_INLINE U32Vec poisson_lanes(F32Vec mean, const PhiloxWords& w) {
  const F32Tag df;
  const U32Tag du;
  const I32Tag di;
  const auto positive = hn::Gt(mean, hn::Zero(df));  // false for NaN
  const auto small = hn::And(positive, hn::Lt(mean, hn::Set(df, kPoissonInversionLimit)));
  F32Vec k = hn::Zero(df);
  // A vector of large means only (rain's drops crossed, far out) skips the inversion's exp.
  if (!hn::AllFalse(df, small)) k = poisson_inversion(mean, small, open_unit_lanes(w.w0));
  // The detector's means and rain's detectable drops sit far below the limit: the normal's log
  // and cos are paid only by a vector that has a lane above it.
  const auto large = hn::AndNot(small, positive);
  if (hn::AllFalse(df, large)) return hn::BitCast(du, hn::ConvertTo(di, k));
  // Above the limit: N(mu, mu) rounded, within [0, 1e9] (the mean is capped first, so an
  // infinite one cannot make a NaN nor a count overflow).
  const F32Vec ceiling = hn::Set(df, 1e9f);
  const F32Vec capped = hn::Min(hn::IfThenElseZero(positive, mean), ceiling);
  const F32Vec approx =
      hn::Min(hn::Max(hn::Floor(hn::Add(hn::Add(capped, hn::Mul(hn::Sqrt(capped), normal_lanes(w))),
                                        hn::Set(df, 0.5f))),
                      hn::Zero(df)),
              ceiling);
  const F32Vec count = hn::IfThenElse(small, k, hn::IfThenElseZero(positive, approx));
  return hn::BitCast(du, hn::ConvertTo(di, count));
}

// Calls emit(lane_words, first_index, count) for whole vectors of beams, then for the tail.
template <typename Emit>
HWY_INLINE void for_each_vector(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
                                std::size_t n, Emit&& emit) {
  const std::size_t lanes = hn::Lanes(F32Tag());
  for (std::size_t i = 0; i < n; i += lanes) {
    emit(philox_lanes(key, first_beam + static_cast<std::uint32_t>(i), draw), i,
         std::min(lanes, n - i));
  }
}

}  // namespace

void uniforms_impl(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw, float* out,
                   std::size_t n) {
  for_each_vector(key, first_beam, draw, n,
                  [&](const PhiloxWords& w, std::size_t i, std::size_t c) {
                    store_first(F32Tag(), open_unit_lanes(w.w0), out + i, c);
                  });
}

void normals_impl(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw, float* out,
                  std::size_t n) {
  for_each_vector(key, first_beam, draw, n,
                  [&](const PhiloxWords& w, std::size_t i, std::size_t c) {
                    store_first(F32Tag(), normal_lanes(w), out + i, c);
                  });
}

void normals_at_impl(const DrawKey& key, const std::uint32_t* beams, const std::uint32_t* draws,
                     float* out, std::size_t n) {
  const U32Tag du;
  const std::size_t lanes = hn::Lanes(du);
  for (std::size_t i = 0; i < n; i += lanes) {
    const std::size_t c = std::min(lanes, n - i);
    const auto words =
        philox_lanes(key, load_first(du, beams + i, c), load_first(du, draws + i, c));
    store_first(F32Tag(), normal_lanes(words), out + i, c);
  }
}

void poissons_impl(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
                   const float* means, std::uint32_t* out, std::size_t n) {
  const F32Tag df;
  for_each_vector(
      key, first_beam, draw, n, [&](const PhiloxWords& w, std::size_t i, std::size_t c) {
        store_first(U32Tag(), poisson_lanes(load_first(df, means + i, c), w), out + i, c);
      });
}

std::int64_t target_impl() { return HWY_TARGET; }

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cctype>
#include <stdexcept>

namespace lidaremu::core::simd {

HWY_EXPORT(uniforms_impl);
HWY_EXPORT(normals_impl);
HWY_EXPORT(normals_at_impl);
HWY_EXPORT(poissons_impl);
HWY_EXPORT(target_impl);

namespace {

// What this CPU runs of what the build holds, read once before any target is forced.
const std::vector<std::int64_t>& compiled_and_supported() {
  static const std::vector<std::int64_t> targets = [] {
    hwy::SetSupportedTargetsForTest(0);
    return hwy::SupportedAndGeneratedTargets();
  }();
  return targets;
}

bool same_name(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::vector<std::string> available_targets() {
  std::vector<std::string> names;
  for (const std::int64_t t : compiled_and_supported()) names.emplace_back(hwy::TargetName(t));
  return names;
}

std::string current_target() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(target_impl)()); }

void use_target(std::string_view name) {
  const auto& targets = compiled_and_supported();
  std::int64_t chosen = 0;  // 0: no restriction, the best
  if (!name.empty() && !same_name(name, "best")) {
    const auto it = std::find_if(targets.begin(), targets.end(), [&](std::int64_t t) {
      return same_name(name, hwy::TargetName(t));
    });
    if (it == targets.end()) {
      std::string known;
      for (const auto& n : available_targets()) known += (known.empty() ? "" : ", ") + n;
      throw std::invalid_argument("SIMD target '" + std::string(name) +
                                  "' is not one this build runs on this CPU (choose from: best, " +
                                  known + ")");
    }
    chosen = *it;
  }
  hwy::SetSupportedTargetsForTest(chosen);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
}

void uniforms(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
              std::span<float> out) {
  HWY_DYNAMIC_DISPATCH(uniforms_impl)(key, first_beam, draw, out.data(), out.size());
}

void normals(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
             std::span<float> out) {
  HWY_DYNAMIC_DISPATCH(normals_impl)(key, first_beam, draw, out.data(), out.size());
}

void normals_at(const DrawKey& key, std::span<const std::uint32_t> beams,
                std::span<const std::uint32_t> draws, std::span<float> out) {
  const std::size_t n = std::min({beams.size(), draws.size(), out.size()});
  HWY_DYNAMIC_DISPATCH(normals_at_impl)(key, beams.data(), draws.data(), out.data(), n);
}

void poissons(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
              std::span<const float> means, std::span<std::uint32_t> out) {
  const std::size_t n = std::min(means.size(), out.size());
  HWY_DYNAMIC_DISPATCH(poissons_impl)(key, first_beam, draw, means.data(), out.data(), n);
}

}  // namespace lidaremu::core::simd
#endif  // HWY_ONCE
