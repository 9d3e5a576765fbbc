#include "lidaremu/protocol/raw_rows.hpp"

#include <tbb/blocked_range.h>

#include "lidaremu/core/parallel_blocks.hpp"

namespace lidaremu::protocol {

BatchError RawRowAssembler::check(std::span<const std::uint8_t> datagram) const {
  const std::size_t row_bytes = sizeof(float) * floats_per_row_;
  if (datagram.empty() || datagram.size() % row_bytes != 0) return BatchError::kRawSizeNotRows;
  if ((datagram.size() / row_bytes) % rows_per_beam() != 0) return BatchError::kRawNotWholeBeams;
  return BatchError::kNone;
}

std::size_t RawRowAssembler::convert_and_locate(std::span<const std::uint8_t> datagram,
                                                const EngineConventions& engine,
                                                const core::MaterialTable& materials,
                                                RowCounts& counts) {
  const std::size_t beam_bytes = sizeof(float) * floats_per_row_ * rows_per_beam();
  std::size_t hit_beams = 0;
  for (std::size_t b = 0; b < max_beams_ && (b + 1) * beam_bytes <= datagram.size(); ++b) {
    if (convert_beam(datagram.data() + b * beam_bytes, engine, materials, counts,
                     &hits_[b * rows_per_beam()], first_hits_[hit_beams])) {
      beam_in_datagram_[hit_beams++] = b;
    }
  }
  // The beam search is most of a raw row's cost: on the physics' workers, chunks at once (each
  // hit's beam is found alone, so the result does not depend on who finds it). Isolated: the
  // input thread waits only for its own chunks, never runs another sensor's physics meanwhile.
  constexpr std::size_t kLocateChunk = 256;
  if (hit_beams <= kLocateChunk) {  // one chunk: no task to share
    geometry_.locate_many({first_hits_.data(), hit_beams}, {located_.data(), hit_beams});
    return hit_beams;
  }
  core::parallel_blocks_isolated(tbb::blocked_range<std::size_t>(0, hit_beams, kLocateChunk), this,
                                 [&](const tbb::blocked_range<std::size_t>& range) {
                                   geometry_.locate_many(
                                       {first_hits_.data() + range.begin(), range.size()},
                                       {located_.data() + range.begin(), range.size()});
                                 });
  return hit_beams;
}

bool RawRowAssembler::convert_beam(const std::uint8_t* bytes, const EngineConventions& engine,
                                   const core::MaterialTable& materials, RowCounts& counts,
                                   Hit* beam, Eigen::Vector3d& first_hit) {
  const std::size_t row_bytes = sizeof(float) * floats_per_row_;
  bool any = false;
  float values[8];
  for (std::size_t ray = 0; ray < layout_.rays_per_beam; ++ray) {
    bool path_open = true;
    for (std::size_t seg = 0; seg < layout_.segments_per_path; ++seg) {
      const std::size_t row = ray * layout_.segments_per_path + seg;
      Hit& h = beam[row];
      h.material = 0;
      if (!path_open) continue;
      // Datagram bytes carry no alignment promise: copy each row out.
      std::memcpy(values, bytes + row * row_bytes, row_bytes);
      if (!convert_row({values, 0}, engine, nullptr, materials, counts, h.point, h.normal,
                       h.material)) {
        h.material = 0;
        path_open = false;
        continue;
      }
      h.angle_deg = floats_per_row_ == 8 ? values[7] : 0.0f;
      if (!std::isfinite(h.angle_deg)) {
        ++counts.non_finite;
        h.material = 0;
        path_open = false;
        continue;
      }
      ++counts.stored;
      // The beam's direction: the first segment of the first ray that hit (later segments lie
      // wherever the path went).
      if (!any && seg == 0) {
        first_hit = h.point;
        any = true;
      }
    }
  }
  return any;
}

}  // namespace lidaremu::protocol
