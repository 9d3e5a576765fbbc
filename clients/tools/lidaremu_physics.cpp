// lidaremu-physics: the curves a sensor engineer checks, measured on the real physics chain,
// printed as tables and drawn to PNG; and seed 004's rain validation metrics on the demo scene.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "lidaremu/clients/physics_report.hpp"

namespace {

using namespace lidaremu;
namespace report = clients::report;

void emit(const report::Table& table, const std::filesystem::path& png) {
  std::cout << report::to_text(table) << std::endl;
  if (!png.empty()) {
    report::plot_png(table, png);
    std::cout << "wrote " << png.string() << "\n\n";
  }
}

void print_metrics(const std::vector<report::RainMetrics>& metrics) {
  std::cout << "# seed 004 validation metrics (appendix B) on the demo scene\n"
            << std::setw(10) << "rain mm/h" << std::setw(10) << "DR %" << std::setw(10) << "FDR %"
            << std::setw(14) << "d_error m" << std::setw(10) << "SNR dB" << std::setw(12)
            << "points" << std::setw(14) << "density /m2" << '\n';
  for (const auto& m : metrics) {
    std::cout << std::fixed << std::setw(10) << std::setprecision(1) << m.rain_mm_per_h
              << std::setw(10) << std::setprecision(2) << m.detection_rate_pct << std::setw(10)
              << m.false_detection_rate_pct << std::setw(14) << std::setprecision(4)
              << m.mean_abs_range_error_m << std::setw(10) << std::setprecision(1) << m.snr_db
              << std::setw(12) << std::setprecision(0) << m.points_per_frame << std::setw(14)
              << std::setprecision(3) << m.density_per_m2 << '\n';
  }
  std::cout.unsetf(std::ios::floatfield);
}

}  // namespace

// CLI11 throws while options are declared only for programming errors (duplicate names);
// every runtime failure is caught below and turned into a message and an exit code.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  CLI::App app{"lidaremu-physics: sweep the physics chain and plot what a sensor engineer checks"};
  std::string model = "vlp16", surface = "brdf", materials_path = "config/materials.toml";
  std::filesystem::path png, out_dir;
  int frames = 5;
  app.add_option("--model", model, "sensor model")->capture_default_str();
  app.add_option("--surface", surface, "brdf|ipsp")->capture_default_str();
  app.add_option("--materials", materials_path, "material table")->capture_default_str();
  app.require_subcommand(1);
  auto* detection = app.add_subcommand("detection", "detection probability vs range");
  auto* rain = app.add_subcommand("rain", "rain false negatives and false positives vs rate");
  auto* incidence = app.add_subcommand("incidence", "received power vs incidence, per material");
  auto* reflectivity =
      app.add_subcommand("reflectivity", "reported reflectivity vs incidence, per material");
  auto* range_noise = app.add_subcommand("range-noise", "range sigma vs range");
  auto* fog = app.add_subcommand("fog", "fog points on empty beams vs visibility");
  auto* sun = app.add_subcommand("sun", "detection vs range at night and in sunlight");
  auto* density = app.add_subcommand("density", "demo scene's points per frame vs rain rate");
  auto* blooming = app.add_subcommand("blooming", "blooming width vs sign reflectivity");
  auto* validate = app.add_subcommand("validate", "seed 004 metrics, demo scene, dry vs rain");
  auto* all = app.add_subcommand("all", "every curve, as PNGs in --out-dir");
  for (auto* c : {detection, incidence, blooming, reflectivity, range_noise, fog, sun, density}) {
    c->add_option("--png", png, "also draw the curves to this PNG (needs gnuplot)");
  }
  rain->add_option("--png", png, "PNG of the drop rate; the false positives go to *-fp.png");
  validate->add_option("--frames", frames, "frames per rain rate")->capture_default_str();
  all->add_option("--out-dir", out_dir, "directory for the PNGs")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    auto setup = report::default_setup(model);
    if (surface != "brdf" && surface != "ipsp") {
      throw std::invalid_argument("--surface must be brdf or ipsp");
    }
    core::use_stage(setup.settings.stages, "surface." + surface);
    const auto materials = core::MaterialTable::load(materials_path);
    const double reach = 1.6 * setup.settings.params.datasheet_range_m;
    const auto run_detection = [&](const std::filesystem::path& to) {
      emit(report::detection_vs_range(setup, {0.05, 0.10, 0.30, 0.80}, reach, reach / 80), to);
    };
    const std::vector<double> ranges{20, 40, 60, 80};
    const std::vector<double> rates{1, 2, 5, 10, 25, 50, 75, 100};
    const auto fp_path = [](std::filesystem::path p) {
      return p.empty() ? p : p.replace_filename(p.stem().string() + "-fp.png");
    };
    const auto run_rain = [&](const std::filesystem::path& to) {
      emit(report::rain_drop_rate(setup, ranges, rates), to);
      emit(report::rain_false_positive_rate(setup, ranges, rates), fp_path(to));
    };
    const auto run_incidence = [&](const std::filesystem::path& to) {
      emit(report::power_vs_incidence(setup, materials, {1, 2, 4, 5, 6, 7, 8, 9, 11}), to);
    };
    const auto run_blooming = [&](const std::filesystem::path& to) {
      emit(report::blooming_width(setup, {0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000}), to);
    };
    // One material of each class: diffuse (asphalt, concrete, vegetation), glossy (metal, glass,
    // car paint), retroreflective (sign sheeting, road paint).
    const auto run_reflectivity = [&](const std::filesystem::path& to) {
      emit(report::reflectivity_vs_incidence(setup, materials, {1, 2, 4, 6, 7, 8, 11, 104}, 10),
           to);
    };
    const auto run_range_noise = [&](const std::filesystem::path& to) {
      emit(report::range_sigma_vs_range(setup, {0.1, 0.3, 0.8}, reach, reach / 40), to);
    };
    const auto run_fog = [&](const std::filesystem::path& to) {
      emit(report::fog_clutter_vs_visibility(setup,
                                             {10, 15, 20, 25, 30, 40, 50, 70, 100, 200, 500, 1000}),
           to);
    };
    const auto run_sun = [&](const std::filesystem::path& to) {
      emit(report::sun_detection_vs_range(setup, setup.settings.params.datasheet_reflectivity,
                                          {0, 250, 500, 1000}, reach, reach / 60),
           to);
    };
    const auto run_density = [&](const std::filesystem::path& to) {
      emit(report::rain_density(
               report::validate_rain(setup, materials, {5, 10, 25, 50, 75, 100}, frames)),
           to);
    };
    if (detection->parsed()) run_detection(png);
    if (rain->parsed()) run_rain(png);
    if (incidence->parsed()) run_incidence(png);
    if (blooming->parsed()) run_blooming(png);
    if (reflectivity->parsed()) run_reflectivity(png);
    if (range_noise->parsed()) run_range_noise(png);
    if (fog->parsed()) run_fog(png);
    if (sun->parsed()) run_sun(png);
    if (density->parsed()) run_density(png);
    if (validate->parsed())
      print_metrics(report::validate_rain(setup, materials, {10, 25, 50, 100}, frames));
    if (all->parsed()) {
      std::filesystem::create_directories(out_dir);
      const std::string prefix = model + "-";
      run_detection(out_dir / (prefix + "detection.png"));
      run_rain(out_dir / (prefix + "rain.png"));
      run_incidence(out_dir / (prefix + "incidence.png"));
      run_blooming(out_dir / (prefix + "blooming.png"));
      run_reflectivity(out_dir / (prefix + "reflectivity.png"));
      run_range_noise(out_dir / (prefix + "range-noise.png"));
      run_fog(out_dir / (prefix + "fog.png"));
      run_sun(out_dir / (prefix + "sun.png"));
      run_density(out_dir / (prefix + "density.png"));
    }
  } catch (const std::exception& e) {
    std::cerr << "lidaremu-physics: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
