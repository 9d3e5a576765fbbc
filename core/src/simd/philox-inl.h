// Philox-4x32-10 in SIMD lanes, one beam per lane: the same rounds and words as CounterRng, so a
// draw is the same number whichever path computed it. Included once per instruction set
// (Highway's foreach_target idiom: the guard toggles with HWY_TARGET_TOGGLE).
#if defined(LIDAREMU_SIMD_PHILOX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LIDAREMU_SIMD_PHILOX_INL_H_
#undef LIDAREMU_SIMD_PHILOX_INL_H_
#else
#define LIDAREMU_SIMD_PHILOX_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

#include "lidaremu/core/counter_rng.hpp"

HWY_BEFORE_NAMESPACE();
namespace lidaremu::core::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using U32Tag = hn::ScalableTag<std::uint32_t>;
using U32Vec = hn::Vec<U32Tag>;

struct PhiloxWords {
  U32Vec w0, w1, w2, w3;
};

// The high and low halves of a * m in every lane (Highway 1.0 multiplies u32 to u64 on even
// lanes only: the odd lanes are shifted down and multiplied the same way).
HWY_INLINE void mul_hi_lo(U32Vec a, std::uint32_t m, U32Vec& hi, U32Vec& lo) {
  const U32Tag d;
  const U32Vec mv = hn::Set(d, m);
  lo = hn::Mul(a, mv);
#if HWY_TARGET == HWY_SCALAR
  hi = hn::Set(d, static_cast<std::uint32_t>(hn::GetLane(hn::MulEven(a, mv)) >> 32));
#else
  const hn::RepartitionToWide<U32Tag> dw;
  const auto even = hn::MulEven(a, mv);
  const auto odd = hn::MulEven(hn::BitCast(d, hn::ShiftRight<32>(hn::BitCast(dw, a))), mv);
  hi = hn::OddEven(hn::BitCast(d, odd), hn::BitCast(d, hn::ShiftRight<32>(even)));
#endif
}

// Draw draws[i] of beam beams[i] in lane i.
HWY_INLINE PhiloxWords philox_lanes(const DrawKey& key, U32Vec beams, U32Vec draws) {
  const U32Tag d;
  U32Vec c0 = hn::Set(d, key.frame);
  U32Vec c1 = beams;
  U32Vec c2 = hn::Set(d, (static_cast<std::uint32_t>(key.stage) << 16) ^ key.sensor);
  U32Vec c3 = draws;
  auto k0 = static_cast<std::uint32_t>(key.seed);
  auto k1 = static_cast<std::uint32_t>(key.seed >> 32);
  for (int round = 0; round < 10; ++round) {
    U32Vec hi0, lo0, hi1, lo1;
    mul_hi_lo(c0, CounterRng::kMul0, hi0, lo0);
    mul_hi_lo(c2, CounterRng::kMul1, hi1, lo1);
    c0 = hn::Xor(hn::Xor(hi1, c1), hn::Set(d, k0));
    c1 = lo1;
    c2 = hn::Xor(hn::Xor(hi0, c3), hn::Set(d, k1));
    c3 = lo0;
    k0 += CounterRng::kWeyl0;
    k1 += CounterRng::kWeyl1;
  }
  return {c0, c1, c2, c3};
}

// Draw `draw` of the beams first_beam, first_beam + 1, ... (lane i: beam first_beam + i).
HWY_INLINE PhiloxWords philox_lanes(const DrawKey& key, std::uint32_t first_beam,
                                    std::uint32_t draw) {
  const U32Tag d;
  return philox_lanes(key, hn::Iota(d, first_beam), hn::Set(d, draw));
}

}  // namespace lidaremu::core::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // LIDAREMU_SIMD_PHILOX_INL_H_
