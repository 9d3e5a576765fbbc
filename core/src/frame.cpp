#include "lidaremu/core/frame.hpp"

#include <algorithm>

namespace lidaremu::core {

void FrameHits::reshape(FrameShape s, HitLayout l) {
  shape = s;
  layout = l;
  const std::size_t n = s.beams() * l.hits_per_beam();
  for (auto* v : {&x, &y, &z, &nx, &ny, &nz, &angle_deg}) v->assign(n, 0.0f);
  material.assign(n, 0);
  object_id.assign(n, 0);
  column_received.assign(s.columns, 0);
  columns_received = 0;
}

std::size_t FrameHits::bytes_for(FrameShape s, HitLayout l) {
  const std::size_t n = s.beams() * l.hits_per_beam();
  return n * (7 * sizeof(float) + sizeof(std::uint16_t) + sizeof(std::uint32_t)) + s.columns;
}

void FrameHits::clear(std::uint32_t new_frame_number) {
  frame_number = new_frame_number;
  // Only the materials: a hit's other fields are read only where its material is set, and set
  // with it (the object ids were cleared too, two thirds of the bytes this wrote).
  std::fill(material.begin(), material.end(), std::uint16_t{0});
  std::fill(column_received.begin(), column_received.end(), std::uint8_t{0});
  columns_received = 0;
  has_sim_time = false;
  sim_time_ns = 0;
  has_pose = false;
}

void FrameReturns::reshape(FrameShape s) {
  shape = s;
  const std::size_t n = s.beams() * kMaxEchoes;
  range_m.assign(n, 0.0f);
  power_w.assign(n, 0.0f);
  reflectivity.assign(n, 0);
  signal_photons.assign(n, 0);
  pulse_width_ns.assign(n, 0.0f);
  object_id.assign(n, 0);
  kind.assign(n, 0);
  near_ir.assign(s.beams(), 0);
  planes_written = 0;
}

std::size_t FrameReturns::bytes_for(FrameShape s) {
  const std::size_t per_echo =
      3 * sizeof(float) + 2 * sizeof(std::uint8_t) + sizeof(std::uint16_t) + sizeof(std::uint32_t);
  return s.beams() * (kMaxEchoes * per_echo + sizeof(std::uint16_t));
}

void FrameReturns::keep_planes(int planes) {
  if (planes_written > planes) {
    const std::size_t from = slot(0, planes);
    std::fill(range_m.begin() + static_cast<std::ptrdiff_t>(from), range_m.end(), 0.0f);
    std::fill(power_w.begin() + static_cast<std::ptrdiff_t>(from), power_w.end(), 0.0f);
    std::fill(reflectivity.begin() + static_cast<std::ptrdiff_t>(from), reflectivity.end(), 0);
    std::fill(signal_photons.begin() + static_cast<std::ptrdiff_t>(from), signal_photons.end(), 0);
    std::fill(pulse_width_ns.begin() + static_cast<std::ptrdiff_t>(from), pulse_width_ns.end(),
              0.0f);
    std::fill(object_id.begin() + static_cast<std::ptrdiff_t>(from), object_id.end(), 0);
    std::fill(kind.begin() + static_cast<std::ptrdiff_t>(from), kind.end(), 0);
  }
  planes_written = planes;
}

}  // namespace lidaremu::core
