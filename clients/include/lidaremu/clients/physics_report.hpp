#pragma once
// Sweeps of the physics chain a sensor engineer checks (lidaremu-physics): each curve is measured
// by running the real Pipeline on synthetic frames, not re-derived from the formulas.
#include <filesystem>
#include <string>
#include <vector>

#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/pipeline.hpp"

namespace lidaremu::clients::report {

// A curve family: column 0 is x, the others one series each.
struct Table {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  double y_min = 0;        // 0: automatic
  double reference_y = 0;  // drawn as a dashed line when non-zero (e.g. the threshold)
  std::string reference_label;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
};

std::string to_csv(const Table& table);
std::string to_text(const Table& table);  // aligned, for the terminal
// Draws the table with gnuplot (pngcairo). Throws std::runtime_error if gnuplot fails.
void plot_png(const Table& table, const std::filesystem::path& png);

struct Setup {
  core::ScanPattern pattern;
  core::PipelineSettings settings;  // the chain under test; weather comes from each sweep
};
Setup default_setup(const std::string& model);

// Share of beams detected with every beam on a Lambertian target at each range.
Table detection_vs_range(const Setup& setup, const std::vector<double>& reflectivities,
                         double max_range_m, double step_m);
// Share of a 10 % target's returns lost to rain (relative to dry) and share of beams whose
// reported return is a rain drop, in the setup's echo mode.
Table rain_drop_rate(const Setup& setup, const std::vector<double>& ranges_m,
                     const std::vector<double>& rates_mm_per_h);
Table rain_false_positive_rate(const Setup& setup, const std::vector<double>& ranges_m,
                               const std::vector<double>& rates_mm_per_h);
// Received power (W) at 10 m vs incidence angle, per material of the table.
Table power_vs_incidence(const Setup& setup, const core::MaterialTable& materials,
                         const std::vector<std::uint16_t>& ids);
// Azimuthal half-width (degrees) of a sign 20 m ahead, in front of a wall at 40 m, as the
// sensor reports it, vs the sign's Lambertian-equivalent reflectivity (pi x BRDF peak).
Table blooming_width(const Setup& setup, const std::vector<double>& equivalent_reflectivities);

// The calibrated reflectivity a sensor reports (median over a frame, noise included) vs the
// incidence angle, per material, at `range_m`.
Table reflectivity_vs_incidence(const Setup& setup, const core::MaterialTable& materials,
                                const std::vector<std::uint16_t>& ids, double range_m);
// Range noise (1 sigma about the true range) vs range, Lambertian targets at normal incidence.
Table range_sigma_vs_range(const Setup& setup, const std::vector<double>& reflectivities,
                           double max_range_m, double step_m);
// Share of beams that hit nothing and report the fog itself, vs meteorological visibility.
Table fog_clutter_vs_visibility(const Setup& setup, const std::vector<double>& visibilities_m);
// Detection probability vs range of a Lambertian target facing the sun, per sun irradiance.
Table sun_detection_vs_range(const Setup& setup, double reflectivity,
                             const std::vector<double>& irradiances_w_per_m2, double max_range_m,
                             double step_m);

// Seed 004's validation metrics (appendix B) for the demo scene.
struct RainMetrics {
  double rain_mm_per_h = 0;
  double detection_rate_pct = 0;        // correctly detected points / detected points
  double false_detection_rate_pct = 0;  // points not on the scene (rain drops) / detected points
  double mean_abs_range_error_m = 0;    // against the dry run, beams detected in both
  double snr_db = 0;                    // 20 log10(mean signal / noise sigma)
  double points_per_frame = 0;
  double density_per_m2 = 0;  // points / (pi R_datasheet^2)
};
std::vector<RainMetrics> validate_rain(const Setup& setup, const core::MaterialTable& materials,
                                       const std::vector<double>& rates_mm_per_h, int frames);
// The demo scene's points per frame and false detection rate vs rain rate (from validate_rain).
Table rain_density(const std::vector<RainMetrics>& metrics);

}  // namespace lidaremu::clients::report
