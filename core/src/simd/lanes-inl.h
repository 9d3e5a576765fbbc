// Loading and storing the first `count` lanes of a vector: whole vectors straight from and to
// memory, a run's tail through a buffer of one vector (never reading or writing past the run).
// Included once per instruction set (foreach_target).
#if defined(LIDAREMU_SIMD_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LIDAREMU_SIMD_LANES_INL_H_
#undef LIDAREMU_SIMD_LANES_INL_H_
#else
#define LIDAREMU_SIMD_LANES_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The first `count` lanes from `in`; the others zero.
template <class D>
HWY_INLINE hn::Vec<D> load_first(D d, const hn::TFromD<D>* in, std::size_t count) {
  if (count == hn::Lanes(d)) return hn::LoadU(d, in);
  HWY_ALIGN hn::TFromD<D> lanes[hn::MaxLanes(d)] = {};
  std::copy_n(in, count, lanes);
  return hn::Load(d, lanes);
}

// Stores the first `count` lanes of v at out.
template <class D>
HWY_INLINE void store_first(D d, hn::Vec<D> v, hn::TFromD<D>* out, std::size_t count) {
  if (count == hn::Lanes(d)) {
    hn::StoreU(v, d, out);
    return;
  }
  HWY_ALIGN hn::TFromD<D> lanes[hn::MaxLanes(d)];
  hn::Store(v, d, lanes);
  std::copy_n(lanes, count, out);
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // LIDAREMU_SIMD_LANES_INL_H_
