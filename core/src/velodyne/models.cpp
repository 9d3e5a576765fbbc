// The Velodyne rows of the sensor registry. Angle tables are measured values from real units
// (see each row's source note), never invented.
#include "../spinning_optics.hpp"
#include "beam_tables.hpp"
#include "lidaremu/core/family.hpp"

namespace lidaremu::core {
namespace {

// VLP-16: elevation by laser id from the VLP-16 manual and ros-drivers/velodyne VLP16db.yaml
// (copied in tests/data/velodyne/VLP16db.yaml, which a test compares with this row).
SensorModel make_vlp16() {
  SensorModel m;
  m.name = "vlp16";
  m.channels = 16;
  m.elevation_deg = {-15, 1, -13, 3, -11, 5, -9, 7, -7, 9, -5, 11, -3, 13, -1, 15};
  m.azimuth_offset_deg.assign(16, 0.0);
  m.range_unit_m = 0.002;
  m.max_range_m = 65535 * 0.002;
  m.min_range_m = 0.002;
  m.optics = spinning_head_optics(100);  // VLP-16 datasheet: up to 100 m
  m.velodyne = VelodyneTraits{.product_id = 0x22,
                              .product_name = "VLP-16",
                              .sequence_period_us = 55.296,
                              .laser_spacing_us = 2.304,
                              .sequences_per_block = 2};
  return m;
}

// VLP-32C (Ultra Puck): elevation and rot_correction by laser id from ros-drivers/velodyne
// VeloView-VLP-32C.yaml (copied in tests/data/velodyne/, which a test compares with this row);
// 4 mm distance unit, one sequence of 32 lasers per block, fired in pairs 2.304 us apart.
SensorModel make_vlp32c() {
  SensorModel m;
  m.name = "vlp32c";
  m.channels = 32;
  m.elevation_deg = {-25.0,  -1.0,  -1.667, -15.639, -11.31, 0.0,   -0.667, -8.843,
                     -7.254, 0.333, -0.333, -6.148,  -5.333, 1.333, 0.667,  -4.0,
                     -4.667, 1.667, 1.0,    -3.667,  -3.333, 3.333, 2.333,  -2.667,
                     -3.0,   7.0,   4.667,  -2.333,  -2.0,   15.0,  10.333, -1.333};
  m.azimuth_offset_deg = {-1.4, 4.2,  -1.4, 1.4,  -1.4, 1.4,  -4.2, 1.4,  -1.4, 4.2,  -1.4,
                          1.4,  -4.2, 1.4,  -4.2, 1.4,  -1.4, 4.2,  -1.4, 4.2,  -4.2, 1.4,
                          -1.4, 1.4,  -1.4, 1.4,  -1.4, 4.2,  -4.2, 1.4,  -1.4, 1.4};
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.004;
  m.optics = spinning_head_optics(200);  // Ultra Puck datasheet: up to 200 m
  m.velodyne = VelodyneTraits{.product_id = 0x28,
                              .product_name = "VLP-32C",
                              .sequence_period_us = 55.296,
                              .laser_spacing_us = 2.304,
                              .lasers_per_firing = 2,
                              .sequences_per_block = 1};
  return m;
}

// Puck Hi-Res: the VLP-16's timing and optics with a 20-degree field of view; elevations from
// ros-drivers/velodyne VLP16_hires_db.yaml (tests/data/velodyne/, compared by a test).
SensorModel make_puck_hires() {
  SensorModel m = make_vlp16();
  m.name = "puck-hires";
  m.elevation_deg = {-10.0, 0.666667, -8.666667, 2.0, -7.333333, 3.333333,
                     -6.0,  4.666667, -4.666667, 6.0, -3.333333, 7.333333,
                     -2.0,  8.666667, -0.666667, 10.0};
  m.velodyne.product_id = 0x24;
  m.velodyne.product_name = "Puck Hi-Res";
  return m;
}

// HDL-32E: elevations from ros-drivers/velodyne 32db.yaml (tests/data/velodyne/); one laser every
// 1.152 us, a sequence of 32 lasers per block every 46.08 us (FORMATS.md), 2 mm unit. Datasheet:
// range up to 100 m (taken at 10 %, as for the VLP-16).
SensorModel make_hdl32e() {
  SensorModel m;
  m.name = "hdl32e";
  m.channels = 32;
  m.elevation_deg = {-30.67, -9.33, -29.33, -8.0,  -28.0,  -6.67, -26.67, -5.33,
                     -25.33, -4.0,  -24.0,  -2.67, -22.67, -1.33, -21.33, 0.0,
                     -20.0,  1.33,  -18.67, 2.67,  -17.33, 4.0,   -16.0,  5.33,
                     -14.67, 6.67,  -13.33, 8.0,   -12.0,  9.33,  -10.67, 10.67};
  m.azimuth_offset_deg.assign(32, 0.0);
  m.range_unit_m = 0.002;
  m.max_range_m = 65535 * 0.002;
  m.min_range_m = 0.002;
  m.optics = spinning_head_optics(100);
  m.velodyne = VelodyneTraits{.product_id = 0x21,
                              .product_name = "HDL-32E",
                              .sequence_period_us = 46.08,
                              .laser_spacing_us = 1.152,
                              .sequences_per_block = 1};
  return m;
}

// VLS-128 / Alpha Prime: angles by laser id from ros-drivers/velodyne VLS128.yaml (generated into
// velodyne/beam_tables.cpp, compared with the file by a test). One column is four blocks of 32
// lasers with flags FF EE, FF DD, FF CC, FF BB; lasers fire in 16 groups of 8, 2.665 us apart,
// with one idle slot after the eighth group, in a 53.3 us sequence (FORMATS.md: 160 us between
// packet timestamps, 6253.9 packets/s at 600 rpm). Alpha Prime datasheet: 220 m at 10 %.
SensorModel make_vls128() {
  SensorModel m;
  m.name = "vls128";
  m.channels = 128;
  m.elevation_deg.assign(kVls128ElevationDeg.begin(), kVls128ElevationDeg.end());
  m.azimuth_offset_deg.assign(kVls128RotCorrectionDeg.begin(), kVls128RotCorrectionDeg.end());
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.004;
  m.optics = spinning_head_optics(220);
  m.velodyne = VelodyneTraits{.product_id = 0xA1,
                              .product_name = "VLS-128",
                              .sequence_period_us = 53.3,
                              .laser_spacing_us = 2.665,
                              .lasers_per_firing = 8,
                              .firings_per_pause = 8,
                              .sequences_per_block = 1,
                              .banks = 4};
  return m;
}

// HDL-64E S3: every unit has its own calibration; the emulated one is the unit whose file
// ros-drivers/velodyne ships (64e_s3-xiesc.yaml: angles, distance corrections, beam offsets,
// generated into velodyne/beam_tables.cpp and compared with the file by a test). Upper block
// (lasers 0-31, flag FF EE) and lower block (32-63, FF DD) alternate with the same azimuth, six
// columns per packet; an upper and a lower laser fire together, 32 pairs in a 48 us sequence
// (3472 packets/s at 600 rpm, the ROS driver's packet rate; the datasheet's 1.3 M points/s).
// No return-mode or product byte: bytes 1204-1205 carry the rotating status. Datasheet range:
// 50 m for pavement (10 %), 120 m for cars and foliage.
SensorModel make_hdl64e() {
  SensorModel m;
  m.name = "hdl64e";
  m.channels = 64;
  m.laser_corrections.assign(kHdl64eS3Corrections.begin(), kHdl64eS3Corrections.end());
  for (const VelodyneLaserCorrection& c : m.laser_corrections) {
    m.elevation_deg.push_back(c.elevation_deg);
    m.azimuth_offset_deg.push_back(c.rot_correction_deg);
  }
  m.range_unit_m = 0.002;
  m.max_range_m = 65535 * 0.002;
  m.min_range_m = 0.002;
  m.optics = spinning_head_optics(50);
  m.velodyne = VelodyneTraits{.sequence_period_us = 48.0,
                              .laser_spacing_us = 1.5,
                              .firing_cycle = 32,
                              .dual_return = false,
                              .status_bytes = true,
                              .sequences_per_block = 1,
                              .banks = 2};
  return m;
}

}  // namespace

namespace velodyne {
std::vector<SensorModel> models() {
  return {make_vlp16(),  make_puck_hires(), make_vlp32c(),
          make_hdl32e(), make_hdl64e(),     make_vls128()};
}
}  // namespace velodyne

}  // namespace lidaremu::core
