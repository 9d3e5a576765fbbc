// Elementary functions on float lanes (and atan2 on double lanes) from SLEEF's deterministic family
// (Sleef_cinz_*: no fused multiply-add, the same bits on every ISA), the variant matching each
// Highway target's vector width; 1-ulp accuracy (u10). Included once per instruction set
// (foreach_target).
#if defined(LIDAREMU_SIMD_VECTOR_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LIDAREMU_SIMD_VECTOR_MATH_INL_H_
#undef LIDAREMU_SIMD_VECTOR_MATH_INL_H_
#else
#define LIDAREMU_SIMD_VECTOR_MATH_INL_H_
#endif

#include <hwy/highway.h>
#include <sleef.h>

#include <cstddef>

#ifndef LIDAREMU_SIMD_SLEEF_WIDE_DECLARATIONS
#define LIDAREMU_SIMD_SLEEF_WIDE_DECLARATIONS
#include <immintrin.h>
// sleef.h declares its AVX and AVX-512 functions only when the whole file is compiled for them;
// Highway compiles each function for its own target, so the wide ones are declared here, with
// sleef.h's signatures.
extern "C" {
__m256 Sleef_cinz_logf8_u10avx(__m256);
__m256 Sleef_cinz_expf8_u10avx(__m256);
__m256 Sleef_cinz_cosf8_u10avx(__m256);
__m512 Sleef_cinz_logf16_u10avx512fnofma(__m512);
__m512 Sleef_cinz_expf16_u10avx512fnofma(__m512);
__m512 Sleef_cinz_cosf16_u10avx512fnofma(__m512);
__m256 Sleef_cinz_asinf8_u10avx(__m256);
__m512 Sleef_cinz_asinf16_u10avx512fnofma(__m512);
__m256d Sleef_cinz_atan2d4_u10avx(__m256d, __m256d);
__m512d Sleef_cinz_atan2d8_u10avx512fnofma(__m512d, __m512d);
__m256d Sleef_cinz_expd4_u10avx(__m256d);
__m512d Sleef_cinz_expd8_u10avx512fnofma(__m512d);
}
#endif

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using F32Tag = hn::ScalableTag<float>;
using F32Vec = hn::Vec<F32Tag>;
using F64Tag = hn::ScalableTag<double>;
using F64Vec = hn::Vec<F64Tag>;

#undef LIDAREMU_SLEEF
#undef LIDAREMU_SLEEF_D
#undef LIDAREMU_SLEEF_PER_LANE
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define LIDAREMU_SLEEF(fn) Sleef_cinz_##fn##f16_u10avx512fnofma
#define LIDAREMU_SLEEF_D(fn) Sleef_cinz_##fn##d8_u10avx512fnofma
#elif HWY_TARGET == HWY_AVX2
#define LIDAREMU_SLEEF(fn) Sleef_cinz_##fn##f8_u10avx
#define LIDAREMU_SLEEF_D(fn) Sleef_cinz_##fn##d4_u10avx
#elif HWY_TARGET == HWY_SSE4
#define LIDAREMU_SLEEF(fn) Sleef_cinz_##fn##f4_u10sse4
#define LIDAREMU_SLEEF_D(fn) Sleef_cinz_##fn##d2_u10sse4
#elif HWY_TARGET == HWY_SSSE3
#define LIDAREMU_SLEEF(fn) Sleef_cinz_##fn##f4_u10sse2
#define LIDAREMU_SLEEF_D(fn) Sleef_cinz_##fn##d2_u10sse2
#else  // scalar and emulated targets: SLEEF's portable C, lane by lane
#define LIDAREMU_SLEEF(fn) Sleef_cinz_##fn##f1_u10purec
#define LIDAREMU_SLEEF_D(fn) Sleef_cinz_##fn##d1_u10purec
#define LIDAREMU_SLEEF_PER_LANE 1
#endif

template <typename Fn>
HWY_INLINE F32Vec apply_lanes(F32Vec v, Fn fn) {
#ifdef LIDAREMU_SLEEF_PER_LANE
  const F32Tag d;
  HWY_ALIGN float lanes[hn::MaxLanes(d)];
  hn::Store(v, d, lanes);
  for (std::size_t i = 0; i < hn::Lanes(d); ++i) lanes[i] = fn(lanes[i]);
  return hn::Load(d, lanes);
#else
  return F32Vec{fn(v.raw)};
#endif
}

HWY_INLINE F32Vec log_lanes(F32Vec v) {
  return apply_lanes(v, [](auto x) { return LIDAREMU_SLEEF(log)(x); });
}
HWY_INLINE F32Vec exp_lanes(F32Vec v) {
  return apply_lanes(v, [](auto x) { return LIDAREMU_SLEEF(exp)(x); });
}
HWY_INLINE F32Vec asin_lanes(F32Vec v) {
  return apply_lanes(v, [](auto x) { return LIDAREMU_SLEEF(asin)(x); });
}
HWY_INLINE F32Vec cos_lanes(F32Vec v) {
  return apply_lanes(v, [](auto x) { return LIDAREMU_SLEEF(cos)(x); });
}

// atan2(y, x) on double lanes (the beam search of raw rows, where a column is 0.18 degrees).
HWY_INLINE F64Vec atan2_lanes(F64Vec y, F64Vec x) {
#ifdef LIDAREMU_SLEEF_PER_LANE
  const F64Tag d;
  HWY_ALIGN double ys[hn::MaxLanes(d)];
  HWY_ALIGN double xs[hn::MaxLanes(d)];
  hn::Store(y, d, ys);
  hn::Store(x, d, xs);
  for (std::size_t i = 0; i < hn::Lanes(d); ++i) ys[i] = LIDAREMU_SLEEF_D(atan2)(ys[i], xs[i]);
  return hn::Load(d, ys);
#else
  return F64Vec{LIDAREMU_SLEEF_D(atan2)(y.raw, x.raw)};
#endif
}

// exp on double lanes (the surface's gloss lobe).
HWY_INLINE F64Vec exp_lanes(F64Vec v) {
#ifdef LIDAREMU_SLEEF_PER_LANE
  const F64Tag d;
  HWY_ALIGN double xs[hn::MaxLanes(d)];
  hn::Store(v, d, xs);
  for (std::size_t i = 0; i < hn::Lanes(d); ++i) xs[i] = LIDAREMU_SLEEF_D(exp)(xs[i]);
  return hn::Load(d, xs);
#else
  return F64Vec{LIDAREMU_SLEEF_D(exp)(v.raw)};
#endif
}

// std::round on double lanes for x >= 0 (halves away from zero, as std::round and std::lround
// round them): the truncation, and one more where the part cut off is a half or more (the
// truncation and the subtraction are exact). Below zero it never rounds away from zero: callers
// clamp or test such values to zero.
HWY_INLINE F64Vec round_up_halves(F64Vec x) {
  const F64Tag d;
  const auto cut = hn::Trunc(x);
  return hn::IfThenElse(hn::Ge(hn::Sub(x, cut), hn::Set(d, 0.5)), hn::Add(cut, hn::Set(d, 1.0)),
                        cut);
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // LIDAREMU_SIMD_VECTOR_MATH_INL_H_
