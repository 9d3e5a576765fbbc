// The registry: every sensor model, once. Angle tables are measured values from real units
// (see each row's source note), never invented.
#include <array>

#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {
namespace {

// Velodyne heads share their optics: manuals give divergence 3.0 mrad horizontal x 1.5 mrad
// vertical (half-angle 1.06 mrad, their geometric mean) and an exit spot of 12.7 x 9.5 mm;
// accuracy +/-3 cm. Datasheets say "range up to R m" without a reflectivity: taken at 10 %. No
// datasheet gives the receiver's overlap: 20 m is a representative full-overlap range (PHYSICS.md
// 2b crossover) that keeps drizzle from blinding the sensor, as it does not blind real ones.
SensorOptics velodyne_optics(double datasheet_range_m) {
  return SensorOptics{.datasheet_range_m = datasheet_range_m,
                      .datasheet_reflectivity = 0.10,
                      .beam_exit_radius_m = 0.0055,
                      .beam_divergence_rad = 0.00106,
                      .range_noise_sigma_m = 0.015,
                      .full_overlap_m = 20};
}

// VLP-16: elevation by laser id from the VLP-16 manual and ros-drivers/velodyne VLP16db.yaml
// (copied in tests/data/velodyne/VLP16db.yaml, which a test compares with this row).
SensorModel make_vlp16() {
  SensorModel m;
  m.name = "vlp16";
  m.family = SensorFamily::kVelodyne;
  m.channels = 16;
  m.elevation_deg = {-15, 1, -13, 3, -11, 5, -9, 7, -7, 9, -5, 11, -3, 13, -1, 15};
  m.azimuth_offset_deg.assign(16, 0.0);
  m.range_unit_m = 0.002;
  m.max_range_m = 65535 * 0.002;
  m.min_range_m = 0.002;
  m.optics = velodyne_optics(100);  // VLP-16 datasheet: up to 100 m
  m.velodyne = VelodyneTraits{.product_id = 0x22,
                              .sequence_period_us = 55.296,
                              .laser_spacing_us = 2.304,
                              .sequences_per_block = 2};
  return m;
}

// OS1-64: beam tables of a real OS-1-64 (ouster-sdk test data OS-1-64_sensor_config_reduced.json,
// in tests/data/ouster/); beam origin, lidar-to-sensor and IMU transforms as every OS-1 metadata
// file in that data set states them (15.806 mm, z 36.18 mm).
SensorModel make_os1_64() {
  SensorModel m;
  m.name = "os1-64";
  m.family = SensorFamily::kOuster;
  m.channels = 64;
  m.elevation_deg = {16.46,  15.88, 15.32,  14.8,   14.29,  13.71,  13.17,  12.63,  12.15, 11.58,
                     11.05,  10.52, 10.05,  9.49,   8.95,   8.43,   7.95,   7.41,   6.88,  6.34,
                     5.87,   5.33,  4.8,    4.27,   3.79,   3.26,   2.72,   2.19,   1.71,  1.18,
                     0.65,   0.12,  -0.36,  -0.9,   -1.43,  -1.96,  -2.44,  -2.97,  -3.51, -4.04,
                     -4.52,  -5.05, -5.58,  -6.12,  -6.61,  -7.13,  -7.67,  -8.22,  -8.7,  -9.22,
                     -9.76,  -10.3, -10.8,  -11.33, -11.86, -12.43, -12.91, -13.45, -14,   -14.57,
                     -15.07, -15.6, -16.17, -16.75};
  m.azimuth_offset_deg = {
      3.12,  0.97,  -1.18, -3.3,  3.09,  0.97,  -1.15, -3.25, 3.09,  0.98,  -1.12, -3.21, 3.08,
      0.99,  -1.09, -3.17, 3.08,  1,     -1.06, -3.15, 3.08,  1.02,  -1.05, -3.12, 3.1,   1.03,
      -1.04, -3.1,  3.11,  1.04,  -1.03, -3.09, 3.12,  1.04,  -1.01, -3.09, 3.14,  1.07,  -1,
      -3.08, 3.15,  1.07,  -1,    -3.08, 3.17,  1.08,  -0.99, -3.1,  3.19,  1.1,   -0.98, -3.09,
      3.23,  1.12,  -0.99, -3.11, 3.24,  1.12,  -1,    -3.13, 3.29,  1.14,  -1.01, -3.17};
  m.range_unit_m = 0.001;
  m.max_range_m = ((1u << 20) - 1) * 0.001;
  m.min_range_m = 0.001;
  // OS1 (gen 1) datasheet: 120 m at 80 % reflectivity (and 40 m at 10 %, which the range
  // equation then gives as 42 m); divergence 0.13 deg FWHM; precision +/-3 cm. Receiver
  // overlap: representative, 10 m (less sensitive to dark targets than the VLP-16, it needs
  // less near-field suppression to shrug off drizzle).
  m.optics = SensorOptics{.datasheet_range_m = 120,
                          .datasheet_reflectivity = 0.80,
                          .beam_exit_radius_m = 0.005,
                          .beam_divergence_rad = 0.0011,
                          .range_noise_sigma_m = 0.015,
                          .full_overlap_m = 10};
  m.ouster =
      OusterTraits{.prod_line = "OS-1-64",
                   .prod_pn = "840-102144-D",
                   .lidar_origin_to_beam_origin_mm = 15.806,
                   .lidar_to_sensor = {-1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1, 36.18, 0, 0, 0, 1},
                   .imu_to_sensor = {1, 0, 0, 6.253, 0, 1, 0, -11.775, 0, 0, 1, 7.645, 0, 0, 0, 1},
                   .columns_per_packet = 16,
                   .default_columns = 1024,
                   .default_fps = 10};
  return m;
}

// VLP-32C (Ultra Puck): elevation and rot_correction by laser id from ros-drivers/velodyne
// VeloView-VLP-32C.yaml (copied in tests/data/velodyne/, which a test compares with this row);
// 4 mm distance unit, one sequence of 32 lasers per block, fired in pairs 2.304 us apart.
SensorModel make_vlp32c() {
  SensorModel m;
  m.name = "vlp32c";
  m.family = SensorFamily::kVelodyne;
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
  m.optics = velodyne_optics(200);  // Ultra Puck datasheet: up to 200 m
  m.velodyne = VelodyneTraits{.product_id = 0x28,
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
  return m;
}

// HDL-32E: elevations from ros-drivers/velodyne 32db.yaml (tests/data/velodyne/); one laser every
// 1.152 us, a sequence of 32 lasers per block every 46.08 us (FORMATS.md), 2 mm unit. Datasheet:
// range up to 100 m (taken at 10 %, as for the VLP-16).
SensorModel make_hdl32e() {
  SensorModel m;
  m.name = "hdl32e";
  m.family = SensorFamily::kVelodyne;
  m.channels = 32;
  m.elevation_deg = {-30.67, -9.33, -29.33, -8.0,  -28.0,  -6.67, -26.67, -5.33,
                     -25.33, -4.0,  -24.0,  -2.67, -22.67, -1.33, -21.33, 0.0,
                     -20.0,  1.33,  -18.67, 2.67,  -17.33, 4.0,   -16.0,  5.33,
                     -14.67, 6.67,  -13.33, 8.0,   -12.0,  9.33,  -10.67, 10.67};
  m.azimuth_offset_deg.assign(32, 0.0);
  m.range_unit_m = 0.002;
  m.max_range_m = 65535 * 0.002;
  m.min_range_m = 0.002;
  m.optics = velodyne_optics(100);
  m.velodyne = VelodyneTraits{.product_id = 0x21,
                              .sequence_period_us = 46.08,
                              .laser_spacing_us = 1.152,
                              .sequences_per_block = 1};
  return m;
}

const SensorModel kVlp16 = make_vlp16();
const SensorModel kPuckHiRes = make_puck_hires();
const SensorModel kHdl32e = make_hdl32e();
const SensorModel kVlp32c = make_vlp32c();
const SensorModel kOs1With64Channels = make_os1_64();
const std::array<const SensorModel*, 5> kModels{&kVlp16, &kPuckHiRes, &kVlp32c, &kHdl32e,
                                                &kOs1With64Channels};

}  // namespace

const SensorModel* find_sensor_model(std::string_view name) {
  for (const SensorModel* m : kModels) {
    if (m->name == name) return m;
  }
  return nullptr;
}

std::span<const SensorModel* const> all_sensor_models() { return kModels; }

}  // namespace lidaremu::core
