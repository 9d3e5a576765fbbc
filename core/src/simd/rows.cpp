// Engine rows to the sensor frame in double lanes (simd.hpp, rows_to_sensor): the arithmetic of
// the scalar conversion it replaced, operation for operation (the same association, no fused
// multiply-add), so that every row comes out as the same floats on every instruction set.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rows.cpp"
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

void rows_to_sensor_impl(const RowsToSensor& t, const float* rows, std::size_t floats_per_row,
                         std::size_t count, const SensorRows& out) {
  const F64Tag d;
  const hn::Rebind<float, F64Tag> df;
  const hn::RebindToSigned<decltype(df)> di;
  const std::size_t lanes = hn::Lanes(d);
  const auto stride = hn::Set(di, static_cast<std::int32_t>(floats_per_row));
  const auto whole = hn::Mul(hn::Iota(di, 0), stride);
  // The rows' seven values gathered into lanes (rows are interleaved, seven or eight floats): a
  // value written lane by lane and loaded as a vector stalled each load on its stores. A tail's
  // missing lanes read its last row again (never past the batch).
  for (std::size_t first = 0; first < count; first += lanes) {
    const std::size_t n = std::min(lanes, count - first);
    const auto index =
        n == lanes
            ? whole
            : hn::Mul(hn::Min(hn::Iota(di, 0), hn::Set(di, static_cast<std::int32_t>(n - 1))),
                      stride);
    const float* row = rows + first * floats_per_row;
    const auto column = [&](std::size_t k) {
      return hn::PromoteTo(d, hn::GatherIndex(df, row + k, index));
    };
    Vec3 p{column(0), column(1), column(2)};
    Vec3 normal{column(3), column(4), column(5)};
    auto finite = hn::IsFinite(column(6));
    for (const F64Vec& v : {p.x, p.y, p.z, normal.x, normal.y, normal.z}) {
      finite = hn::And(finite, hn::IsFinite(v));
    }
    p = times(t.axes, p);
    const F64Vec scale = hn::Set(d, t.metres_per_unit);
    p = {hn::Mul(p.x, scale), hn::Mul(p.y, scale), hn::Mul(p.z, scale)};
    normal = times(t.axes, normal);
    if (t.posed) {
      p = times(t.pose_linear, p);
      p = {hn::Add(p.x, hn::Set(d, t.pose_translation[0])),
           hn::Add(p.y, hn::Set(d, t.pose_translation[1])),
           hn::Add(p.z, hn::Set(d, t.pose_translation[2]))};
      normal = times(t.pose_linear, normal);
    }
    if (out.exact_x != nullptr) {
      store_first(d, p.x, out.exact_x + first, n);
      store_first(d, p.y, out.exact_y + first, n);
      store_first(d, p.z, out.exact_z + first, n);
    }
    const F64Vec normal_length = length(normal);
    const F64Vec range = length(p);
    const auto plausible = hn::And(
        hn::And(hn::Lt(range, hn::Set(d, t.max_range_m)), hn::Ge(range, hn::Set(d, t.min_range_m))),
        hn::Gt(normal_length, hn::Set(d, t.min_normal_length)));
    normal = {hn::Div(normal.x, normal_length), hn::Div(normal.y, normal_length),
              hn::Div(normal.z, normal_length)};
    const auto store = [&](const F64Vec& v, float* to) {
      store_first(df, hn::DemoteTo(df, v), to + first, n);
    };
    store(p.x, out.x);
    store(p.y, out.y);
    store(p.z, out.z);
    store(normal.x, out.nx);
    store(normal.y, out.ny);
    store(normal.z, out.nz);
    // A non-finite row is that flaw only (the scalar checks stopped at the first).
    HWY_ALIGN double flaws[hn::MaxLanes(d)];
    hn::Store(
        hn::IfThenElse(finite,
                       hn::IfThenElseZero(hn::Not(plausible), hn::Set(d, double{kRowOutOfRange})),
                       hn::Set(d, double{kRowNonFinite})),
        d, flaws);
    for (std::size_t i = 0; i < n; ++i) out.flaws[first + i] = static_cast<std::uint8_t>(flaws[i]);
  }
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lidaremu::core::simd {

HWY_EXPORT(rows_to_sensor_impl);

void rows_to_sensor(const RowsToSensor& transform, const float* rows, std::size_t floats_per_row,
                    std::size_t count, const SensorRows& out) {
  HWY_DYNAMIC_DISPATCH(rows_to_sensor_impl)(transform, rows, floats_per_row, count, out);
}

}  // namespace lidaremu::core::simd
#endif  // HWY_ONCE
