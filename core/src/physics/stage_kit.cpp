#include "stage_kit.hpp"

#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace lidaremu::core {

ZeroedMemory::ZeroedMemory(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  // Mapped with a huge page's room to spare and trimmed to start on a huge page: only whole,
  // aligned 2 MiB ranges can be huge pages.
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t mapped = bytes + kHugePage;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto at = reinterpret_cast<std::uintptr_t>(p);  // NOLINT: an address, to align
  const std::uintptr_t aligned = (at + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > at) ::munmap(p, aligned - at);
  const std::size_t tail = at + mapped - (aligned + bytes);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + bytes), tail);  // NOLINT: as above
  data_ = reinterpret_cast<std::byte*>(aligned);                           // NOLINT: as above
  ::madvise(data_, bytes, MADV_HUGEPAGE);  // a hint: without huge pages it is plain memory
}
ZeroedMemory::~ZeroedMemory() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}
ZeroedMemory::ZeroedMemory(ZeroedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
ZeroedMemory& ZeroedMemory::operator=(ZeroedMemory&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void PulsePlanes::resize(std::size_t beams) { memory_ = ZeroedMemory(bytes_for(beams)); }

std::size_t PulsePlanes::bytes_for(std::size_t beams) {
  const std::size_t tiles = (beams + kTileBeams - 1) / kTileBeams;
  return tiles * kSlots * kBlockBytes;
}

void PulsePlanes::fault_in() {
  constexpr std::size_t kPage = 4096;
  auto* bytes = static_cast<volatile std::byte*>(memory_.data());
  for (std::size_t at = 0; at < memory_.size(); at += kPage) bytes[at] = std::byte{0};
}

void PulsePlanes::prefetch(std::size_t first, std::size_t last, int slots) const {
  constexpr std::size_t kLine = 64;
  for (std::size_t tile = first / kTileBeams; tile * kTileBeams < last; ++tile) {
    const std::byte* slot = memory_.data() + tile * kSlots * kBlockBytes;
    const std::byte* end = slot + static_cast<std::size_t>(slots) * kBlockBytes;
    for (; slot < end; slot += kLine) __builtin_prefetch(slot, 1, 3);
  }
}

std::size_t BeamWork::bytes_for(std::size_t beams) {
  return PulsePlanes::bytes_for(beams) +
         beams * (sizeof(std::uint8_t) + sizeof(float) + sizeof(std::uint16_t) + 2 * sizeof(Bloom) +
                  sizeof(float) + FrameReturns::kMaxEchoes * sizeof(std::int8_t));
}

void BeamWork::resize(std::size_t beams) {
  pulses.resize(beams);
  pulse_count.assign(beams, 0);
  range_offset_m.assign(beams, 0);
  drops_crossed.assign(beams, 0);
  bloom.assign(beams, Bloom{});
  bloom_source.assign(beams, Bloom{});
  ambient_w.assign(beams, 0.0f);
  echo_pick.assign(beams * FrameReturns::kMaxEchoes, -1);
}

namespace stage_kit {

void replace_weakest(const BlockContext& b, std::size_t beam, const Pulse& p) {
  const BeamPulses pulses = pulses_of(b, beam);
  const int count = b.work.pulse_count[beam];
  int weakest = 0;  // the first of the weakest, as std::min_element finds it
  for (int k = 1; k < count; ++k) {
    if (pulses[k].power_w < pulses[weakest].power_w) weakest = k;
  }
  if (pulses[weakest].power_w < p.power_w) pulses[weakest] = p;
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
  const BeamPulses slots = pulses_of(b, beam);
  int count = b.work.pulse_count[beam];
  const Bloom& bloom = b.work.bloom[beam];
  if (bloom.present) {
    add_pulse(b, beam, bloom.pulse());
    count = b.work.pulse_count[beam];
  }
  if (count <= 1) {  // nothing to sort or merge: the commonest case by far
    if (count == 1 && slots[0].kind == ReturnKind::kNone) count = 0;
    b.work.pulse_count[beam] = static_cast<std::uint8_t>(count);
    return count;
  }
  // Sorted and merged as records, then written back. (Left uninitialised: zeroing twelve
  // records cost more than reading the few a beam has.)
  union Records {
    Records() {}  // NOLINT(modernize-use-equals-default): nothing to initialise
    std::array<Pulse, BeamWork::kMaxPulses> all;
  } records;
  std::array<Pulse, BeamWork::kMaxPulses>& pulses = records.all;
  int kept = 0;
  for (int k = 0; k < count; ++k) {
    if (slots[k].kind != ReturnKind::kNone) pulses[std::size_t(kept++)] = slots[k];
  }
  count = kept;
  std::sort(pulses.begin(), pulses.begin() + count,
            [](const Pulse& l, const Pulse& r) { return l.range_m < r.range_m; });
  int merged = 0;
  for (int k = 0; k < count; ++k) {
    const Pulse& next = pulses[std::size_t(k)];
    if (merged > 0 &&
        next.range_m - pulses[std::size_t(merged - 1)].range_m < b.params.range_resolution_m) {
      Pulse& into = pulses[std::size_t(merged - 1)];
      const float far_edge = std::max(into.range_m + into.extent_m, next.range_m + next.extent_m);
      if (next.power_w > into.power_w) {
        into.object_id = next.object_id;
        into.kind = next.kind;
        into.material = next.material;
        into.ambient_w = next.ambient_w;
      }
      into.lambertian = std::max(into.lambertian, next.lambertian);
      into.power_w += next.power_w;
      into.extent_m = far_edge - into.range_m;
      continue;
    }
    pulses[std::size_t(merged++)] = next;
  }
  for (int k = 0; k < merged; ++k) slots[k] = pulses[std::size_t(k)];
  b.work.pulse_count[beam] = static_cast<std::uint8_t>(merged);
  return merged;
}

}  // namespace stage_kit
}  // namespace lidaremu::core
