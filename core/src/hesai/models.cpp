// The Hesai rows of the sensor registry. Angle tables are the vendor's published calibration
// files of real units (see each row's source note), never invented.
#include "../spinning_optics.hpp"
#include "beam_tables.hpp"
#include "firetimes.hpp"
#include "lidaremu/core/family.hpp"
#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/hesai/mirror_correction.hpp"
#include "lidaremu/core/hesai/ptc.hpp"

namespace lidaremu::core {
namespace {

// Pandar XT heads (XT16 and XT32 user manuals, "Specifications"; FORMATS-HESAI-ROBOSENSE.md):
// range 0.05 to 120 m, 80 m at 10 % reflectivity (taken, as the Velodyne "up to" figures, at
// 50 % detection: the manuals give no probability); precision 0.5 cm (1 sigma), accuracy
// +/-1 cm. The manuals give no beam divergence, no receiver figures and no SNR curve: those
// are the Velodyne heads' (905 nm mechanical heads of the same class and reach), said so here.
SensorOptics hesai_xt_optics() {
  SensorOptics o = spinning_head_optics(80);
  o.range_noise_sigma_m = 0.005;
  return o;
}

// The XT heads' return modes and their PTC codes (nebula's hesai_common; the XT manuals list
// first + last too, code 4, whose block order no capture here shows: left out).
const std::vector<HesaiTraits::ReturnModeCode> kXtReturnModes{
    {ReturnMode::kLast, hesai::ptc::kPtcLast},
    {ReturnMode::kStrongest, hesai::ptc::kPtcStrongest},
    {ReturnMode::kDual, hesai::ptc::kPtcLastStrongest},
    {ReturnMode::kFirst, hesai::ptc::kPtcFirst},
    {ReturnMode::kFirstStrongest, hesai::ptc::kPtcFirstStrongest}};

// The rows Hesai's XT heads share: protocol 6.1, 4 mm distance unit (262.14 m the largest
// range), one block (a column) every 50 us whatever the rate, 0.18 degree at 600 rpm (the real
// captures: 500 dual packets a turn, one per 200 us); 600 (default) or 1200 rpm (the manuals'
// Spin Rate setting).
SensorModel make_hesai_xt(std::string_view name, const char* product_name, std::uint8_t ptc_model,
                          hesai::Firetimes firetimes) {
  SensorModel m;
  m.name = name;
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.05;
  m.optics = hesai_xt_optics();
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 1200, .rpm_step = 600};
  m.hesai = HesaiTraits{.format = hesai::find_model_format(name),
                        .product_name = product_name,
                        .ptc_model = ptc_model,
                        .block_period_us = 50.0,
                        .stamp_after_block_us = 0,
                        .sends_gps = true,
                        .return_modes = kXtReturnModes,
                        .firing_loops = 1,
                        .channel_loop = {}};
  m.hesai.firetime_us = std::move(firetimes);
  return m;
}

// Pandar XT32: the angles of the unit whose calibration nebula ships (tests/data/hesai/
// PandarXT32.csv, which a test compares with this row); channel k fires 6.0 + 1.512 k us after
// its block starts (nebula's pandar_xt32 timing, the SDK's firetime file: channel 1 at 6.000 us,
// step 1.512 us). PTC inventory model byte 25.
SensorModel make_pandar_xt32() {
  SensorModel m = make_hesai_xt("pandar-xt32", "PandarXT-32", 25, hesai::firetimes_pandar_xt32());
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
  SensorModel m = make_hesai_xt("pandar-xt16", "PandarXT-16", 26, hesai::firetimes_pandar_xt16());
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
  m.channels = 128;
  m.elevation_deg.assign(kPandarQt128ElevationDeg.begin(), kPandarQt128ElevationDeg.end());
  m.azimuth_offset_deg.assign(kPandarQt128AzimuthDeg.begin(), kPandarQt128AzimuthDeg.end());
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.05;
  m.optics = spinning_head_optics(50);
  m.optics.range_noise_sigma_m = 0.01;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 600, .rpm_step = 1};
  m.hesai = HesaiTraits{.format = hesai::find_model_format("pandar-qt128"),
                        .product_name = "QT128C2X",
                        .ptc_model = 32,
                        .block_period_us = 1e6 / 9000.0,
                        .stamp_after_block_us = 0,
                        .return_modes = {{ReturnMode::kLast, hesai::ptc::kPtcLast},
                                         {ReturnMode::kStrongest, hesai::ptc::kPtcStrongest},
                                         {ReturnMode::kDual, hesai::ptc::kPtcLastStrongest},
                                         {ReturnMode::kFirst, hesai::ptc::kPtcFirst}},
                        .firing_loops = 2,
                        .channel_loop = std::vector<std::uint8_t>(128, 0)};
  for (std::size_t ch = 0; ch < 64; ++ch) m.hesai.channel_loop[ch] = ch < 32 ? 1 : 2;
  m.hesai.firetime_us = hesai::firetimes_pandar_qt128();
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
  m.channels = static_cast<int>(elevation_deg.size());
  m.elevation_deg.assign(elevation_deg.begin(), elevation_deg.end());
  m.azimuth_offset_deg.assign(azimuth_deg.begin(), azimuth_deg.end());
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.3;
  m.optics = spinning_head_optics(200);
  m.optics.datasheet_reflectivity = 0.20;
  m.optics.range_noise_sigma_m = 0.01;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 1200, .rpm_step = 600};
  m.hesai = HesaiTraits{.format = hesai::find_model_format(name),
                        .product_name = product_name,
                        .ptc_model = ptc_model,
                        .block_period_us = 1e6 / 18000.0,
                        .stamp_after_block_us = last_block_us + longest_table_us,
                        .sends_gps = true,
                        .return_modes = {{ReturnMode::kLast, hesai::ptc::kPtcLast},
                                         {ReturnMode::kStrongest, hesai::ptc::kPtcStrongest},
                                         {ReturnMode::kDual, hesai::ptc::kPtcLastStrongest}},
                        .firing_loops = 1,
                        .channel_loop = {}};
  return m;
}

// Pandar40P: the unit whose calibration nebula ships (tests/data/hesai/Pandar40P.csv, compared
// by a test); no header, ten Velodyne-like blocks (FF EE, azimuth, 40 records of distance in
// 4 mm and reflectivity), 1262 bytes without the UDP sequence (as the capture); nebula's
// timing 28.58 us and a table to 54.67 us. PTC model byte 0.
SensorModel make_pandar_40p() {
  SensorModel m = make_pandar("pandar-40p", "Pandar40P", 0, kPandar40pElevationDeg,
                              kPandar40pAzimuthDeg, 28.58, 54.67);
  m.hesai.firetime_us = hesai::firetimes_pandar_40p();
  return m;
}

// Pandar64: nebula's unit (tests/data/hesai/Pandar64.csv); an 8-byte header, six blocks of 64
// records, 1198 bytes with the UDP sequence (as the capture); nebula's timing 42.58 us and a
// table to 54.668 us. The capture's year byte is 120 (2020 from 1900), against its manual and
// nebula (from 2000): we count from 2000, which nebula reads right and the SDK too (it takes a
// value below 70 as 2000 + value). PTC model byte 2.
SensorModel make_pandar_64() {
  SensorModel m = make_pandar("pandar-64", "Pandar64", 2, kPandar64ElevationDeg,
                              kPandar64AzimuthDeg, 42.58, 54.668);
  m.hesai.firetime_us = hesai::firetimes_pandar_64();
  return m;
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
  SensorModel m =
      make_hesai_xt("pandar-xt32m", "PandarXT-32M2X", 38, hesai::firetimes_pandar_xt32m());
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
  m.channels = 64;
  m.elevation_deg.assign(kPandarQt64ElevationDeg.begin(), kPandarQt64ElevationDeg.end());
  m.azimuth_offset_deg.assign(kPandarQt64AzimuthDeg.begin(), kPandarQt64AzimuthDeg.end());
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.1;
  m.optics = spinning_head_optics(20);
  m.optics.range_noise_sigma_m = 0.01;
  m.optics.full_overlap_m = 5;  // a short-range head: as the OS0's (representative)
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 600, .rpm_step = 1};
  m.hesai = HesaiTraits{.format = hesai::find_model_format("pandar-qt64"),
                        .product_name = "PandarQT",
                        .ptc_model = 15,
                        .block_period_us = 1e6 / 6000.0,
                        .stamp_after_block_us = -25.71,
                        .stamp_from_first_column = true,
                        .return_modes = {{ReturnMode::kLast, hesai::ptc::kPtcLast},
                                         {ReturnMode::kFirstLast, hesai::ptc::kPtcQt64Dual},
                                         {ReturnMode::kFirst, hesai::ptc::kPtcFirst}},
                        .firing_loops = 1,
                        .channel_loop = {}};
  m.hesai.firetime_us = hesai::firetimes_pandar_qt64();
  return m;
}

// Hesai OT128 (nebula's Pandar128E4X; FORMATS-MORE.md section 1): protocol 1.4, 861 bytes, flags
// 0x07, pre-header byte 4 0x80 (the SDK takes it for an OT128). Angles: the real unit whose
// calibration nebula ships (tests/data/hesai/Pandar128E4X.csv, generated into
// hesai/beam_tables.cpp, compared by a test). Standard resolution only (operational state 2 in
// every packet, azimuth state 0): a firing every 55.556 us, 0.2 degree at 600 rpm, two blocks a
// packet (900 single / 1,800 dual packets a turn: 9,000 / 18,000 a second); its high-resolution
// mode (27.778 us, a dithered subset of channels each azimuth state) is not emulated. The tail's
// time 43.346 us before the packet's last block starts (nebula: a point is the packet's time plus
// 43.346 us plus its channel's offset, the earlier block 55.556 us before in single return;
// nebula flags its own table, the sheet's [?]). Return modes: last, strongest, last + strongest
// (0x39, nebula's default), first; its first + last and first + strongest block orders are not
// among the facts (nebula swaps 0x3B's labels): left out. Optics: no OT128 range figure is among
// the facts here, so the Pandar40P's and 64's (200 m at 20 %, +/-2 cm) stand in; minimum range
// 0.3 m. PTC inventory model byte 42, with the 162-byte inventory (part numbers) nebula requires
// of it, PTP "automotive" over L2 on a TSN switch (nebula's OT128 defaults).
SensorModel make_pandar_ot128() {
  SensorModel m;
  m.name = "pandar-ot128";
  m.channels = 128;
  m.elevation_deg.assign(kPandarOt128ElevationDeg.begin(), kPandarOt128ElevationDeg.end());
  m.azimuth_offset_deg.assign(kPandarOt128AzimuthDeg.begin(), kPandarOt128AzimuthDeg.end());
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 0.3;
  m.optics = spinning_head_optics(200);
  m.optics.datasheet_reflectivity = 0.20;
  m.optics.range_noise_sigma_m = 0.01;
  m.spin = SpinTraits{.default_rpm = 600, .min_rpm = 600, .max_rpm = 600, .rpm_step = 1};
  m.hesai = HesaiTraits{.format = hesai::find_model_format("pandar-ot128"),
                        .product_name = "OT128",
                        .ptc_model = 42,
                        .block_period_us = 1e6 / 18000.0,
                        .stamp_after_block_us = -43.346,
                        .return_modes = {{ReturnMode::kLast, hesai::ptc::kPtcLast},
                                         {ReturnMode::kStrongest, hesai::ptc::kPtcStrongest},
                                         {ReturnMode::kDual, hesai::ptc::kPtcLastStrongest},
                                         {ReturnMode::kFirst, hesai::ptc::kPtcFirst}},
                        .firing_loops = 1,
                        .channel_loop = {},
                        .ptc_inventory_bytes = hesai::ptc::kInventoryOt128Size,
                        .ptp_automotive = true};
  m.hesai.firetime_us = hesai::firetimes_pandar_ot128();
  // The SDK's OT128 firetime file has changed form between its releases (the shipped file: a
  // laser id and two loops in us; the 1.4 parser of the same tree: a section distance, three
  // header lines, then a laser id and eight near/far pairs in ns, indexed by block, not laser).
  m.hesai.no_firetimes_file =
      "the Hesai SDK's OT128 firetime file differs between SDK releases (a two-loop file in us "
      "shipped beside a parser that reads sixteen columns in ns), so none is written; its beams "
      "still fire at their times, and a driver without the file sees the error it sees on a "
      "real OT128";
  return m;
}

// Which columns of a turn of `columns` fire: each field's pass, from 13.75 degrees of encoder
// angle past the facet's start for 62.5 degrees (the SDK's pass ends, FORMATS-MORE.md 2.1 and
// 2.7: optical 27.5 to 152.5 degrees less the channels' offsets, inside nebula's 10-170 degree
// check), a whole number of columns from the first past that start.
std::vector<std::uint8_t> mirror_passes(const hesai::MirrorCorrection& mirror, int columns) {
  std::vector<std::uint8_t> fires(static_cast<std::size_t>(columns), 0);
  const std::int64_t units_per_column = hesai::kUnitsPerTurn / columns;
  const auto pass_columns = static_cast<int>(std::lround(62.5 * columns / 360.0));
  for (int f = 0; f < mirror.fields(); ++f) {
    const std::int64_t begin = mirror.field_start(f) + 1375 * hesai::kUnitsPerDegree / 100;
    const auto first = static_cast<int>((begin + units_per_column - 1) / units_per_column);
    for (int c = first; c < first + pass_columns; ++c) {
      fires[static_cast<std::size_t>(c % columns)] = 1;
    }
  }
  return fires;
}

// Hesai AT128 (AT128E2X, protocol 4.3; FORMATS-MORE.md section 2): one rotor with three mirror
// facets and 128 lasers; each facet sweeps the same 120-degree field. The forward model is the
// binary correction of the unit whose file nebula ships (hesai/mirror_correction.hpp: nebula's
// rounding of the adjustments), which PTC 0x05 serves and --calibration-out writes. 200 rpm (10
// passes a second; the 400 rpm mode's firing period is not in the facts); a firing every 41.667
// us, 0.05 degree of encoder angle: a turn of 7,200 columns, of which the three passes of 1,250
// fire (52 ms each, then 48 ms dark): 625 single / 1,250 dual packets a pass, 6,250 / 12,500 a
// second. The daemon's frame is the turn (three passes, 0.3 s); the drivers cut a frame at each
// pass. The tail's time 50.915 us after the packet's first firing (nebula: a point is the
// packet's time less 9.249 us less 41.666 us before the second block in single return, for both
// blocks in dual, plus its channel's firing). Return modes: last 0, strongest 1, dual (last +
// strongest) 2. Optics: Hesai's published AT128 reach, 200 m at 10 %; nebula's range gate
// 1 to 180 m, so 1 m the minimum range; accuracy as the other Hesai heads (1 cm as 1 sigma).
// PTC inventory model byte 48 (nebula then sets the spin rate over TCP), its 184-byte inventory
// and 58-byte status.
SensorModel make_pandar_at128() {
  const hesai::MirrorCorrection& mirror = hesai::at128_default_correction();
  SensorModel m;
  m.name = "pandar-at128";
  m.channels = 128;
  for (int ch = 0; ch < 128; ++ch) {
    m.elevation_deg.push_back(mirror.elevation_deg(ch));
    m.azimuth_offset_deg.push_back(-mirror.azimuth_offset_deg(ch));  // as the legacy CSV
  }
  m.range_unit_m = 0.004;
  m.max_range_m = 65535 * 0.004;
  m.min_range_m = 1.0;
  m.optics = spinning_head_optics(200);
  m.optics.range_noise_sigma_m = 0.01;
  m.spin = SpinTraits{.default_rpm = 200, .min_rpm = 200, .max_rpm = 200, .rpm_step = 1};
  m.hesai = HesaiTraits{.format = hesai::find_model_format("pandar-at128"),
                        .product_name = "AT128E2X",
                        .ptc_model = 48,
                        .block_period_us = 1e6 / 24000.0,
                        .stamp_after_block_us = 9.249 + 1e6 / 24000.0,
                        .stamp_from_first_column = true,
                        .return_modes = {{ReturnMode::kLast, hesai::ptc::kPtcLast},
                                         {ReturnMode::kStrongest, hesai::ptc::kPtcStrongest},
                                         {ReturnMode::kDual, hesai::ptc::kPtcLastStrongest}},
                        .firing_loops = 1,
                        .channel_loop = {},
                        .ptc_inventory_bytes = hesai::ptc::kInventoryAt128Size,
                        .ptc_status_bytes = hesai::ptc::kStatusAt128Size,
                        .mirror = &mirror,
                        .column_fires = mirror_passes(mirror, 7200)};
  // No firing-time table: the beams leave where the mirror correction puts them, as both drivers
  // decode them (nebula's AT128 table times points, it moves none).
  m.hesai.no_firetimes_file =
      "the AT128's beams leave where its mirror correction puts them: the Hesai SDK reads no "
      "firetime file for its protocol 4.3 (\"don't support firetimes file\") and nebula moves no "
      "point by one";
  return m;
}

}  // namespace

namespace hesai {
std::vector<SensorModel> models() {
  return {make_pandar_xt32(), make_pandar_xt16(),  make_pandar_xt32m(),
          make_pandar_qt64(), make_pandar_qt128(), make_pandar_40p(),
          make_pandar_64(),   make_pandar_ot128(), make_pandar_at128()};
}
}  // namespace hesai

}  // namespace lidaremu::core
