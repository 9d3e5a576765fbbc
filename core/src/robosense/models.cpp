// RoboSense registry rows. No RoboSense capture is among the facts here. The Helios and Bpearl
// angles are the manuals' nominal ones; the RS-LiDAR-16 and -32 rows carry one real unit's
// (ros_rslidar's angle files, tests/data/robosense/). A real unit's DIFOP carries its own, and
// drivers take them from there, as they take these from the emulated DIFOP.
#include "models.hpp"

#include <cmath>

#include "../spinning_optics.hpp"
#include "lidaremu/core/family.hpp"
#include "lidaremu/core/robosense.hpp"

namespace lidaremu::core::robosense {
namespace {

// 2.5 mm distance unit (rs_driver's 0.0025; nebula: byte 17 = 1): 163.8 m the largest range.
SensorModel make_robosense(std::string_view name, const SensorOptics& optics,
                           int channels = kChannels) {
  SensorModel m;
  m.name = name;
  m.channels = channels;
  m.range_unit_m = 0.0025;
  m.max_range_m = 65535 * 0.0025;
  m.optics = optics;
  return m;
}

}  // namespace

// RS-Helios (the 5515: 32 channels, +15 to -55 degrees). Angles: the user guide's nominal
// vertical angles (RS-Helios-5515 user guide v3.0.1, table 5), channel 0 the highest, no
// horizontal offset. Timing: a block every 55.56 us, channel k 1.73 k us after its start
// (rs_driver's table). nebula's table differs (steps of 1.57-1.91 us, lasers 17 and 18 swapped);
// rs_driver's is followed because it is the vendor's driver and the one whose per-channel azimuth
// interpolation uses the table, so the emulated beams point where it puts the points. Lens
// centre RX 34.98 mm, RZ 0 (rs_driver). 600 (default) or 1200 rpm (the datasheet's 10 and 20 Hz).
// Return modes (DIFOP byte 300): dual 0x00, strongest 0x04, last 0x05, first 0x06. Optics: the
// datasheet's 150 m reach, 110 m at 10 % (NIST), accuracy +/-2 cm (taken as 1 sigma for weak
// echoes, 1 cm for strong ones); minimum range 0.2 m (its blind zone, nebula's MIN_RANGE);
// divergence and receiver as the other 905 nm spinning heads (no published figures).
SensorModel make_rs_helios(const SensorOptics& mechanical_optics) {
  SensorModel m = make_robosense("rs-helios", mechanical_optics);
  m.elevation_deg = {15.0,  13.0,  11.0,  9.0,   7.0,   5.5,   4.0,   2.67,  1.33,  0.0,   -1.33,
                     -2.67, -4.0,  -5.33, -6.67, -8.0,  -10.0, -13.0, -16.0, -19.0, -22.0, -25.0,
                     -28.0, -31.0, -34.0, -37.0, -40.0, -43.0, -46.0, -49.0, -52.0, -55.0};
  m.azimuth_offset_deg.assign(kChannels, 0.0);
  m.min_range_m = 0.2;
  m.optics.range_noise_sigma_m = 0.01;
  m.optics.range_noise_pulse_m = 0.20;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 1200, .rpm_step = 600};
  m.robosense =
      RoboSenseTraits{.format = find_model_format("rs-helios"),
                      .block_period_us = 55.56,
                      .firing_offset_us = {0.00,  1.73,  3.46,  5.19,  6.92,  8.65,  10.38, 12.11,
                                           13.84, 15.57, 17.30, 19.03, 20.76, 22.49, 24.22, 25.95,
                                           27.68, 29.41, 31.14, 32.87, 34.60, 36.33, 38.06, 39.79,
                                           41.52, 43.25, 44.98, 46.71, 48.44, 50.17, 51.90, 53.63},
                      .lens_rx_m = 0.03498,
                      .lens_rz_m = 0.0,
                      .return_modes = {{ReturnMode::kDual, 0x00},
                                       {ReturnMode::kStrongest, 0x04},
                                       {ReturnMode::kLast, 0x05},
                                       {ReturnMode::kFirst, 0x06}}};
  return m;
}

// RS-Bpearl, v4 hardware (a hemispherical near-field head: 32 channels over 90 degrees of
// elevation). Angles: the datasheet's 90 degrees in its 2.81-degree steps, each channel at the
// middle of its 90/32-degree band (88.59 down to 1.41 degrees), no horizontal offset. v4 rather
// than v3: rs_driver and nebula agree on its time (UTC seconds and microseconds) where they
// disagree on v3's (rs_driver YMD, nebula UTC). Timing: a block every 55.56 us, rs_driver's v4
// table (1.67-us steps; nebula's tables are ten times smaller, taken as its unit slip). Lens
// centre RX 16.19 mm, RZ 95.71 mm (rs_driver's v4 constants). 600 (default) or 1200 rpm. Return
// modes (DIFOP byte 300): dual 0x00, strongest 0x01, last 0x02. Optics: the datasheet's 100 m
// reach, 30 m at 10 % (NIST), +/-3 cm; minimum range 0.1 m (its blind zone, rs_driver's minimum);
// a near-field head's receiver overlap, full from 5 m (as the OS0's and the QT64's).
SensorModel make_rs_bpearl(const SensorOptics& mechanical_optics) {
  SensorModel m = make_robosense("rs-bpearl", mechanical_optics);
  // Rounded to the 0.01 degree the DIFOP carries, so the beams are where drivers read them.
  for (int ch = 0; ch < kChannels; ++ch) {
    m.elevation_deg.push_back(std::round((90.0 - 2.8125 * (ch + 0.5)) * 100.0) / 100.0);
  }
  m.azimuth_offset_deg.assign(kChannels, 0.0);
  m.min_range_m = 0.1;
  m.optics.full_overlap_m = 5;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 1200, .rpm_step = 600};
  m.robosense = RoboSenseTraits{
      .format = find_model_format("rs-bpearl"),
      .block_period_us = 55.56,
      .firing_offset_us = {0.00,  1.67,  3.34,  5.00,  6.67,  8.34,  10.01, 11.68,
                           13.34, 15.01, 16.68, 18.35, 20.02, 21.68, 23.35, 25.02,
                           26.69, 28.36, 30.02, 31.69, 33.36, 35.03, 36.70, 38.36,
                           40.03, 41.70, 43.37, 45.04, 46.70, 48.37, 50.04, 51.71},
      .lens_rx_m = 0.01619,
      .lens_rz_m = 0.09571,
      .return_modes = {
          {ReturnMode::kDual, 0x00}, {ReturnMode::kStrongest, 0x01}, {ReturnMode::kLast, 0x02}}};
  return m;
}

// RS-Bpearl v3, the earlier hardware: the v4 row's angles and optics, with rs_driver's v3
// constants: 5 mm distance unit (327.7 m the largest range), a block every 55.52 us, its 32
// channels fired in two interleaved groups 2.56 us apart (rs_driver's v3 table), lens centre
// RX 14.73 mm, RZ 94.27 mm. Its time in YMD form, as rs_driver reads it (nebula's bpearl_v3
// reads UTC seconds there: its times for this model are wrong, rs_driver's right).
SensorModel make_rs_bpearl_v3(const SensorOptics& mechanical_optics) {
  SensorModel m = make_rs_bpearl(mechanical_optics);
  m.name = "rs-bpearl-v3";
  m.range_unit_m = 0.005;
  m.max_range_m = 65535 * 0.005;
  m.robosense.format = find_model_format("rs-bpearl-v3");
  m.robosense.block_period_us = 55.52;
  m.robosense.firing_offset_us = {0.00,  2.56,  5.12,  7.68,  10.24, 12.80, 15.36, 17.92,
                                  25.68, 28.24, 30.80, 33.36, 35.92, 38.48, 41.04, 43.60,
                                  1.28,  3.84,  6.40,  8.96,  11.52, 14.08, 16.64, 19.20,
                                  26.96, 29.52, 32.08, 34.64, 37.20, 39.76, 42.32, 44.88};
  m.robosense.lens_rx_m = 0.01473;
  m.robosense.lens_rz_m = 0.09427;
  return m;
}

// The return modes of the RS-LiDAR-16 and -32 (DIFOP byte 300: rs_driver's getEchoMode, the
// older ros_rslidar agrees).
const std::vector<RoboSenseTraits::ReturnModeCode> kRs16Rs32ReturnModes{
    {ReturnMode::kDual, 0x00}, {ReturnMode::kStrongest, 0x01}, {ReturnMode::kLast, 0x02}};

// The spinning heads' optics at a datasheet's reach stated at 20 % reflectivity.
SensorOptics optics_at_20_percent(double reach_m) {
  SensorOptics optics = spinning_head_optics(reach_m);
  optics.datasheet_reflectivity = 0.20;
  return optics;
}

// RS-LiDAR-16 (FORMATS-MORE.md section 3). Angles: one real unit's (ros_rslidar@726eacca
// rs_lidar_16/angle.csv), channels 0-7 pointing down as the DIFOP's pitch table requires, no
// horizontal offsets; rs_driver truncates them to 0.01 degree, as it does a real unit's. Timing
// (the manual's appendix A, rs_driver's decoder_RS16): 16 lasers 2.8 us apart, a firing every
// 55.5 us, two firings a block in single return. Lens centre RX 38.25 mm (rs_driver). 5 mm
// distance unit (rs_driver's 0.005 for this model), 0.4 m its minimum range (rs_driver's gate).
// 600 (default) or 1200 rpm; the 300 rpm (5 Hz) its DIFOP may state is not offered. Optics:
// 150 m at 20 % (the user manual from v3.3); accuracy
// +/-2 cm (the manual), as the Helios's.
SensorModel make_rs16(const SensorOptics& mechanical_optics) {
  SensorModel m = make_robosense("rs16", mechanical_optics, 16);
  m.elevation_deg = {-14.9994, -12.9766, -10.9894, -8.9750, -6.9734, -4.9900, -2.9946, -0.9918,
                     14.9860,  12.9630,  10.9756,  8.9960,  6.9945,  5.0113,  2.9803,  1.0133};
  m.azimuth_offset_deg.assign(16, 0.0);
  m.range_unit_m = 0.005;
  m.max_range_m = 65535 * 0.005;
  m.min_range_m = 0.4;
  m.optics.range_noise_sigma_m = 0.01;
  m.optics.range_noise_pulse_m = 0.20;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 1200, .rpm_step = 600};
  m.robosense =
      RoboSenseTraits{.format = find_model_format("rs16"),
                      .block_period_us = 55.5,
                      .firing_offset_us = {0.0, 2.8, 5.6, 8.4, 11.2, 14.0, 16.8, 19.6, 22.4, 25.2,
                                           28.0, 30.8, 33.6, 36.4, 39.2, 42.0},
                      .lens_rx_m = 0.03825,
                      .lens_rz_m = 0.0,
                      .return_modes = kRs16Rs32ReturnModes};
  return m;
}

// RS-LiDAR-32 (FORMATS-MORE.md section 3). Angles: one real unit's (ros_rslidar@726eacca
// rs_lidar_32/angle.csv: -25 to +15 degrees, horizontal offsets -7.3 to +9.1 degrees), rounded to
// the 0.001 degree its DIFOP carries; rs_driver rounds them to 0.01 degree, as a real unit's.
// Timing: a firing every 55.52 us, the lasers in pairs 1.44 us apart (rs_driver's table; the
// manual's formula but for slots 15 and 31). Lens centre RX 39.97 mm. 5 mm distance unit, 0.4 m
// minimum range. 600 (default) or 1200 rpm. Optics: 200 m at 20 % (the datasheet); accuracy
// +/-3 cm (the datasheet), 1.5 cm taken as 1 sigma for strong echoes.
SensorModel make_rs32(const SensorOptics& mechanical_optics) {
  SensorModel m = make_robosense("rs32", mechanical_optics);
  m.elevation_deg = {-10.264, 0.297,  -6.406,  -0.018, 2.279,  -0.333, 3.297,  -0.667,
                     4.614,   1.685,  7.018,   1.297,  10.298, 1.000,  15.017, 0.703,
                     -25.000, -2.279, -14.638, -2.667, -7.910, -3.018, -5.407, -3.297,
                     -3.649,  -1.018, -4.053,  -1.333, -4.386, -1.631, -4.649, -1.982};
  m.azimuth_offset_deg = {9.121,  -7.120, 8.911,  -1.778, 9.121,  3.572, -6.838, 8.786,
                          9.121,  -7.156, -6.767, -1.814, 9.051,  3.486, -6.944, 8.901,
                          -6.697, -7.332, -6.661, -2.000, -6.767, 3.393, -6.838, 8.806,
                          -7.191, -7.297, -1.864, -1.814, 3.493,  3.572, 8.806,  8.731};
  m.range_unit_m = 0.005;
  m.max_range_m = 65535 * 0.005;
  m.min_range_m = 0.4;
  m.optics.range_noise_sigma_m = 0.015;
  m.optics.range_noise_pulse_m = 0.20;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 1200, .rpm_step = 600};
  m.robosense =
      RoboSenseTraits{.format = find_model_format("rs32"),
                      .block_period_us = 55.52,
                      .firing_offset_us = {0.00,  2.88,  5.76,  8.64,  11.52, 14.40, 17.28, 20.16,
                                           23.04, 25.92, 28.80, 31.68, 34.56, 37.44, 40.32, 44.64,
                                           1.44,  4.32,  7.20,  10.08, 12.96, 15.84, 18.72, 21.60,
                                           24.48, 27.36, 30.24, 33.12, 36.00, 38.88, 41.76, 46.08},
                      .lens_rx_m = 0.03997,
                      .lens_rz_m = 0.0,
                      .return_modes = kRs16Rs32ReturnModes};
  return m;
}

// The registry's rows of this family, each at its datasheet's reach (the spinning heads' optics
// where the datasheet is silent).
std::vector<SensorModel> models() {
  return {make_rs_helios(spinning_head_optics(110)), make_rs_bpearl(spinning_head_optics(30)),
          make_rs_bpearl_v3(spinning_head_optics(30)), make_rs16(optics_at_20_percent(150)),
          make_rs32(optics_at_20_percent(200))};
}

}  // namespace lidaremu::core::robosense
