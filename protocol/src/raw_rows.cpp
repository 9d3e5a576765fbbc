#include "lidaremu/protocol/raw_rows.hpp"

#include <tbb/blocked_range.h>

#include <cstring>

#include "lidaremu/core/parallel_blocks.hpp"

namespace lidaremu::protocol {

BatchError RawRowAssembler::check(std::span<const std::uint8_t> datagram) const {
  const std::size_t row_bytes = sizeof(float) * floats_per_row_;
  if (datagram.empty() || datagram.size() % row_bytes != 0) return BatchError::kRawSizeNotRows;
  if ((datagram.size() / row_bytes) % rows_per_beam() != 0) return BatchError::kRawNotWholeBeams;
  return BatchError::kNone;
}

RawRowAssembler::Rows::Rows(std::size_t rows, std::size_t floats_per_row)
    : values(rows * floats_per_row),
      x(rows),
      y(rows),
      z(rows),
      nx(rows),
      ny(rows),
      nz(rows),
      flaws(rows),
      exact_x(rows),
      exact_y(rows),
      exact_z(rows),
      material(rows),
      angle_deg(rows) {}

std::size_t RawRowAssembler::bytes_for(int floats_per_row, core::HitLayout layout) {
  const core::HitLayout kept = clamped(layout);
  const std::size_t beams = max_beams(floats_per_row, kept);
  const std::size_t rows = beams * kept.hits_per_beam();
  const std::size_t per_row = sizeof(float) * static_cast<std::size_t>(floats_per_row) +
                              6 * sizeof(float) + sizeof(std::uint8_t) + 3 * sizeof(double) +
                              sizeof(std::uint16_t) + sizeof(float);
  return rows * per_row +
         beams * (sizeof(Eigen::Vector3d) + sizeof(std::size_t) + sizeof(core::BeamIndex));
}

core::simd::SensorRows RawRowAssembler::Rows::converted() {
  return {x.data(),  y.data(),     z.data(),       nx.data(),      ny.data(),
          nz.data(), flaws.data(), exact_x.data(), exact_y.data(), exact_z.data()};
}

std::size_t RawRowAssembler::convert_and_locate(std::span<const std::uint8_t> datagram,
                                                const EngineConventions& engine,
                                                const core::MaterialTable& materials,
                                                RowCounts& counts) {
  const auto floats_per_row = static_cast<std::size_t>(floats_per_row_);
  const std::size_t beam_bytes = sizeof(float) * floats_per_row * rows_per_beam();
  const std::size_t beams = std::min(max_beams_, datagram.size() / beam_bytes);
  const std::size_t rows = beams * rows_per_beam();
  std::memcpy(rows_.values.data(), datagram.data(), beams * beam_bytes);
  core::simd::rows_to_sensor(rows_to_sensor_transform(engine, nullptr), rows_.values.data(),
                             floats_per_row, rows, rows_.converted());
  std::size_t hit_beams = 0;
  for (std::size_t b = 0; b < beams; ++b) {
    if (keep_beam(b, materials, counts, first_hits_[hit_beams])) {
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

bool RawRowAssembler::keep_beam(std::size_t beam, const core::MaterialTable& materials,
                                RowCounts& counts, Eigen::Vector3d& first_hit) {
  const auto floats_per_row = static_cast<std::size_t>(floats_per_row_);
  bool any = false;
  for (std::size_t ray = 0; ray < layout_.rays_per_beam; ++ray) {
    bool path_open = true;
    for (std::size_t seg = 0; seg < layout_.segments_per_path; ++seg) {
      const std::size_t row = beam * rows_per_beam() + ray * layout_.segments_per_path + seg;
      rows_.material[row] = 0;
      if (!path_open) continue;
      const float* values = rows_.values.data() + row * floats_per_row;
      const float angle = floats_per_row == 8 ? values[7] : 0.0f;
      if (!keep_converted_row(values, rows_.flaws[row], materials, counts)) {
        path_open = false;
        continue;
      }
      if (!std::isfinite(angle)) {
        ++counts.non_finite;
        path_open = false;
        continue;
      }
      rows_.material[row] = static_cast<std::uint16_t>(values[6]);
      rows_.angle_deg[row] = angle;
      ++counts.stored;
      // The beam's direction: the first segment of the first ray that hit (later segments lie
      // wherever the path went).
      if (!any && seg == 0) {
        first_hit = {rows_.exact_x[row], rows_.exact_y[row], rows_.exact_z[row]};
        any = true;
      }
    }
  }
  return any;
}

}  // namespace lidaremu::protocol
