// The geometry stage's arithmetic in double lanes (simd.hpp, hit_geometry and
// ouster_range_offsets): the scalar expressions they replaced, operation for operation (the same
// association, no fused multiply-add), so that every hit comes out as the same floats on every
// instruction set as it did one at a time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/hit_geometry.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "lidaremu/core/simd.hpp"
#include "simd/lanes-inl.h"
#include "simd/vec3-inl.h"
#include "simd/vector_math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {
namespace {

// The first `count` (at most a vector's) values of plane[i * stride], widened to double.
HWY_INLINE F64Vec load_widened(const float* plane, std::size_t first, std::size_t stride,
                               std::size_t count) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  if (stride == 1) return hn::PromoteTo(d, load_first(df, plane + first, count));
  // A tail's missing lanes read the run's last hit again (never past the run).
  const hn::RebindToSigned<decltype(df)> di;
  const auto last = hn::Set(di, static_cast<std::int32_t>(count - 1));
  const auto index =
      hn::Mul(hn::Min(hn::Iota(di, 0), last), hn::Set(di, static_cast<std::int32_t>(stride)));
  return hn::PromoteTo(d, hn::GatherIndex(df, plane + first * stride, index));
}

HWY_INLINE Vec3 load_points(const HitPlanes& h, std::size_t first, std::size_t count) {
  return {load_widened(h.x, first, h.stride, count), load_widened(h.y, first, h.stride, count),
          load_widened(h.z, first, h.stride, count)};
}

}  // namespace

void hit_geometry_impl(const HitPlanes& hits, std::size_t count, const HitWindow& window,
                       const HitGeometry& out) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const std::size_t lanes = hn::Lanes(d);
  const F64Vec zero = hn::Zero(d);
  const F64Vec one = hn::Set(d, 1.0);
  for (std::size_t first = 0; first < count; first += lanes) {
    const std::size_t n = std::min(lanes, count - first);
    const Vec3 p = load_points(hits, first, n);
    const Vec3 normal{load_widened(hits.nx, first, hits.stride, n),
                      load_widened(hits.ny, first, hits.stride, n),
                      load_widened(hits.nz, first, hits.stride, n)};
    const F64Vec distance = length(p);
    // The emitter sits within millimetres of the origin: -p/|p| is the way back.
    const F64Vec cos_theta = hn::Div(hn::Neg(dot(p, normal)), distance);
    const auto accepted =
        hn::And(hn::Gt(cos_theta, zero),
                hn::And(hn::Not(hn::Lt(distance, hn::Set(d, window.min_range_m))),
                        hn::Not(hn::Gt(distance, hn::Set(d, window.max_range_m)))));
    const F64Vec footprint = hn::Mul(
        hn::Set(d, 2.0), hn::Add(hn::Set(d, window.beam_exit_radius_m),
                                 hn::Mul(distance, hn::Set(d, window.beam_tan_half_angle))));
    // Only accepted lanes are kept, where 1 - cos^2 is finite: Max is std::max there.
    const F64Vec tan_theta =
        hn::Div(hn::Sqrt(hn::Max(hn::Sub(one, hn::Mul(cos_theta, cos_theta)), zero)), cos_theta);
    const F64Vec extent = hn::Min(hn::Mul(footprint, tan_theta), hn::Set(d, window.max_extent_m));
    store_first(d, distance, out.distance_m + first, n);
    store_first(df, hn::DemoteTo(df, distance), out.range_m + first, n);
    store_first(df, hn::DemoteTo(df, cos_theta), out.cos_incidence + first, n);
    store_first(df, hn::DemoteTo(df, extent), out.extent_m + first, n);
    HWY_ALIGN double flags[hn::MaxLanes(d)];
    hn::Store(hn::IfThenElseZero(accepted, one), d, flags);
    for (std::size_t i = 0; i < n; ++i) out.accepted[first + i] = flags[i] != 0;
  }
}

void ouster_range_offsets_impl(const OusterRange& r, const HitPlanes& points,
                               const double* distance_m, std::size_t count, float* offset_m) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const std::size_t lanes = hn::Lanes(d);
  const F64Vec mm_per_m = hn::Set(d, 1e3);
  const F64Vec m_per_mm = hn::Set(d, 1e-3);
  for (std::size_t first = 0; first < count; first += lanes) {
    const std::size_t n = std::min(lanes, count - first);
    const Vec3 p = load_points(points, first, n);
    const Vec3 shifted{hn::Sub(hn::Mul(p.x, mm_per_m), hn::Set(d, r.translation_mm[0])),
                       hn::Sub(hn::Mul(p.y, mm_per_m), hn::Set(d, r.translation_mm[1])),
                       hn::Sub(hn::Mul(p.z, mm_per_m), hn::Set(d, r.translation_mm[2]))};
    const Vec3 q = times(r.lidar_from_sensor, shifted);
    const F64Vec along_beam_mm = length({hn::Sub(q.x, hn::Set(d, r.beam_origin_mm[0])),
                                         hn::Sub(q.y, hn::Set(d, r.beam_origin_mm[1])),
                                         hn::Sub(q.z, hn::Set(d, r.beam_origin_mm[2]))});
    const F64Vec reported =
        hn::Mul(hn::Add(along_beam_mm, hn::Set(d, r.origin_to_beam_origin_mm)), m_per_mm);
    const F64Vec offset = hn::Sub(reported, load_first(d, distance_m + first, n));
    store_first(df, hn::DemoteTo(df, offset), offset_m + first, n);
  }
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lidaremu::core::simd {

HWY_EXPORT(hit_geometry_impl);
HWY_EXPORT(ouster_range_offsets_impl);

void hit_geometry(const HitPlanes& hits, std::size_t count, const HitWindow& window,
                  const HitGeometry& out) {
  HWY_DYNAMIC_DISPATCH(hit_geometry_impl)(hits, count, window, out);
}

void ouster_range_offsets(const OusterRange& range, const HitPlanes& points,
                          const double* distance_m, std::size_t count, float* offset_m) {
  HWY_DYNAMIC_DISPATCH(ouster_range_offsets_impl)(range, points, distance_m, count, offset_m);
}

}  // namespace lidaremu::core::simd
#endif  // HWY_ONCE
