#include "stage_kit.hpp"

#include <sys/mman.h>

#include <cmath>
#include <cstdlib>
#include <new>

namespace lidaremu::core {

template <typename T>
T* HugePageAllocator<T>::allocate(std::size_t n) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t bytes = (n * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, bytes);
  if (!p) throw std::bad_alloc();
  ::madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without huge pages it is plain memory
  return static_cast<T*>(p);
}
template struct HugePageAllocator<Pulse>;

void BeamWork::resize(std::size_t beams) {
  pulses.assign(beams * kMaxPulses, Pulse{});
  pulse_count.assign(beams, 0);
  range_offset_m.assign(beams, 0);
  drops_crossed.assign(beams, 0);
  bloom.assign(beams, Bloom{});
  ambient_w.assign(beams, 0.0f);
  echo_pick.assign(beams * FrameReturns::kMaxEchoes, -1);
}

namespace stage_kit {

void replace_weakest(const BlockContext& b, std::size_t beam, const Pulse& p) {
  Pulse* pulses = pulses_of(b, beam);
  const int count = b.work.pulse_count[beam];
  Pulse* weakest = std::min_element(
      pulses, pulses + count, [](const Pulse& l, const Pulse& r) { return l.power_w < r.power_w; });
  if (weakest->power_w < p.power_w) *weakest = p;
}

double ray_weight(int ray, int rays) {
  if (rays <= 1) return 1.0;
  const double edge = std::exp(-2.0);
  const double centre = 1.0 / (1.0 + (rays - 1) * edge);
  return ray == 0 ? centre : centre * edge;
}

// The merged return keeps the leading edge's range and the strongest member's identity; its
// extent spans the members.
int merge_pulses(const BlockContext& b, std::size_t beam) {
  Pulse* pulses = pulses_of(b, beam);
  int count = b.work.pulse_count[beam];
  const Bloom& bloom = b.work.bloom[beam];
  if (bloom.present) {
    add_pulse(b, beam, bloom.pulse());
    count = b.work.pulse_count[beam];
  }
  if (count <= 1) {  // nothing to sort or merge: the commonest case by far
    if (count == 1 && pulses[0].kind == ReturnKind::kNone) count = 0;
    b.work.pulse_count[beam] = static_cast<std::uint8_t>(count);
    return count;
  }
  count =
      static_cast<int>(std::remove_if(pulses, pulses + count,
                                      [](const Pulse& p) { return p.kind == ReturnKind::kNone; }) -
                       pulses);
  std::sort(pulses, pulses + count,
            [](const Pulse& l, const Pulse& r) { return l.range_m < r.range_m; });
  int merged = 0;
  for (int k = 0; k < count; ++k) {
    if (merged > 0 &&
        pulses[k].range_m - pulses[merged - 1].range_m < b.params.range_resolution_m) {
      Pulse& into = pulses[merged - 1];
      const float far_edge =
          std::max(into.range_m + into.extent_m, pulses[k].range_m + pulses[k].extent_m);
      if (pulses[k].power_w > into.power_w) {
        into.object_id = pulses[k].object_id;
        into.kind = pulses[k].kind;
        into.material = pulses[k].material;
        into.ambient_w = pulses[k].ambient_w;
      }
      into.lambertian = std::max(into.lambertian, pulses[k].lambertian);
      into.power_w += pulses[k].power_w;
      into.extent_m = far_edge - into.range_m;
      continue;
    }
    pulses[merged++] = pulses[k];
  }
  b.work.pulse_count[beam] = static_cast<std::uint8_t>(merged);
  return merged;
}

}  // namespace stage_kit
}  // namespace lidaremu::core
