// The registry: every sensor model, once. Angle tables are measured values from real units
// (see each row's source note), never invented; the RoboSense rows (robosense/models.cpp) carry
// their manuals' nominal angles, as no RoboSense calibration is among the facts.
#include <array>
#include <span>
#include <vector>

#include "hesai/beam_tables.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/hesai/ptc.hpp"
#include "lidaremu/core/physics.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "livox/models.hpp"
#include "ouster/beam_tables.hpp"
#include "robosense/models.hpp"
#include "velodyne/beam_tables.hpp"

namespace lidaremu::core {
namespace {

// Velodyne heads share their optics: manuals give divergence 3.0 mrad horizontal x 1.5 mrad
// vertical (half-angle 1.06 mrad, their geometric mean; aspect 2, which shapes the blooming
// kernel's core) and an exit spot of 12.7 x 9.5 mm;
// accuracy +/-3 cm "typical", with no conditions and no SNR curve: taken as 1 sigma for a 10 %
// target within a quarter of the datasheet range (dR = 0.30 m in sigma = dR / sqrt(2 SNR); 1.5 cm
// for strong echoes). Datasheets say "range up to R m" with neither reflectivity nor probability:
// taken as 10 % at 50 % detection, the edge of reach (the median point of the detection curve;
// "up to" promises no assured detection, unlike Ouster's 90 %). No
// datasheet gives the receiver's overlap: 20 m is a representative full-overlap range (PHYSICS.md
// 2b crossover) that keeps drizzle from blinding the sensor, as it does not blind real ones.
//
// Receiver: an APD behind a 25 mm lens and a 25 nm filter, each channel seeing 1.5 times the beam's
// full angle (3.2 mrad). The APD's input-referred NEP of 50 fW/sqrt(Hz) (automotive APD
// receivers: tens to hundreds of fW/sqrt(Hz)), excess noise factor 3 and quantum efficiency 0.8
// put the ambient power whose shot noise equals the detector's noise at NEP^2 QE / (2 h nu F) =
// 1.5 nW: full sun on a 10 % target facing it raises the noise 1.4 times.
SensorOptics velodyne_optics(double datasheet_range_m) {
  return SensorOptics{.datasheet_range_m = datasheet_range_m,
                      .datasheet_reflectivity = 0.10,
                      .beam_exit_radius_m = 0.0055,
                      .beam_divergence_rad = 0.00106,
                      .beam_aspect = 2.0,
                      .range_noise_sigma_m = 0.015,
                      .range_noise_pulse_m = 0.30,
                      .full_overlap_m = 20,
                      .rx_aperture_m = 0.025,
                      .rx_fov_rad = 0.0032,
                      .optical_filter_nm = 25,
                      .ambient_knee_w = 1.5e-9};
}

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
  m.family = SensorFamily::kVelodyne;
  m.channels = 128;
  m.elevation_deg.assign(kVls128ElevationDeg.begin(), kVls128ElevationDeg.end());
  m.azimuth_offset_deg.assign(kVls128RotCorrectionDeg.begin(), kVls128RotCorrectionDeg.end());
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.004;
  m.optics = velodyne_optics(220);
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
  m.family = SensorFamily::kVelodyne;
  m.channels = 64;
  m.laser_corrections.assign(kHdl64eS3Corrections.begin(), kHdl64eS3Corrections.end());
  for (const VelodyneLaserCorrection& c : m.laser_corrections) {
    m.elevation_deg.push_back(c.elevation_deg);
    m.azimuth_offset_deg.push_back(c.rot_correction_deg);
  }
  m.range_unit_m = 0.002;
  m.max_range_m = 65535 * 0.002;
  m.min_range_m = 0.002;
  m.optics = velodyne_optics(50);
  m.velodyne = VelodyneTraits{.sequence_period_us = 48.0,
                              .laser_spacing_us = 1.5,
                              .firing_cycle = 32,
                              .dual_return = false,
                              .status_bytes = true,
                              .sequences_per_block = 1,
                              .banks = 2};
  return m;
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
  m.family = SensorFamily::kOuster;
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

// Pandar XT heads (XT16 and XT32 user manuals, "Specifications"; FORMATS-HESAI-ROBOSENSE.md):
// range 0.05 to 120 m, 80 m at 10 % reflectivity (taken, as the Velodyne "up to" figures, at
// 50 % detection: the manuals give no probability); precision 0.5 cm (1 sigma), accuracy
// +/-1 cm. The manuals give no beam divergence, no receiver figures and no SNR curve: those
// are the Velodyne heads' (905 nm mechanical heads of the same class and reach), said so here.
SensorOptics hesai_xt_optics() {
  SensorOptics o = velodyne_optics(80);
  o.range_noise_sigma_m = 0.005;
  return o;
}

// The XT heads' return modes and their PTC codes (nebula's hesai_common; the XT manuals list
// first + last too, code 4, whose block order no capture here shows: left out).
const std::vector<HesaiTraits::ReturnMode> kXtReturnModes{
    {EchoMode::kLast, hesai::ptc::kPtcLast},
    {EchoMode::kStrongest, hesai::ptc::kPtcStrongest},
    {EchoMode::kDual, hesai::ptc::kPtcLastStrongest},
    {EchoMode::kFirst, hesai::ptc::kPtcFirst},
    {EchoMode::kFirstStrongest, hesai::ptc::kPtcFirstStrongest}};

// The rows Hesai's XT heads share: protocol 6.1, 4 mm distance unit (262.14 m the largest
// range), one block (a column) every 50 us whatever the rate, 0.18 degree at 600 rpm (the real
// captures: 500 dual packets a turn, one per 200 us); 600 (default) or 1200 rpm (the manuals'
// Spin Rate setting).
SensorModel make_hesai_xt(std::string_view name, const char* product_name, std::uint8_t ptc_model,
                          double channel_step_us) {
  SensorModel m;
  m.name = name;
  m.family = SensorFamily::kHesai;
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.05;
  m.optics = hesai_xt_optics();
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 1200, .rpm_step = 600};
  m.hesai = HesaiTraits{.format = hesai::find_model_format(name),
                        .product_name = product_name,
                        .ptc_model = ptc_model,
                        .block_period_us = 50.0,
                        .first_firing_us = 6.0,
                        .channel_step_us = channel_step_us,
                        .stamp_after_block_us = 0,
                        .sends_gps = true,
                        .return_modes = kXtReturnModes,
                        .firing_loops = 1,
                        .channel_loop = {}};
  return m;
}

// Pandar XT32: the angles of the unit whose calibration nebula ships (tests/data/hesai/
// PandarXT32.csv, which a test compares with this row); channel k fires 6.0 + 1.512 k us after
// its block starts (nebula's pandar_xt32 timing, the SDK's firetime file: channel 1 at 6.000 us,
// step 1.512 us). PTC inventory model byte 25.
SensorModel make_pandar_xt32() {
  SensorModel m = make_hesai_xt("pandar-xt32", "PandarXT-32", 25, 1.512);
  m.channels = 32;
  m.elevation_deg = {14.972363,  13.952372,  12.938632,  11.931141,  10.926151,  9.922410,
                     8.917419,   7.917429,   6.919938,   5.919947,   4.922456,   3.924965,
                     2.929974,   1.936233,   0.944992,   -0.047500,  -1.039991,  -2.036232,
                     -3.028723,  -4.024964,  -5.019955,  -6.016196,  -7.013687,  -8.013678,
                     -9.011169,  -10.011159, -11.006150, -12.003641, -12.996131, -13.997372,
                     -15.004862, -16.023602};
  m.azimuth_offset_deg = {
      0.082385,  0.076529,  0.078240,  0.076267,  0.064337,  0.059942,  0.049319,  0.044992,
      0.034446,  0.027658,  0.020896,  0.014147,  0.008668,  -0.000548, -0.007248, -0.015201,
      -0.025654, -0.031126, -0.037837, -0.045822, -0.061312, -0.065570, -0.068599, -0.076658,
      -0.088476, -0.091580, -0.098438, -0.092837, -0.102247, -0.104231, -0.118783, -0.129679};
  return m;
}

// Pandar XT16: the manual's design angles (Appendix I: 15 to -15 degrees in 2-degree steps, no
// azimuth offset; tests/data/hesai/PandarXT16.csv, compared by a test); channels 3.024 us apart
// (nebula's pandar_xt16 timing). PTC inventory model byte 26.
SensorModel make_pandar_xt16() {
  SensorModel m = make_hesai_xt("pandar-xt16", "PandarXT-16", 26, 3.024);
  m.channels = 16;
  for (int ch = 0; ch < 16; ++ch) m.elevation_deg.push_back(15.0 - 2.0 * ch);
  m.azimuth_offset_deg.assign(16, 0.0);
  return m;
}

// Pandar QT128C2X: a short-range head (protocol 3.2, body / functional-safety / tail CRCs, a
// 32-byte signature). Angles of the unit whose calibration nebula ships (tests/data/hesai/
// PandarQT128.csv, generated into hesai/beam_tables.cpp, compared with the file by a test).
// Timing from the real capture: 600 rpm only, one column (two dual blocks) every 111.1 us,
// 0.4 degree, 900 packets a turn in dual mode. Two firing loops take turns column by column
// (the tail's mode flag): channels 1-32 fire in loop 1, 33-64 in loop 2, 65-128 in both (every
// packet of the capture; FORMATS-HESAI-ROBOSENSE.md's "64 of 128" understates it). Firing
// times: 9.0 us after the block's start plus nebula's per-loop tables (not a constant step).
// Optics: the QT128C2X datasheet's 50 m at 10 % reflectivity (taken at 50 % detection) and
// +/-3 cm accuracy (taken as 1 sigma for weak echoes, as for the Velodyne heads); minimum range
// 0.05 m; divergence and receiver as the other 905 nm heads here (no published figures).
SensorModel make_pandar_qt128() {
  SensorModel m;
  m.name = "pandar-qt128";
  m.family = SensorFamily::kHesai;
  m.channels = 128;
  m.elevation_deg.assign(kPandarQt128ElevationDeg.begin(), kPandarQt128ElevationDeg.end());
  m.azimuth_offset_deg.assign(kPandarQt128AzimuthDeg.begin(), kPandarQt128AzimuthDeg.end());
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.05;
  m.optics = velodyne_optics(50);
  m.optics.range_noise_sigma_m = 0.01;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 600, .rpm_step = 1};
  m.hesai = HesaiTraits{.format = hesai::find_model_format("pandar-qt128"),
                        .product_name = "QT128C2X",
                        .ptc_model = 32,
                        .block_period_us = 1e6 / 9000.0,
                        .first_firing_us = 9.0,
                        .channel_step_us = 0,
                        .stamp_after_block_us = 0,
                        .return_modes = {{EchoMode::kLast, hesai::ptc::kPtcLast},
                                         {EchoMode::kStrongest, hesai::ptc::kPtcStrongest},
                                         {EchoMode::kDual, hesai::ptc::kPtcLastStrongest},
                                         {EchoMode::kFirst, hesai::ptc::kPtcFirst}},
                        .firing_loops = 2,
                        .channel_loop = std::vector<std::uint8_t>(128, 0)};
  for (std::size_t ch = 0; ch < 64; ++ch) m.hesai.channel_loop[ch] = ch < 32 ? 1 : 2;
  return m;
}

// Pandar40P and Pandar64 share their timing and optics: a firing every 55.56 us, 0.2 degree at
// 600 rpm (the real captures: 360 and 600 dual packets a turn), 600 or 1200 rpm; return modes
// strongest, last, dual (last then strongest, as the XT); the year counted from 2000 (their
// manuals and nebula). Timing (nebula's decoders): channel k fires `last_block_us` plus its
// table entry before the packet's time, counted back from the last block; the tail's time is
// that plus the table's longest entry after the last block's first firing. Optics: the Pandar
// manuals' 200 m at 20 % reflectivity (taken at 50 % detection); +/-2 cm accuracy (0.5 to
// 200 m) as 1 sigma for weak echoes; minimum range 0.3 m.
SensorModel make_pandar(std::string_view name, const char* product_name, std::uint8_t ptc_model,
                        std::span<const double> elevation_deg, std::span<const double> azimuth_deg,
                        double last_block_us, double longest_table_us) {
  SensorModel m;
  m.name = name;
  m.family = SensorFamily::kHesai;
  m.channels = static_cast<int>(elevation_deg.size());
  m.elevation_deg.assign(elevation_deg.begin(), elevation_deg.end());
  m.azimuth_offset_deg.assign(azimuth_deg.begin(), azimuth_deg.end());
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.3;
  m.optics = velodyne_optics(200);
  m.optics.datasheet_reflectivity = 0.20;
  m.optics.range_noise_sigma_m = 0.01;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 1200, .rpm_step = 600};
  m.hesai = HesaiTraits{.format = hesai::find_model_format(name),
                        .product_name = product_name,
                        .ptc_model = ptc_model,
                        .block_period_us = 1e6 / 18000.0,
                        .first_firing_us = 0,
                        .channel_step_us = 0,
                        .stamp_after_block_us = last_block_us + longest_table_us,
                        .sends_gps = true,
                        .return_modes = {{EchoMode::kLast, hesai::ptc::kPtcLast},
                                         {EchoMode::kStrongest, hesai::ptc::kPtcStrongest},
                                         {EchoMode::kDual, hesai::ptc::kPtcLastStrongest}},
                        .firing_loops = 1,
                        .channel_loop = {}};
  return m;
}

// Pandar40P: the unit whose calibration nebula ships (tests/data/hesai/Pandar40P.csv, compared
// by a test); no header, ten Velodyne-like blocks (FF EE, azimuth, 40 records of distance in
// 4 mm and reflectivity), 1262 bytes without the UDP sequence (as the capture); nebula's
// timing 28.58 us and a table to 54.67 us. PTC model byte 0.
SensorModel make_pandar_40p() {
  return make_pandar("pandar-40p", "Pandar40P", 0, kPandar40pElevationDeg, kPandar40pAzimuthDeg,
                     28.58, 54.67);
}

// Pandar64: nebula's unit (tests/data/hesai/Pandar64.csv); an 8-byte header, six blocks of 64
// records, 1198 bytes with the UDP sequence (as the capture); nebula's timing 42.58 us and a
// table to 54.668 us. The capture's year byte is 120 (2020 from 1900), against its manual and
// nebula (from 2000): we count from 2000, which nebula reads right and the SDK too (it takes a
// value below 70 as 2000 + value). PTC model byte 2.
SensorModel make_pandar_64() {
  return make_pandar("pandar-64", "Pandar64", 2, kPandar64ElevationDeg, kPandar64AzimuthDeg, 42.58,
                     54.668);
}

// Pandar XT32M2X: protocol 6.1 with six blocks and a 5 mm distance unit (its real capture);
// the angles of nebula's unit (tests/data/hesai/PandarXT32M.csv, generated into
// hesai/beam_tables.cpp, compared with the file by a test). A column every 50 us (0.18 degree
// at 600 rpm, as the capture), channels k and k + 16 fire together, 0.368 + 2.888 (k mod 16) us
// after 5.632 us (nebula's pandar_xt32m). Its capture's mode, first + strongest (0x3C), lays the
// first in the even block and the strongest in the odd one, and counts 3 returns in the header.
// The tail's time: nebula times a two-block packet's columns 150, 100 and 50 us before it, so
// it is stamped 50 us after its last column starts, which makes nebula's point times the
// emulated firing times. 600 rpm (the capture's; other rates not in the facts here). Optics: the
// XT32's stand in (the XT32M2X's range figures are not among the facts here); nebula keeps its
// points from 0.5 m. PTC model byte 38.
SensorModel make_pandar_xt32m() {
  SensorModel m = make_hesai_xt("pandar-xt32m", "PandarXT-32M2X", 38, 0);
  m.channels = 32;
  m.elevation_deg.assign(kPandarXt32mElevationDeg.begin(), kPandarXt32mElevationDeg.end());
  m.azimuth_offset_deg.assign(kPandarXt32mAzimuthDeg.begin(), kPandarXt32mAzimuthDeg.end());
  m.range_unit_m = 0.005;
  m.max_range_m = 65535 * 0.005;
  m.min_range_m = 0.5;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 600, .rpm_step = 1};
  m.hesai.stamp_after_block_us = 50.0;
  return m;
}

// Pandar QT64 (protocol 3.1): a short-range head, the angles of nebula's unit (tests/data/hesai/
// PandarQT64.csv, generated, compared by a test). A column every 166.7 us: 0.6 degree at
// 600 rpm (its capture: two columns a packet in dual mode, one every 333.3 us, 300 a turn).
// Return modes (nebula's hesai_common): last 0, first 3, and its dual, first + last (0x3B,
// PTC 2): the capture lays the first in the even block, the last in the odd one. Timing
// (nebula's pandar_qt64): a column's channels fire 12.31 to 146.45 us after it starts (a
// table), and the first column starts 25.71 us after the packet's time. Optics: the PandarQT
// datasheet's 20 m at 10 % reflectivity (taken at 50 % detection) and +/-3 cm accuracy (as
// 1 sigma for weak echoes); range 0.1 to 60 m (nebula's limits); the receiver's full overlap at
// 5 m, as the other short-range head's here (OS0). PTC model byte 15 (nebula's,
// marked "check required" there).
SensorModel make_pandar_qt64() {
  SensorModel m;
  m.name = "pandar-qt64";
  m.family = SensorFamily::kHesai;
  m.channels = 64;
  m.elevation_deg.assign(kPandarQt64ElevationDeg.begin(), kPandarQt64ElevationDeg.end());
  m.azimuth_offset_deg.assign(kPandarQt64AzimuthDeg.begin(), kPandarQt64AzimuthDeg.end());
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.1;
  m.optics = velodyne_optics(20);
  m.optics.range_noise_sigma_m = 0.01;
  m.optics.full_overlap_m = 5;  // a short-range head: as the OS0's (representative)
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 600, .rpm_step = 1};
  m.hesai = HesaiTraits{.format = hesai::find_model_format("pandar-qt64"),
                        .product_name = "PandarQT",
                        .ptc_model = 15,
                        .block_period_us = 1e6 / 6000.0,
                        .first_firing_us = 12.31,
                        .channel_step_us = 0,
                        .stamp_after_block_us = -25.71,
                        .stamp_from_first_column = true,
                        .return_modes = {{EchoMode::kLast, hesai::ptc::kPtcLast},
                                         {EchoMode::kFirstLast, hesai::ptc::kPtcQt64Dual},
                                         {EchoMode::kFirst, hesai::ptc::kPtcFirst}},
                        .firing_loops = 1,
                        .channel_loop = {}};
  return m;
}

struct Registry {
  std::vector<SensorModel> models;
  std::vector<const SensorModel*> index;
  Registry() {
    models = {make_vlp16(),  make_puck_hires(), make_vlp32c(),
              make_hdl32e(), make_hdl64e(),     make_vls128()};
    for (const OusterBeamTable& t : kOusterBeamTables) models.push_back(make_ouster(t));
    models.push_back(make_pandar_xt32());
    models.push_back(make_pandar_xt16());
    models.push_back(make_pandar_xt32m());
    models.push_back(make_pandar_qt64());
    models.push_back(make_pandar_qt128());
    models.push_back(make_pandar_40p());
    models.push_back(make_pandar_64());
    models.push_back(robosense::make_rs_helios(velodyne_optics(110)));
    models.push_back(robosense::make_rs_bpearl(velodyne_optics(30)));
    models.push_back(robosense::make_rs_bpearl_v3(velodyne_optics(30)));
    models.push_back(livox::make_mid360(velodyne_optics(40)));
    for (const SensorModel& m : models) index.push_back(&m);
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

const SensorModel* find_sensor_model(std::string_view name) {
  for (const SensorModel* m : registry().index) {
    if (m->name == name) return m;
  }
  return nullptr;
}

std::span<const SensorModel* const> all_sensor_models() { return registry().index; }

std::string sensor_model_names() {
  std::string names;
  for (const SensorModel* m : registry().index) {
    if (!names.empty()) names += '|';
    names += m->name;
  }
  return names;
}

}  // namespace lidaremu::core
