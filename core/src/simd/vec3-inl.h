// Three-vectors of double lanes, with the association every scalar expression they replace was
// written in (no fused multiply-add: the files including this compile with -ffp-contract=off), so
// that each lane holds the scalar result's bits. Included once per instruction set
// (foreach_target).
#if defined(LIDAREMU_SIMD_VEC3_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LIDAREMU_SIMD_VEC3_INL_H_
#undef LIDAREMU_SIMD_VEC3_INL_H_
#else
#define LIDAREMU_SIMD_VEC3_INL_H_
#endif

#include <hwy/highway.h>

#include "simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {

struct Vec3 {
  F64Vec x, y, z;
};

// m (row-major 3x3) times v, each component as (m0 x + m1 y) + m2 z.
HWY_INLINE Vec3 times(const double* m, const Vec3& v) {
  const F64Tag d;
  const auto row = [&](const double* r) {
    return hn::Add(hn::Add(hn::Mul(hn::Set(d, r[0]), v.x), hn::Mul(hn::Set(d, r[1]), v.y)),
                   hn::Mul(hn::Set(d, r[2]), v.z));
  };
  return {row(m), row(m + 3), row(m + 6)};
}

// a . b as (a.x b.x + a.y b.y) + a.z b.z.
HWY_INLINE F64Vec dot(const Vec3& a, const Vec3& b) {
  return hn::Add(hn::Add(hn::Mul(a.x, b.x), hn::Mul(a.y, b.y)), hn::Mul(a.z, b.z));
}

// |v| as sqrt((x^2 + y^2) + z^2).
HWY_INLINE F64Vec length(const Vec3& v) { return hn::Sqrt(dot(v, v)); }

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // LIDAREMU_SIMD_VEC3_INL_H_
