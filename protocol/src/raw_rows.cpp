#include "lidaremu/protocol/raw_rows.hpp"

#include <tbb/blocked_range.h>

#include <cstring>

#include "lidaremu/core/parallel_blocks.hpp"

namespace lidaremu::protocol {

RawRowAssembler::RawRowAssembler(const core::BeamGeometry& geometry, int floats_per_row,
                                 core::HitLayout layout, std::size_t datagrams_at_once)
    : geometry_(geometry),
      floats_per_row_(floats_per_row),
      layout_(clamped(layout)),
      max_beams_(max_beams(floats_per_row, layout_)) {
  const std::size_t slots = std::max<std::size_t>(1, datagrams_at_once);
  located_.reserve(slots);
  for (std::size_t i = 0; i < slots; ++i) {
    located_.emplace_back(max_beams_, rows_per_beam(), static_cast<std::size_t>(floats_per_row_));
  }
  chunks_.resize(slots * ((max_beams_ + kLocateChunk - 1) / kLocateChunk));
}

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

RawRowAssembler::LocatedDatagram::LocatedDatagram(std::size_t beams, std::size_t rows_per_beam,
                                                  std::size_t floats_per_row)
    : rows(beams * rows_per_beam, floats_per_row),
      first_hits(beams),
      beam_in_datagram(beams),
      located(beams) {}

std::size_t RawRowAssembler::LocatedDatagram::bytes_for(std::size_t beams,
                                                        std::size_t rows_per_beam,
                                                        std::size_t floats_per_row) {
  const std::size_t per_row = sizeof(float) * floats_per_row + 6 * sizeof(float) +
                              sizeof(std::uint8_t) + 3 * sizeof(double) + sizeof(std::uint16_t) +
                              sizeof(float);
  return beams * rows_per_beam * per_row +
         beams * (sizeof(Eigen::Vector3d) + sizeof(std::size_t) + sizeof(core::BeamIndex));
}

std::size_t RawRowAssembler::bytes_for(int floats_per_row, core::HitLayout layout,
                                       std::size_t datagrams_at_once) {
  const core::HitLayout kept = clamped(layout);
  const std::size_t beams = max_beams(floats_per_row, kept);
  const std::size_t slots = std::max<std::size_t>(1, datagrams_at_once);
  const std::size_t chunks = slots * ((beams + kLocateChunk - 1) / kLocateChunk);
  return slots * LocatedDatagram::bytes_for(beams, kept.hits_per_beam(),
                                            static_cast<std::size_t>(floats_per_row)) +
         chunks * sizeof(LocateChunk);
}

std::size_t RawRowAssembler::datagrams_per_turn(int floats_per_row, core::HitLayout layout,
                                                std::size_t beams) {
  const std::size_t per_datagram = max_beams(floats_per_row, clamped(layout));
  return std::max<std::size_t>(1, (beams + per_datagram - 1) / per_datagram);
}

core::simd::SensorRows RawRowAssembler::Rows::converted() {
  return {x.data(),  y.data(),     z.data(),       nx.data(),      ny.data(),
          nz.data(), flaws.data(), exact_x.data(), exact_y.data(), exact_z.data()};
}

void RawRowAssembler::convert_and_locate(std::span<const std::span<const std::uint8_t>> datagrams,
                                         const EngineConventions& engine,
                                         const core::MaterialTable& materials) {
  const std::size_t taken = std::min(datagrams.size(), located_.size());
  for (std::size_t i = 0; i < taken; ++i) take(i, datagrams[i]);
  convert_and_locate_taken(0, taken, engine, materials);
}

void RawRowAssembler::take(std::size_t slot, std::span<const std::uint8_t> datagram) {
  LocatedDatagram& into = located_[slot];
  const std::size_t beam_bytes =
      sizeof(float) * static_cast<std::size_t>(floats_per_row_) * rows_per_beam();
  into.beams_taken = std::min(max_beams_, datagram.size() / beam_bytes);
  std::memcpy(into.rows.values.data(), datagram.data(), into.beams_taken * beam_bytes);
}

void RawRowAssembler::convert_and_locate_taken(std::size_t first, std::size_t count,
                                               const EngineConventions& engine,
                                               const core::MaterialTable& materials) {
  const std::size_t end = first + std::min(count, located_.size() - first);
  // The conversion, one datagram a task.
  const auto convert_range = [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t i = range.begin(); i < range.end(); ++i) {
      convert(engine, materials, located_[i]);
    }
  };
  if (end - first == 1) {
    convert_range({first, end});
  } else {
    core::parallel_blocks_isolated(tbb::blocked_range<std::size_t>(first, end, 1), this,
                                   convert_range);
  }
  // The beam search, most of a raw row's cost: every datagram's hit beams in chunks at once.
  std::size_t chunk_count = 0;
  for (std::size_t slot = first; slot < end; ++slot) {
    for (std::size_t begin = 0; begin < located_[slot].hit_beams; begin += kLocateChunk) {
      chunks_[chunk_count++] = {slot, begin,
                                std::min(begin + kLocateChunk, located_[slot].hit_beams)};
    }
  }
  if (chunk_count <= 1) {  // one chunk: no task to share
    if (chunk_count == 1) locate(chunks_[0]);
    return;
  }
  core::parallel_blocks_isolated(tbb::blocked_range<std::size_t>(0, chunk_count, 1), this,
                                 [&](const tbb::blocked_range<std::size_t>& range) {
                                   for (std::size_t c = range.begin(); c < range.end(); ++c) {
                                     locate(chunks_[c]);
                                   }
                                 });
}

void RawRowAssembler::locate(const LocateChunk& chunk) {
  LocatedDatagram& d = located_[chunk.slot];
  const std::size_t count = chunk.end - chunk.begin;
  geometry_.locate_many({d.first_hits.data() + chunk.begin, count},
                        {d.located.data() + chunk.begin, count});
}

void RawRowAssembler::convert(const EngineConventions& engine, const core::MaterialTable& materials,
                              LocatedDatagram& into) const {
  const auto floats_per_row = static_cast<std::size_t>(floats_per_row_);
  const std::size_t rows = into.beams_taken * rows_per_beam();
  core::simd::rows_to_sensor(rows_to_sensor_transform(engine, nullptr), into.rows.values.data(),
                             floats_per_row, rows, into.rows.converted());
  into.counts = {};
  into.hit_beams = 0;
  for (std::size_t b = 0; b < into.beams_taken; ++b) {
    if (keep_beam(b, materials, into.rows, into.counts, into.first_hits[into.hit_beams])) {
      into.beam_in_datagram[into.hit_beams++] = b;
    }
  }
}

bool RawRowAssembler::keep_beam(std::size_t beam, const core::MaterialTable& materials, Rows& rows,
                                RowCounts& counts, Eigen::Vector3d& first_hit) const {
  const auto floats_per_row = static_cast<std::size_t>(floats_per_row_);
  bool any = false;
  for (std::size_t ray = 0; ray < layout_.rays_per_beam; ++ray) {
    bool path_open = true;
    for (std::size_t seg = 0; seg < layout_.segments_per_path; ++seg) {
      const std::size_t row = beam * rows_per_beam() + ray * layout_.segments_per_path + seg;
      rows.material[row] = 0;
      if (!path_open) continue;
      const float* values = rows.values.data() + row * floats_per_row;
      const float angle = floats_per_row == 8 ? values[7] : 0.0f;
      if (!keep_converted_row(values, rows.flaws[row], materials, counts)) {
        path_open = false;
        continue;
      }
      if (!std::isfinite(angle)) {
        ++counts.non_finite;
        path_open = false;
        continue;
      }
      rows.material[row] = static_cast<std::uint16_t>(values[6]);
      rows.angle_deg[row] = angle;
      ++counts.stored;
      // The beam's direction: the first segment of the first ray that hit (later segments lie
      // wherever the path went).
      if (!any && seg == 0) {
        first_hit = {rows.exact_x[row], rows.exact_y[row], rows.exact_z[row]};
        any = true;
      }
    }
  }
  return any;
}

}  // namespace lidaremu::protocol
