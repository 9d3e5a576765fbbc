// The Ouster rows of the sensor registry: every product line and channel count, from the SDK's
// published metadata of real units.
#include "beam_tables.hpp"
#include "lidaremu/core/family.hpp"
#include "lidaremu/core/physics.hpp"

namespace lidaremu::core {
namespace {

// Ouster's receivers: lens 20 mm, filter 25 nm, each channel seeing 1.5 times the beam; the
// datasheet ranges hold in 100 klx sunlight (datasheet_sun_w_per_m2 = 1000). The OS1 datasheet's
// two figures, both in 100 klx (120 m at 80 %, 40 m at 10 %), scale as sqrt(rho) within their
// rounding (42.4 m): a target's own sunlight can raise the noise only a little. Taken: 100 klx on
// the 80 % target adds a quarter of the detector's noise variance (sigma +12 %, the 10 % reach
// then 44 m); that sets the receiver's knee.
SensorOptics with_spad_receiver(SensorOptics o) {
  o.datasheet_sun_w_per_m2 = 1000;
  o.rx_aperture_m = 0.020;
  o.rx_fov_rad = 1.5 * 2.0 * o.beam_divergence_rad;
  o.optical_filter_nm = 25;
  const physics::Receiver r{
      .aperture_m = o.rx_aperture_m, .fov_rad = o.rx_fov_rad, .filter_nm = o.optical_filter_nm};
  o.ambient_knee_w = r.ambient_w(1000, 1.0, 0.0, o.datasheet_reflectivity) / 0.25;
  return o;
}

// Ouster optics by product line, from the Ouster rev-6 datasheets: range at 80 % reflectivity
// at > 90 % detection probability (taken as 90 %), beam divergence (FWHM, halved here), precision.
// Range noise: the OS1 (gen 1) datasheet's repeatability curve (1 sigma: 1.5 cm at SNR > 250,
// 3 cm at SNR 100, 10 cm at SNR 12) fitted by sigma = dR / sqrt(2 SNR) gives dR = 0.42 and
// 0.49 m: 0.45 m (the SensorOptics default), the precision as the floor. Receiver overlap as for
// the OS1 (see below).
SensorOptics ouster_optics(std::string_view prod_line) {
  if (prod_line.starts_with("OS-0")) {
    return with_spad_receiver(SensorOptics{.datasheet_range_m = 50,
                                           .datasheet_reflectivity = 0.80,
                                           .datasheet_detection_probability = 0.90,
                                           .beam_exit_radius_m = 0.005,
                                           .beam_divergence_rad = 0.00305,  // 0.35 deg FWHM
                                           .range_noise_sigma_m = 0.015,
                                           .full_overlap_m = 5});
  }
  if (prod_line.starts_with("OS-2")) {
    return with_spad_receiver(SensorOptics{.datasheet_range_m = 240,
                                           .datasheet_reflectivity = 0.80,
                                           .datasheet_detection_probability = 0.90,
                                           .beam_exit_radius_m = 0.006,
                                           .beam_divergence_rad = 0.00079,  // 0.09 deg FWHM
                                           .range_noise_sigma_m = 0.025,
                                           .full_overlap_m = 20});
  }
  // OS1 (gen 1) datasheet: 120 m at 80 % reflectivity (and 40 m at 10 %, which the range
  // equation then gives as 42 m); divergence 0.13 deg FWHM; precision +/-3 cm. Receiver overlap:
  // representative, 10 m (less sensitive to dark targets than the VLP-16, it needs less
  // near-field suppression to shrug off drizzle).
  return with_spad_receiver(SensorOptics{.datasheet_range_m = 120,
                                         .datasheet_reflectivity = 0.80,
                                         .datasheet_detection_probability = 0.90,
                                         .beam_exit_radius_m = 0.005,
                                         .beam_divergence_rad = 0.0011,
                                         .range_noise_sigma_m = 0.015,
                                         .full_overlap_m = 10});
}

// Every Ouster model: beam tables, beam origin and transforms of a real unit of that product
// line (ouster/beam_tables.cpp, generated from the SDK's published metadata in tests/data/ouster/
// and compared with it by a test); 20-bit millimetre ranges.
SensorModel make_ouster(const OusterBeamTable& t) {
  SensorModel m;
  m.name = t.model;
  m.channels = static_cast<int>(t.altitude_deg.size());
  m.elevation_deg.assign(t.altitude_deg.begin(), t.altitude_deg.end());
  m.azimuth_offset_deg.assign(t.azimuth_deg.begin(), t.azimuth_deg.end());
  m.range_unit_m = 0.001;
  m.max_range_m = ((1u << 20) - 1) * 0.001;
  m.min_range_m = 0.001;
  m.optics = ouster_optics(t.prod_line);
  m.ouster = OusterTraits{.prod_line = t.prod_line,
                          .prod_pn = t.prod_pn,
                          .lidar_origin_to_beam_origin_mm = t.lidar_origin_to_beam_origin_mm,
                          .lidar_to_sensor = t.lidar_to_sensor,
                          .imu_to_sensor = t.imu_to_sensor,
                          .columns_per_packet = 16,
                          .default_columns = 1024,
                          .default_fps = 10};
  return m;
}

}  // namespace

namespace ouster {
std::vector<SensorModel> models() {
  std::vector<SensorModel> rows;
  rows.reserve(ouster_beam_tables().size());
  for (const OusterBeamTable& t : ouster_beam_tables()) rows.push_back(make_ouster(t));
  return rows;
}
}  // namespace ouster

}  // namespace lidaremu::core
