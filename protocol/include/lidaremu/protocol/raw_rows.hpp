#pragma once
// Raw mode, compatible with the glue of seed 000: headerless 7- or 8-float rows. The beam of a
// row is found from its direction; the azimuth wrapping round starts a new frame.
#include <cstdint>
#include <cstring>
#include <span>

#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/protocol/wire_decode.hpp"

namespace lidaremu::protocol {

class RawRowAssembler {
 public:
  RawRowAssembler(const core::BeamGeometry& geometry, int floats_per_row)
      : geometry_(geometry), floats_per_row_(floats_per_row) {}

  // Reports whether the datagram's size is a whole number of rows.
  [[nodiscard]] BatchError check(std::span<const std::uint8_t> datagram) const;

  // Calls on_wrap() before storing a row whose column lies behind the previous one by more than
  // half a turn: the engine started its next revolution.
  template <typename OnWrap>
  RowCounts store(std::span<const std::uint8_t> datagram, const EngineConventions& engine,
                  const core::MaterialTable& materials, core::FrameHits*& frame, OnWrap&& on_wrap);

  void reset() { last_column_ = -1; }

 private:
  const core::BeamGeometry& geometry_;
  int floats_per_row_;
  long last_column_ = -1;
};

template <typename OnWrap>
RowCounts RawRowAssembler::store(std::span<const std::uint8_t> datagram,
                                 const EngineConventions& engine,
                                 const core::MaterialTable& materials, core::FrameHits*& frame,
                                 OnWrap&& on_wrap) {
  RowCounts counts;
  const std::size_t row_bytes = sizeof(float) * floats_per_row_;
  const long half_turn = geometry_.pattern().columns_per_frame / 2;
  float values[8];
  for (std::size_t at = 0; at + row_bytes <= datagram.size(); at += row_bytes) {
    // Datagram bytes carry no alignment promise: copy each row out.
    std::memcpy(values, datagram.data() + at, row_bytes);
    Eigen::Vector3d p, n;
    std::uint16_t material = 0;
    if (!convert_row({values, 0}, engine, nullptr, materials, counts, p, n, material)) continue;
    const core::BeamIndex index = geometry_.locate(p);
    if (last_column_ >= 0 && static_cast<long>(index.column) + half_turn < last_column_) {
      on_wrap();
    }
    last_column_ = index.column;
    store_row(*frame, index.column, index.channel, p, n, material, 0);
    ++counts.stored;
  }
  return counts;
}

}  // namespace lidaremu::protocol
