#pragma once
// Sensor models are data: one SensorModel row per model, in its family's folder
// (core/src/<family>/models.cpp), collected by the registry (sensor_registry.cpp) and read by
// generic geometry, timing and encoder code. Adding a model never adds a code path.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lidaremu/core/return_mode.hpp"
#include "lidaremu/core/scan_table.hpp"
#include "lidaremu/core/simd.hpp"

namespace lidaremu::core {

enum class SensorFamily : std::uint8_t { kVelodyne, kOuster, kHesai, kRoboSense, kLivox };

namespace hesai {
struct ModelFormat;
class MirrorCorrection;
}  // namespace hesai
namespace robosense {
struct ModelFormat;
}

// Per-laser corrections of a unit calibrated one by one (HDL-64E), as ros-drivers' calibration
// files state them and velodyne_pointcloud applies them: a beam leaves from offsets beside and
// above the head's axis, and its distance is corrected, differently along x and y near the
// sensor ("two-point" correction).
struct VelodyneLaserCorrection {
  double elevation_deg = 0;
  double rot_correction_deg = 0;
  double dist_correction_m = 0;
  double dist_correction_x_m = 0;
  double dist_correction_y_m = 0;
  double vert_offset_m = 0;
  double horiz_offset_m = 0;
};

struct VelodyneTraits {
  std::uint8_t product_id = 0;    // byte 1205
  const char* product_name = "";  // the web API's /cgi/info.json "model" (none: no web API)
  double sequence_period_us = 0;  // one firing sequence of every laser
  double laser_spacing_us = 0;    // delay between consecutive firings of a sequence
  int lasers_per_firing = 1;      // VLP-32C fires its lasers in pairs, VLS-128 in eights
  int firings_per_pause = 0;      // VLS-128: one idle firing slot after every 8 firings
  int firing_cycle = 0;           // HDL-64E: lasers k and k + 32 fire together (0: none)
  bool dual_return = true;        // whether the model has a dual-return layout
  // HDL-64E: bytes 1204-1205 cycle through status type and value instead of return mode and
  // product id.
  bool status_bytes = false;
  int sequences_per_block = 0;  // VLP-16: two sequences of 16 lasers share a block
  int banks = 1;                // VLS-128: one column spans 4 blocks of 32 lasers
  int blocks_per_packet = 12;

  // Delay of a laser's firing after the start of its sequence, microseconds.
  [[nodiscard]] double firing_offset_us(int laser) const {
    const int firing = (firing_cycle > 0 ? laser % firing_cycle : laser) / lasers_per_firing;
    const int pauses = firings_per_pause > 0 ? firing / firings_per_pause : 0;
    return laser_spacing_us * (firing + pauses);
  }
  // Block flag of a bank's blocks as a little-endian u16: bytes FF EE, FF DD, FF CC, FF BB.
  [[nodiscard]] static constexpr std::uint16_t block_flag(int bank) {
    return static_cast<std::uint16_t>(0xEEFF - 0x1100 * bank);
  }
};

// Hesai mechanical heads (FORMATS-HESAI-ROBOSENSE.md section 1): the packet layout is the
// model's format table; the rest is what the unit says about itself and when it fires.
struct HesaiTraits {
  const hesai::ModelFormat* format = nullptr;
  const char* product_name = "";  // PTC inventory and the web API
  std::uint8_t ptc_model = 0;     // the PTC inventory's model byte (nebula's sensor_model override)
  double block_period_us = 0;     // one firing of every channel: a block, a column
  // The tail's time: this long after the start of the packet's last column (XT, QT128: 0, the
  // block's start; Pandar40P: after its last firing), or of its first with
  // stamp_from_first_column (QT64: before it).
  double stamp_after_block_us = 0;
  bool stamp_from_first_column = false;
  // Whether the unit sends its GPS packet to UDP 10110 once a second (hesai/format.hpp,
  // kGpsPacket: the XT32M2X manual's, the Pandar40P SDK's parser): the XT heads, the 40P and the
  // 64; the QT heads' GPS output is not among the facts here.
  bool sends_gps = false;
  // The return modes the model offers, each with the PTC code that selects it (0x1E, and the
  // config answer): the codes differ by model (nebula's hesai_common: 0 last, 1 strongest,
  // 2 last + strongest, 3 first, 5 first + strongest; the QT64's 2 is its dual, first + last).
  struct ReturnModeCode {
    ReturnMode return_mode;
    std::uint8_t ptc_code;
  };
  std::vector<ReturnModeCode> return_modes;
  // Firing loops taking turns column by column (QT128: 2): channel_loop[ch] is the loop that
  // fires channel ch (from 1), 0 for every loop; empty: every channel fires in every column.
  int firing_loops = 1;
  std::vector<std::uint8_t> channel_loop;
  // PTC: the inventory's length (120; the OT128's 162, with its part numbers; the AT128's 184,
  // its FPGA versions before the model byte), the status's (54; the AT128's 58, nine
  // temperatures), and whether the unit reports PTP in the automotive profile over L2 on a TSN
  // switch (the OT128's defaults in nebula) rather than 1588v2 over UDP.
  std::size_t ptc_inventory_bytes = 120;
  std::size_t ptc_status_bytes = 54;
  bool ptp_automotive = false;
  // A mirror scan (the AT128: hesai/mirror_correction.hpp): its beams point where the correction
  // puts them, column c of a turn at encoder angle c / columns x 360 degrees; only the columns
  // of column_fires (one flag a column at the model's rate) fire, the rest of the turn is the
  // facets' dark time between passes. Null and empty: a spinning head, every column firing.
  const hesai::MirrorCorrection* mirror = nullptr;
  std::vector<std::uint8_t> column_fires{};
  // When each channel fires after its block's azimuth was taken, microseconds (hesai/
  // firetimes.cpp: the vendor's firetime files): one row per firing loop in the SDK's loop order,
  // an entry per channel. The head turns on meanwhile, so a beam leaves at the block azimuth
  // plus the turn in its firing time: where the SDK with its firetime file puts the point, and
  // where nebula, which applies none, misses it by as much as on a real unit. Empty: every
  // channel at the block azimuth (the AT128's mirror scan: neither driver applies one).
  std::vector<std::vector<double>> firetime_us{};
  // Why the unit's firing times have no file the SDK reads (hesai::firetimes_file); empty: it has.
  const char* no_firetimes_file = "";
  // The row of the column's firing loop: the SDK takes loop (mode flag + column + 1) mod 2 for a
  // QT128 column, and the mode flag is the loop of a packet's first column (hesai/encoder.cpp).
  [[nodiscard]] std::size_t firetime_loop(std::uint32_t column) const {
    return firetime_us.size() > 1 ? (column + 1) % firetime_us.size() : 0;
  }
  [[nodiscard]] double firetime_at_us(int ch, std::uint32_t column) const {
    return firetime_us.empty() ? 0.0
                               : firetime_us[firetime_loop(column)][static_cast<std::size_t>(ch)];
  }
  [[nodiscard]] const ReturnModeCode* return_mode(ReturnMode echoes) const {
    for (const ReturnModeCode& m : return_modes) {
      if (m.return_mode == echoes) return &m;
    }
    return nullptr;
  }
  [[nodiscard]] const ReturnModeCode* return_mode_of_ptc(std::uint8_t code) const {
    for (const ReturnModeCode& m : return_modes) {
      if (m.ptc_code == code) return &m;
    }
    return nullptr;
  }
  [[nodiscard]] bool column_fires_at(std::uint32_t column) const {
    return column_fires.empty() || column_fires[column % column_fires.size()] != 0;
  }
  // Whether channel `ch` fires in `column` (a beam that does not fire sends no return).
  [[nodiscard]] bool fires(int ch, std::uint32_t column) const {
    if (!column_fires_at(column)) return false;
    if (channel_loop.empty()) return true;
    const int loop = channel_loop[static_cast<std::size_t>(ch)];
    return loop == 0 || static_cast<std::uint32_t>(loop - 1) ==
                            column % static_cast<std::uint32_t>(firing_loops);
  }
};

// RoboSense mechanical heads (FORMATS-HESAI-ROBOSENSE.md section 2): the packet layout is the
// model's format table; the rest is when each channel fires, where its lens sits, and the return
// modes the DIFOP names.
struct RoboSenseTraits {
  const robosense::ModelFormat* format = nullptr;
  double block_period_us = 0;            // one firing of every channel: a block, a column
  std::vector<double> firing_offset_us;  // channel ch fires this long after its block starts
  // The lens centre rs_driver adds to every point: RX along the channel's azimuth (before its
  // horizontal calibration), RZ up (rs_driver's RX / RZ lidar constants; RY is unused there).
  double lens_rx_m = 0;
  double lens_rz_m = 0;
  // Each return mode with the DIFOP byte (300) that names it; codes differ by model.
  struct ReturnModeCode {
    ReturnMode return_mode;
    std::uint8_t difop_code;
  };
  std::vector<ReturnModeCode> return_modes;
  [[nodiscard]] const ReturnModeCode* return_mode(ReturnMode echoes) const {
    for (const ReturnModeCode& m : return_modes) {
      if (m.return_mode == echoes) return &m;
    }
    return nullptr;
  }
  [[nodiscard]] const ReturnModeCode* return_mode_of_code(std::uint8_t code) const {
    for (const ReturnModeCode& m : return_modes) {
      if (m.difop_code == code) return &m;
    }
    return nullptr;
  }
};

// Livox (FORMATS-HESAI-ROBOSENSE.md section 3): lasers that fire together in a scan that follows
// no grid. Where each beam points is a scan table's (ScanTable, from a file), not the row's.
struct LivoxTraits {
  double firing_period_us = 0;  // one firing of every laser: a column
  // Laser k's point is timed k steps into its firing: livox_ros_driver2 spreads a packet's points
  // evenly over its time_interval, so this is where it puts them.
  double laser_step_us = 0;
  int frames_per_second = 10;  // frame_cnt counts these
  int firings_per_packet = 0;
  std::uint8_t device_type = 0;  // the discovery answer's dev_type
  double imu_rate_hz = 0;
};

struct OusterTraits {
  std::string_view prod_line;  // "OS-1-64"
  std::string_view prod_pn;
  double lidar_origin_to_beam_origin_mm = 0;
  std::array<double, 16> lidar_to_sensor{};  // row-major 4x4, translation in mm
  std::array<double, 16> imu_to_sensor{};
  int columns_per_packet = 16;
  int default_columns = 1024;
  int default_fps = 10;
};

// Datasheet figures the physics starts from (PHYSICS.md 2b): range performance, beam, accuracy.
struct SensorOptics {
  double datasheet_range_m = 100;                // reached by...
  double datasheet_reflectivity = 0.10;          // ...a Lambertian target of this reflectivity...
  double datasheet_detection_probability = 0.5;  // ...detected with this probability...
  double datasheet_sun_w_per_m2 = 0;             // ...in this much sunlight (facing it)
  double beam_exit_radius_m = 0.005;
  double beam_divergence_rad = 0.001;  // half-angle of the beam cone (geometric mean)...
  double beam_aspect = 1.0;            // ...of an ellipse this much wider than tall
  double range_noise_sigma_m = 0.01;   // range noise of a strong echo (the floor)...
  double range_noise_pulse_m = 0.45;   // ...and dR of sigma = dR / sqrt(2 SNR) for weak ones
  // Receiver overlap: full beyond this range for coaxial optics (0: always full)...
  double full_overlap_m = 0;
  // ...or bistatic optics (transmit and receive lenses side by side), the crossover's inputs.
  double bistatic_baseline_m = 0;  // 0 = coaxial
  double tx_aperture_radius_m = 0.006;
  double rx_aperture_radius_m = 0.012;
  double tx_opening_rad = 0.003;
  double rx_opening_rad = 0.0066;
  // Receiver (ambient light): lens diameter, one channel's field of view (full angle), filter,
  // and the ambient power whose shot noise equals the detector's own noise.
  double rx_aperture_m = 0.025;
  double rx_fov_rad = 0.003;
  double optical_filter_nm = 25;
  double ambient_knee_w = 1.5e-9;
};

// Spinning heads whose rotation rate the user sets (Velodyne, Hesai, RoboSense): the firing clock
// is fixed, the columns per turn follow from the rate. Ouster heads take a lidar mode instead.
struct SpinTraits {
  int default_rpm = 600;
  int min_rpm = 300;
  int max_rpm = 1200;
  int rpm_step = 1;  // accepted: min_rpm, min_rpm + rpm_step, ..., max_rpm
};

struct SensorModel {
  std::string_view name;  // the --model spelling
  SensorFamily family = SensorFamily::kVelodyne;
  int channels = 0;
  // Per channel, in the order the format stores them (Velodyne laser id, Ouster row).
  std::vector<double> elevation_deg;
  // Velodyne: rot_correction (degrees, subtracted from the block azimuth by decoders).
  // Ouster: beam_azimuth_angles (degrees). Hesai: the calibration's azimuth (degrees, added).
  std::vector<double> azimuth_offset_deg;
  double range_unit_m = 0.001;  // quantum of the format's range field
  double max_range_m = 0;       // the largest range the format can carry
  double min_range_m = 0;       // below this the sensor reports nothing
  SensorOptics optics;
  SpinTraits spin;
  VelodyneTraits velodyne;
  std::vector<VelodyneLaserCorrection> laser_corrections;  // empty: none (ideal geometry)
  OusterTraits ouster;
  HesaiTraits hesai;
  RoboSenseTraits robosense;
  LivoxTraits livox;
};

// The family's name ("Velodyne", ...), for messages (family.hpp: its implementation's).
[[nodiscard]] const char* family_name(SensorFamily family);

// How a model's scan is set: a rotation rate (Velodyne, Hesai, RoboSense), a lidar mode
// (Ouster) or a scan table (Livox). Each family says which (family.hpp; scan_choice.hpp).
enum class ScanKind : std::uint8_t { kRotationRate, kLidarMode, kScanTable };
// Whether the model's scan is set by a rotation rate (scan_choice.cpp).
[[nodiscard]] bool rpm_driven(const SensorModel& model);

// A model with the settings that fix its scan grid: rotation rate or lidar mode.
struct ScanPattern {
  const SensorModel* model = nullptr;
  int columns_per_frame = 0;
  double column_period_s = 0;  // time between consecutive columns
  double frame_period_s = 0;   // columns_per_frame * column_period_s
  double rpm = 0;              // rotation rate the azimuths are generated for
  int frames_per_second = 0;   // Ouster, Livox
  // Livox: where each beam points, firing by firing; frame f's column c is firing
  // f * columns_per_frame + c of the table's endless cycle. Null for grid scans.
  std::shared_ptr<const ScanTable> table;
  // Tables by what they hold: a reload reads the file again into a table of its own.
  bool operator==(const ScanPattern& o) const {
    const bool same_table = table == o.table || (table && o.table && *table == *o.table);
    return model == o.model && columns_per_frame == o.columns_per_frame &&
           column_period_s == o.column_period_s && frame_period_s == o.frame_period_s &&
           rpm == o.rpm && frames_per_second == o.frames_per_second && same_table;
  }
};

// Errors are values here: the caller turns them into a start-up message.
struct ScanPatternResult {
  std::optional<ScanPattern> pattern;
  std::string error;
};
// A spinning head (rpm_driven) at a rotation rate its SpinTraits accept.
ScanPatternResult make_rpm_scan(const SensorModel& model, int rpm);
ScanPatternResult make_ouster_scan(const SensorModel& model, int columns, int fps);
// A Livox model on a scan table of its lasers (at least one frame of firings).
ScanPatternResult make_table_scan(const SensorModel& model, std::shared_ptr<const ScanTable> table);

// The echoes a model reports unless told otherwise: the strongest, or, on a Hesai model without
// it (QT64), the first return mode its row lists.
ReturnMode default_return_mode(const SensorModel& model);

const SensorModel* find_sensor_model(std::string_view name);
std::span<const SensorModel* const> all_sensor_models();
// Every --model spelling, joined by '|', for help texts and error messages.
std::string sensor_model_names();

// Where velodyne_pointcloud puts a return: the range field times the unit (`raw_distance_m`) of
// `laser`, at `azimuth_deg` (the block azimuth plus the firing's interpolation). Sensor frame.
Eigen::Vector3d velodyne_point(const SensorModel& model, int laser, double azimuth_deg,
                               double raw_distance_m);

// Where (column, channel) of a scan sits in the sensor frame its driver reports in.
struct BeamRay {
  Eigen::Vector3d origin;     // metres, sensor frame
  Eigen::Vector3d direction;  // unit, sensor frame
};

struct BeamIndex {
  std::uint32_t column = 0;
  std::uint16_t channel = 0;
};

// Precomputed geometry for one scan pattern: directions for engines, and the inverse
// (which beam a hit belongs to, and the range a driver must read to put the point back
// exactly where the hit was).
class BeamGeometry {
 public:
  explicit BeamGeometry(const ScanPattern& pattern);

  [[nodiscard]] BeamRay ray(std::uint32_t column, std::uint16_t channel) const {
    return ray_in_frame(0, column, channel);
  }
  // The beam in frame `frame` (batches number them): a table scan (Livox) points elsewhere every
  // frame; a grid scan does not.
  [[nodiscard]] BeamRay ray_in_frame(std::uint32_t frame, std::uint32_t column,
                                     std::uint16_t channel) const;
  // The beam a hit belongs to (raw rows carry no beam). Not for table scans (the daemon takes
  // only batches for them): every hit is then column 0, channel 0. locate_many finds many at once,
  // their angles in SIMD lanes; locate is locate_many of one point, so the two always agree.
  //
  // A beam leaving off the axis (an Ouster's ring, a RoboSense lens, a corrected Velodyne laser) is
  // found by refinements: from the frame's origin first, then from the found beam's own origin,
  // until the beam stays. kSettledEarly stops after the first when no beam origin (none is
  // farther than beam_origin_reach_m()) could move the hit's angles across a channel's or a
  // column's boundary: the next refinement would find the same beam. kEveryRefinement always
  // takes the next one; the two give the same beams (test_sensor_models compares them).
  enum class Refinement : std::uint8_t { kSettledEarly, kEveryRefinement };
  [[nodiscard]] BeamIndex locate(const Eigen::Vector3d& point_in_sensor) const;
  void locate_many(std::span<const Eigen::Vector3d> points_in_sensor, std::span<BeamIndex> out,
                   Refinement refinement = Refinement::kSettledEarly) const;
  // The farthest any beam leaves from the origin its hits are located from (the sensor's, an
  // Ouster's lidar origin), metres; 0 when every beam leaves from it.
  [[nodiscard]] double beam_origin_reach_m() const { return beam_origin_reach_m_; }
  // Range the format must carry so that the spec decoder reproduces `point_in_sensor`
  // for this beam (metres; the Ouster convention includes the beam-origin offset, the HDL-64E's
  // its per-laser corrections).
  [[nodiscard]] double reported_range(const Eigen::Vector3d& point_in_sensor, std::uint32_t column,
                                      std::uint16_t channel) const;
  // offset_m[i] = reported_range(point i) - distance_m[i], as float, for `count` hits of one
  // column on channels first_channel, first_channel + 1, ..., where wanted[i]: in SIMD lanes for an
  // Ouster (every i; the same floats), one at a time otherwise.
  void range_offsets(std::uint32_t column, std::uint16_t first_channel,
                     const simd::HitPlanes& points, const double* distance_m,
                     const std::uint8_t* wanted, std::size_t count, float* offset_m) const;
  // Azimuth of a column in degrees, [0, 360): clockwise from +x (Velodyne) or from +y (Hesai),
  // the block azimuth the packets carry.
  [[nodiscard]] double velodyne_column_azimuth_deg(std::uint32_t column) const;
  // Time of a column's first firing relative to the frame start, seconds.
  [[nodiscard]] double column_time_s(std::uint32_t column) const;
  [[nodiscard]] const ScanPattern& pattern() const { return pattern_; }

 private:
  [[nodiscard]] double velodyne_laser_azimuth_deg(std::uint32_t column,
                                                  std::uint16_t channel) const;
  // RoboSense: the column's azimuth plus the turn until the channel fires (no calibration).
  [[nodiscard]] double robosense_turned_azimuth_deg(std::uint32_t column,
                                                    std::uint16_t channel) const;
  [[nodiscard]] Eigen::Vector3d ouster_beam_origin_lidar_mm(std::uint32_t column) const;
  [[nodiscard]] Eigen::Vector3d ouster_direction_lidar(std::uint32_t column,
                                                       std::uint16_t channel) const;
  // Each family's beam, in its driver's frame (ray_in_frame chooses by family).
  [[nodiscard]] BeamRay hesai_ray(std::uint32_t column, std::uint16_t channel) const;
  [[nodiscard]] BeamRay robosense_ray(std::uint32_t column, std::uint16_t channel) const;
  [[nodiscard]] BeamRay velodyne_ray(std::uint32_t column, std::uint16_t channel) const;
  [[nodiscard]] BeamRay ouster_ray(std::uint32_t column, std::uint16_t channel) const;
  // The range the unit reports for a point, where it is more than the distance from the origin.
  [[nodiscard]] double velodyne_reported_range(const Eigen::Vector3d& point_in_sensor,
                                               std::uint32_t column, std::uint16_t channel) const;
  [[nodiscard]] double ouster_reported_range(const Eigen::Vector3d& point_in_sensor,
                                             std::uint32_t column) const;
  // The channel whose elevation is nearest, in O(1): a table of bins narrower than half the
  // smallest gap between channels gives where to start a short forward scan.
  void build_elevation_index();
  // The channel, and how far the elevation may move before another channel is nearest (0, no
  // room known, unless measured: only the search's first refinement of an off-axis model asks).
  struct NearestChannel {
    std::uint16_t channel = 0;
    double margin_deg = 0;
  };
  enum class Margin : bool { kSkip, kMeasure };
  [[nodiscard]] NearestChannel nearest_channel(double elevation_deg, Margin margin) const;
  [[nodiscard]] double farthest_beam_origin_m() const;
  template <std::size_t kChunk>
  void locate_chunk(const Eigen::Vector3d* points, BeamIndex* out, std::size_t n,
                    Refinement refinement) const;

  ScanPattern pattern_;
  const SensorModel& model_;
  Eigen::Matrix3d lidar_to_sensor_rotation_ = Eigen::Matrix3d::Identity();
  Eigen::Vector3d lidar_to_sensor_translation_mm_ = Eigen::Vector3d::Zero();
  std::vector<std::uint16_t> channels_by_elevation_;  // ascending elevation
  std::vector<double> sorted_elevation_deg_;          // the same order
  double elevation_bins_from_deg_ = 0;
  double elevation_bin_deg_ = 1;
  // Per bin: the first index into the sorted channels whose elevation is at or above the bin's
  // lower edge.
  std::vector<std::uint16_t> first_channel_in_bin_;
  std::vector<Eigen::Vector3d> beam_origins_lidar_mm_;  // Ouster, by column
  double beam_origin_reach_m_ = 0;
};

}  // namespace lidaremu::core
