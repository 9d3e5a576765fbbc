// The Livox Mid-360's row. Its figures are the Mid-360 datasheet's (livoxtech.com/mid-360/specs):
// 200,000 points/s (first return), 10 Hz frames, 360 x 59 degree field of view (-7 to +52),
// detection range 40 m at 10 % reflectivity (70 m at 80 %), range precision <= 2 cm (1 sigma at
// 10 m), a 0.1 m blind zone, 905 nm, a 200 Hz IMU. Four lasers fire together (livox_ros_driver2
// numbers a Mid-360's points by line, four lines: kLineNumberMid360), so a firing every 20 us
// makes the 200,000 points/s; 96 points a packet (FORMATS) are 24 firings. Where the beams point
// is not the row's: a non-repetitive scan follows no grid, and no Mid-360 pattern is among the
// facts, so it comes from a scan table the user supplies (scan_table.hpp).
#include "models.hpp"

#include <limits>

#include "../spinning_optics.hpp"
#include "lidaremu/core/family.hpp"
#include "lidaremu/core/livox.hpp"

namespace lidaremu::core::livox {

SensorModel make_mid360(const SensorOptics& mechanical_optics) {
  SensorModel m;
  m.name = "livox-mid360";
  m.channels = 4;
  // Data type 1 carries x, y and z in int32 millimetres, no range: the range stays finer than the
  // millimetre (0.1 mm) so that a point is rounded once, per coordinate, in the packet.
  m.range_unit_m = 0.0001;
  m.max_range_m = std::numeric_limits<std::int32_t>::max() * 0.001;
  m.min_range_m = 0.1;
  // No published beam or receiver figures: the 905 nm spinning heads', at the datasheet's reach;
  // range noise the datasheet's 2 cm as the floor. No overlap figure either: the RS-Bpearl's
  // (another 0.1 m blind-zone head, robosense/models.cpp), 5 m. Not 0: with the receiver seeing
  // the beam fully from the window on, the clear air's own backscatter a metre out crosses the
  // threshold on a fifth of the beams (the fog stage at 23 km visibility; found on the demo).
  m.optics = mechanical_optics;
  m.optics.range_noise_sigma_m = 0.02;
  m.optics.full_overlap_m = 5;
  m.livox = LivoxTraits{.firing_period_us = 20.0,
                        .laser_step_us = 5.0,
                        .frames_per_second = 10,
                        .firings_per_packet = 24,
                        .device_type = kDevTypeMid360,
                        .imu_rate_hz = 200.0};
  return m;
}

// The registry's rows of this family, each at its datasheet's reach (the spinning heads' optics
// where the datasheet is silent).
std::vector<SensorModel> models() { return {make_mid360(spinning_head_optics(40))}; }

}  // namespace lidaremu::core::livox
