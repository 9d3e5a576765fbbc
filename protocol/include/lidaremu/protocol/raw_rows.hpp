#pragma once
// Raw mode, compatible with the glue of seed 000: headerless 7- or 8-float rows. The rows of one
// beam come together, as a framed batch orders them: its rays (centre first, --rays-per-beam),
// each ray's path segments (8-float rows, --segments-per-path). The beam is found from the first
// row of the group that hit something; the azimuth wrapping round starts a new frame. A datagram
// holds whole beams. The datagrams of a receive are converted and their beams found together, on
// TBB's workers (BeamGeometry::locate_many, in SIMD lanes); only storing them, in the order they
// came, is serial (the turn's wrap and the sealed columns depend on every beam before).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/protocol/wire_decode.hpp"

namespace lidaremu::protocol {

class RawRowAssembler {
 public:
  static constexpr std::size_t kMaxRowsPerBeam = std::size_t{12} * 16;  // rays x segments at most

  // datagrams_at_once: how many slots (a datagram's scratch each, sized once here), the most
  // datagrams convert_and_locate takes together.
  RawRowAssembler(const core::BeamGeometry& geometry, int floats_per_row, core::HitLayout layout,
                  std::size_t datagrams_at_once = 1);

  // What the constructor allocates (the daemon's memory estimate).
  static std::size_t bytes_for(int floats_per_row, core::HitLayout layout,
                               std::size_t datagrams_at_once = 1);
  // How many full datagrams a turn of `beams` takes: more at once than that never meet.
  static std::size_t datagrams_per_turn(int floats_per_row, core::HitLayout layout,
                                        std::size_t beams);
  [[nodiscard]] std::size_t datagrams_at_once() const { return located_.size(); }

  // Reports whether the datagram holds a whole number of beams (rays x segments rows each).
  [[nodiscard]] BatchError check(std::span<const std::uint8_t> datagram) const;

  // Converts the rows of up to datagrams_at_once() checked datagrams and finds their beams, all
  // together on TBB's workers (each hit's beam is found alone, so the result does not depend on
  // who finds it): datagram i into slot i, for store_located. Isolated: the caller waits only for
  // these, never runs another sensor's physics meanwhile. take, then convert_and_locate_taken.
  void convert_and_locate(std::span<const std::span<const std::uint8_t>> datagrams,
                          const EngineConventions& engine, const core::MaterialTable& materials);
  // The same in two steps, so that the datagrams' buffers can be reused before the work is
  // done: take copies a checked datagram into a slot; convert_and_locate_taken converts and
  // locates slots [first, first + count) from their copies. One thread may take into other
  // slots meanwhile (the daemon's input thread, while its locating thread works); everything
  // else is one thread's at a time.
  void take(std::size_t slot, std::span<const std::uint8_t> datagram);
  void convert_and_locate_taken(std::size_t first, std::size_t count,
                                const EngineConventions& engine,
                                const core::MaterialTable& materials);

  // Stores slot `slot`'s beams into the frame, slots in the order their datagrams came. Calls
  // on_wrap() before storing a beam that steps forward across the turn's seam (from a column to
  // a smaller one less than half a turn ahead, circularly): the engine started its next
  // revolution. A beam of a column below the sealed ones (seal_below) is refused and counted as
  // late. The rows' counts, the conversion's included.
  template <typename OnWrap>
  RowCounts store_located(std::size_t slot, core::FrameHits*& frame, OnWrap&& on_wrap);

  // One datagram: convert_and_locate, then store_located.
  template <typename OnWrap>
  RowCounts store(std::span<const std::uint8_t> datagram, const EngineConventions& engine,
                  const core::MaterialTable& materials, core::FrameHits*& frame, OnWrap&& on_wrap) {
    convert_and_locate({&datagram, 1}, engine, materials);
    return store_located(0, frame, std::forward<OnWrap>(on_wrap));
  }

  void reset() {
    last_column_ = -1;
    sealed_ = 0;
  }
  // The columns of the frame being filled that are in for good: those more than kOpenColumns
  // behind the furthest column stored (an engine sends a turn's beams in column order; a
  // column's beams may span datagrams). The frame streams into the physics up to there.
  static constexpr long kOpenColumns = 2;
  [[nodiscard]] std::uint32_t complete_columns() const {
    return static_cast<std::uint32_t>(std::max(0L, last_column_ - kOpenColumns + 1));
  }
  // Beams of columns below `column` are refused from now on (until the next turn).
  void seal_below(std::uint32_t column) { sealed_ = column; }

 private:
  // One datagram's rows as floats (the datagram's bytes promise no alignment), converted in lanes,
  // and what was kept of each: its material (0: missed, rejected, or after a rejected segment)
  // and angle.
  struct Rows {
    Rows(std::size_t rows, std::size_t floats_per_row);
    std::vector<float> values;
    std::vector<float> x, y, z, nx, ny, nz;
    std::vector<std::uint8_t> flaws;
    std::vector<double> exact_x, exact_y, exact_z;
    std::vector<std::uint16_t> material;
    std::vector<float> angle_deg;
    [[nodiscard]] core::simd::SensorRows converted();
  };
  // One datagram's worth, converted and located: what store_located reads. Sized once (the hot
  // path does not allocate).
  struct LocatedDatagram {
    LocatedDatagram(std::size_t beams, std::size_t rows_per_beam, std::size_t floats_per_row);
    static std::size_t bytes_for(std::size_t beams, std::size_t rows_per_beam,
                                 std::size_t floats_per_row);
    Rows rows;                                  // rows_per_beam() per beam of the datagram
    std::vector<Eigen::Vector3d> first_hits;    // per beam that hit something
    std::vector<std::size_t> beam_in_datagram;  // which beam of the datagram that was
    std::vector<core::BeamIndex> located;       // and where it belongs
    std::size_t beams_taken = 0;
    std::size_t hit_beams = 0;
    RowCounts counts;  // the conversion's
  };
  // A run of one datagram's hit beams whose beams are found together (the unit of parallel work).
  struct LocateChunk {
    std::size_t slot = 0, begin = 0, end = 0;
  };
  static constexpr std::size_t kLocateChunk = 256;

  [[nodiscard]] std::size_t rows_per_beam() const { return layout_.hits_per_beam(); }
  static core::HitLayout clamped(core::HitLayout layout) {
    return {std::clamp<std::uint8_t>(layout.rays_per_beam, 1, 12),
            std::clamp<std::uint8_t>(layout.segments_per_path, 1, 16)};
  }
  // The most beams one datagram can hold.
  static std::size_t max_beams(int floats_per_row, core::HitLayout layout) {
    return kMaxDatagram /
           (sizeof(float) * static_cast<std::size_t>(floats_per_row) * layout.hits_per_beam());
  }
  // Converts every beam taken into `into` and lists those that hit something (their first hits,
  // to be located).
  void convert(const EngineConventions& engine, const core::MaterialTable& materials,
               LocatedDatagram& into) const;
  // Keeps the converted rows of datagram beam `beam` as store_batch does (a rejected segment ends
  // its path); whether any hit, and the first that did (the beam's direction) if so.
  bool keep_beam(std::size_t beam, const core::MaterialTable& materials, Rows& rows,
                 RowCounts& counts, Eigen::Vector3d& first_hit) const;
  void locate(const LocateChunk& chunk);

  const core::BeamGeometry& geometry_;
  int floats_per_row_;
  core::HitLayout layout_;
  long last_column_ = -1;
  std::uint32_t sealed_ = 0;  // beams of the current turn's columns below this are late
  std::size_t max_beams_;
  std::vector<LocatedDatagram> located_;  // one per datagram taken at once
  std::vector<LocateChunk> chunks_;       // as many as the slots' beams can need
};

template <typename OnWrap>
RowCounts RawRowAssembler::store_located(std::size_t slot, core::FrameHits*& frame,
                                         OnWrap&& on_wrap) {
  LocatedDatagram& located = located_[slot];
  RowCounts counts = located.counts;
  const long turn = geometry_.pattern().columns_per_frame;
  const long half_turn = turn / 2;
  const core::simd::SensorRows converted = located.rows.converted();
  const Rows& rows = located.rows;
  for (std::size_t k = 0; k < located.hit_beams; ++k) {
    const core::BeamIndex index = located.located[k];
    const std::size_t beam_rows = located.beam_in_datagram[k] * rows_per_beam();
    // Columns advance around the turn; a step forward (less than half a turn, circularly) that
    // crosses the seam starts the next turn. A step back (a beam a hair behind the seam, a column
    // sent twice) is no new turn and leaves the furthest column where it was.
    const auto column = static_cast<long>(index.column);
    if (last_column_ < 0) {
      last_column_ = column;
    } else {
      const long forward = (column - last_column_ + turn) % turn;
      if (forward <= half_turn) {
        if (column < last_column_) {
          on_wrap();
          sealed_ = 0;
        }
        last_column_ = column;
      }
    }
    if (index.column < sealed_) {
      for (std::size_t row = 0; row < rows_per_beam(); ++row) {
        if (rows.material[beam_rows + row] == 0) continue;
        --counts.stored;  // counted when converted
        ++counts.late;
      }
      continue;
    }
    core::FrameHits& f = *frame;
    const std::size_t beam = f.shape.beam(index.column, index.channel);
    const std::size_t rays = std::min<std::size_t>(layout_.rays_per_beam, f.layout.rays_per_beam);
    const std::size_t segments =
        std::min<std::size_t>(layout_.segments_per_path, f.layout.segments_per_path);
    // A beam sent again leaves nothing of its first copy.
    const std::size_t first_hit = beam * f.layout.hits_per_beam();
    if (f.layout.hits_per_beam() == 1) {
      f.material[first_hit] = 0;  // the common case, without a call to memset
    } else {
      std::fill_n(f.material.begin() + static_cast<std::ptrdiff_t>(first_hit),
                  f.layout.hits_per_beam(), std::uint16_t{0});
    }
    for (std::size_t ray = 0; ray < rays; ++ray) {
      for (std::size_t seg = 0; seg < segments; ++seg) {
        const std::size_t row = beam_rows + ray * layout_.segments_per_path + seg;
        if (rows.material[row] == 0) break;
        store_converted_row(f, f.hit(beam, ray, seg), converted, row, rows.material[row], 0,
                            rows.angle_deg[row]);
      }
    }
    mark_column(f, index.column);
  }
  return counts;
}

}  // namespace lidaremu::protocol
