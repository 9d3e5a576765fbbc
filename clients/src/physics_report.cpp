#include "lidaremu/clients/physics_report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <numbers>
#include <sstream>
#include <stdexcept>

#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "report_frame.hpp"

namespace lidaremu::clients::report {
using namespace detail;

std::string to_csv(const Table& table) {
  std::ostringstream s;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    s << (c ? "," : "") << table.columns[c];
  }
  s << '\n';
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) s << (c ? "," : "") << format_number(row[c]);
    s << '\n';
  }
  return s.str();
}

std::string to_text(const Table& table) {
  std::ostringstream s;
  s << "# " << table.title << '\n';
  for (const auto& c : table.columns) s << std::setw(16) << c;
  s << '\n';
  for (const auto& row : table.rows) {
    for (const double v : row) s << std::setw(16) << format_number(v);
    s << '\n';
  }
  return s.str();
}

void plot_png(const Table& table, const std::filesystem::path& png) {
  const std::filesystem::path data = png.string() + ".csv";
  {
    std::ofstream out(data);
    out << to_csv(table);
    if (!out) throw std::runtime_error("cannot write " + data.string());
  }
  // Labels go inside gnuplot's double quotes; drop characters that would end them.
  const auto quoted = [](std::string text) {
    std::erase(text, '"');
    std::erase(text, '\\');
    return '"' + text + '"';
  };
  std::ostringstream script;
  script << "set terminal pngcairo size 900,560 font 'DejaVu Sans,11'\n"
         << "set output " << quoted(png.string()) << "\n"
         << "set datafile separator ','\n"
         << "set key outside right\nset grid\n"
         << "set title " << quoted(table.title) << "\n"
         << "set xlabel " << quoted(table.x_label) << "\nset ylabel " << quoted(table.y_label)
         << "\n"
         << (table.log_x ? "set logscale x\n" : "")
         << (table.log_y ? "set logscale y\nset format y '10^{%L}'\n" : "");
  if (table.y_min != 0) script << "set yrange [" << table.y_min << ":*]\n";
  script << "plot for [i=2:" << table.columns.size() << "] " << quoted(data.string())
         << " using 1:i with linespoints pointsize 0.5 title columnheader(i)";
  if (table.reference_y != 0) {
    script << ", " << table.reference_y << " with lines dashtype 2 lc rgb 'black' title "
           << quoted(table.reference_label);
  }
  script << '\n';
  FILE* gnuplot = popen("gnuplot", "w");  // NOLINT(cert-env33-c): a fixed command, no user input
  if (!gnuplot) throw std::runtime_error("cannot start gnuplot (install gnuplot-nox)");
  const std::string text = script.str();
  std::fwrite(text.data(), 1, text.size(), gnuplot);
  if (pclose(gnuplot) != 0) {
    throw std::runtime_error("gnuplot failed to draw " + png.string() +
                             " (is gnuplot-nox installed?)");
  }
  std::filesystem::remove(data);
}

Setup default_setup(const std::string& model) {
  Setup s;
  s.pattern = scan_for(model, 0, "");
  s.settings.params = core::default_physics_params(*s.pattern.model);
  s.settings.seed = 2026;
  return s;
}

Table detection_vs_range(const Setup& setup, const std::vector<double>& reflectivities,
                         double max_range_m, double step_m) {
  Table t;
  t.title = std::string(setup.pattern.model->name) +
            ": detection probability vs range (Lambertian targets, normal incidence)";
  t.x_label = "range (m)";
  t.y_label = "share of beams detected";
  t.columns = {"range_m"};
  for (const double r : reflectivities) {
    t.columns.push_back(format_number(r * 100) + " %");
  }
  const auto materials = targets(reflectivities);
  std::vector<std::unique_ptr<core::Pipeline>> pipelines;
  for (std::size_t i = 0; i < reflectivities.size(); ++i) {
    pipelines.push_back(std::make_unique<core::Pipeline>(setup.pattern, materials, setup.settings));
  }
  SyntheticFrame frame(setup.pattern);
  core::FrameReturns out;
  for (const double range : range_steps(max_range_m, step_m)) {
    std::vector<double> row{range};
    for (std::size_t i = 0; i < reflectivities.size(); ++i) {
      frame.facing_every_beam(range, static_cast<std::uint16_t>(i + 1));
      pipelines[i]->process(frame.hits(), out);
      row.push_back(share_detected(out));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

namespace {

// Per (rate, range): share of target returns and of rain-drop returns, in the given echo mode.
Table rain_sweep(const Setup& setup, const std::vector<double>& ranges_m,
                 const std::vector<double>& rates, core::ReturnMode mode, bool drops) {
  const auto materials = targets({0.10});
  auto settings = setup.settings;
  settings.return_mode = mode;
  core::Pipeline pipeline(setup.pattern, materials, settings);
  SyntheticFrame frame(setup.pattern);
  core::FrameReturns out;
  Table t;
  t.columns = {"rain_mm_per_h"};
  for (const double r : ranges_m) t.columns.push_back(format_number(r) + " m");
  std::vector<double> dry(ranges_m.size(), 0);
  for (const double rate : rates) {
    std::vector<double> row{rate};
    for (std::size_t k = 0; k < ranges_m.size(); ++k) {
      frame.facing_every_beam(ranges_m[k], 1);
      frame.hits().weather.rain_mm_per_h = rate;
      pipeline.process(frame.hits(), out);
      if (drops) {
        row.push_back(share_of_kind(out, core::ReturnKind::kRainDrop));
      } else {
        const double targets_seen = share_of_kind(out, core::ReturnKind::kTarget);
        if (rate == 0) dry[k] = targets_seen;
        row.push_back(dry[k] > 0 ? 1.0 - targets_seen / dry[k] : 0.0);
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<double> with_dry_first(std::vector<double> rates) {
  if (rates.empty() || rates.front() != 0) rates.insert(rates.begin(), 0.0);
  return rates;
}

}  // namespace

Table rain_drop_rate(const Setup& setup, const std::vector<double>& ranges_m,
                     const std::vector<double>& rates_mm_per_h) {
  Table t = rain_sweep(setup, ranges_m, with_dry_first(rates_mm_per_h), setup.settings.return_mode,
                       false);
  t.title = std::string(setup.pattern.model->name) +
            ": returns of a 10 % target lost to rain (false negatives)";
  t.x_label = "rain rate (mm/h)";
  t.y_label = "share of dry returns lost";
  return t;
}

Table rain_false_positive_rate(const Setup& setup, const std::vector<double>& ranges_m,
                               const std::vector<double>& rates_mm_per_h) {
  Table t =
      rain_sweep(setup, ranges_m, with_dry_first(rates_mm_per_h), setup.settings.return_mode, true);
  t.title = std::string(setup.pattern.model->name) +
            ": beams whose reported return is a rain drop (false positives), 10 % target";
  t.x_label = "rain rate (mm/h)";
  t.y_label = "share of beams";
  return t;
}

namespace {
// The surface stage of a chain ("surface.brdf" when it has none).
std::string surface_of(const std::vector<std::string>& chain) {
  for (const auto& name : chain) {
    if (name.starts_with("surface.")) return name;
  }
  return "surface.brdf";
}
}  // namespace

Table power_vs_incidence(const Setup& setup, const core::MaterialTable& materials,
                         const std::vector<std::uint16_t>& ids) {
  Table t;
  t.title = std::string(setup.pattern.model->name) +
            ": received power at 10 m vs incidence angle (" + surface_of(setup.settings.stages) +
            ")";
  t.x_label = "incidence angle (deg)";
  t.y_label = "received power (W)";
  t.log_y = true;
  t.columns = {"angle_deg"};
  for (const auto id : ids) {
    const core::Material* m = materials.find(id);
    t.columns.push_back(m ? m->name : std::to_string(id));
  }
  t.y_min = setup.settings.params.threshold_w() / 100;
  t.reference_y = setup.settings.params.threshold_w();
  t.reference_label = "threshold (3 sigma)";
  auto settings = setup.settings;
  // The surface's power, no noise, no threshold.
  settings.stages = core::stage_chain(core::PhysicsMode::kIdeal);
  core::use_stage(settings.stages, surface_of(setup.settings.stages));
  core::Pipeline pipeline(setup.pattern, materials, settings);
  SyntheticFrame frame(setup.pattern);
  core::FrameReturns out;
  constexpr int kAngles = 90;
  std::vector<std::vector<double>> columns;
  for (const auto id : ids) {
    for (int a = 0; a < kAngles; ++a) {
      const Eigen::Vector3d d = frame.direction(static_cast<std::size_t>(a));
      const Eigen::Vector3d side = d.unitOrthogonal();
      const double theta = a * std::numbers::pi / 180.0;
      frame.set(static_cast<std::size_t>(a), d * 10.0,
                -d * std::cos(theta) + side * std::sin(theta), id);
    }
    pipeline.process(frame.hits(), out);
    std::vector<double> powers;
    powers.reserve(kAngles);
    for (int a = 0; a < kAngles; ++a) powers.push_back(out.power_w[static_cast<std::size_t>(a)]);
    columns.push_back(std::move(powers));
  }
  for (int a = 0; a < kAngles; ++a) {
    std::vector<double> row{double(a)};
    for (const auto& c : columns) row.push_back(c[static_cast<std::size_t>(a)]);
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table blooming_width(const Setup& setup, const std::vector<double>& equivalent_reflectivities) {
  Table t;
  t.title = std::string(setup.pattern.model->name) +
            ": azimuthal half-width of a sign (2 deg half-width, 20 m) as reported";
  t.x_label = "sign reflectivity, Lambertian-equivalent (pi x BRDF peak)";
  t.y_label = "reported half-width (deg)";
  t.log_x = true;
  t.columns = {"reflectivity", "geometric", "reported"};
  auto all = equivalent_reflectivities;
  all.push_back(0.30);  // the wall behind, last id
  const auto materials = targets(all);
  const auto wall = static_cast<std::uint16_t>(all.size());
  core::Pipeline pipeline(setup.pattern, materials, setup.settings);
  SyntheticFrame frame(setup.pattern);
  core::FrameReturns out;
  for (std::size_t i = 0; i < equivalent_reflectivities.size(); ++i) {
    double geometric = 0;
    for (std::size_t b = 0; b < frame.beams(); ++b) {
      const Eigen::Vector3d d = frame.direction(b);
      frame.set(b, Eigen::Vector3d::Zero(), Eigen::Vector3d::UnitZ(), 0);
      if (d.x() < 0.5) continue;
      const double az = std::atan2(d.y(), d.x()) * 180 / std::numbers::pi;
      const double el = std::asin(d.z()) * 180 / std::numbers::pi;
      const bool on_sign = std::fabs(az) < 2 && std::fabs(el) < 4;
      frame.set(b, d * ((on_sign ? 20.0 : 40.0) / d.x()), -Eigen::Vector3d::UnitX(),
                on_sign ? static_cast<std::uint16_t>(i + 1) : wall);
      if (on_sign) geometric = std::max(geometric, std::fabs(az));
    }
    pipeline.process(frame.hits(), out);
    double reported = 0;
    for (std::size_t b = 0; b < frame.beams(); ++b) {
      if (out.range_m[b] > 0 && out.range_m[b] < 25 &&
          out.kind[b] != static_cast<std::uint8_t>(core::ReturnKind::kNoise)) {
        const Eigen::Vector3d d = frame.direction(b);
        reported = std::max(reported, std::fabs(std::atan2(d.y(), d.x()) * 180 / std::numbers::pi));
      }
    }
    t.rows.push_back({equivalent_reflectivities[i], geometric, reported});
  }
  return t;
}

std::vector<RainMetrics> validate_rain(const Setup& setup, const core::MaterialTable& materials,
                                       const std::vector<double>& rates_mm_per_h, int frames) {
  const core::BeamGeometry geometry(setup.pattern);
  std::vector<float> rows;
  DemoScene().render(geometry, rows);
  core::FrameHits hits;
  hits.reshape({static_cast<std::uint32_t>(setup.pattern.columns_per_frame),
                static_cast<std::uint16_t>(setup.pattern.model->channels)});
  std::vector<double> truth(hits.shape.beams(), 0);
  for (std::size_t i = 0; i < hits.shape.beams(); ++i) {
    const float* r = &rows[i * 7];
    if (r[6] == 0) continue;
    truth[i] = geometry.reported_range({r[0], r[1], r[2]},
                                       static_cast<std::uint32_t>(i / hits.shape.channels),
                                       static_cast<std::uint16_t>(i % hits.shape.channels));
  }
  core::Pipeline pipeline(setup.pattern, materials, setup.settings);
  const double noise = setup.settings.params.noise_power_w();
  const double area = std::numbers::pi * std::pow(setup.settings.params.datasheet_range_m, 2);
  constexpr double kCorrectWithinM = 0.3;
  std::vector<core::FrameReturns> dry(static_cast<std::size_t>(frames));
  std::vector<RainMetrics> results;
  for (const double rate : with_dry_first(rates_mm_per_h)) {
    RainMetrics m{.rain_mm_per_h = rate};
    double detected = 0, correct = 0, error_sum = 0, error_n = 0, power_sum = 0;
    for (int f = 0; f < frames; ++f) {
      hits.clear(static_cast<std::uint32_t>(f));
      for (std::size_t i = 0; i < hits.shape.beams(); ++i) {
        const float* r = &rows[i * 7];
        hits.x[i] = r[0], hits.y[i] = r[1], hits.z[i] = r[2];
        hits.nx[i] = r[3], hits.ny[i] = r[4], hits.nz[i] = r[5];
        hits.material[i] = static_cast<std::uint16_t>(r[6]);
      }
      hits.columns_received = hits.shape.columns;
      hits.weather.rain_mm_per_h = rate;
      core::FrameReturns out;
      pipeline.process(hits, out);
      const auto& reference = dry[static_cast<std::size_t>(f)];
      for (std::size_t b = 0; b < hits.shape.beams(); ++b) {
        if (!(out.range_m[b] > 0)) continue;
        ++detected;
        power_sum += out.power_w[b];
        if (truth[b] > 0 && std::fabs(out.range_m[b] - truth[b]) < kCorrectWithinM) {
          ++correct;
          if (rate > 0 && reference.range_m[b] > 0 &&
              std::fabs(reference.range_m[b] - truth[b]) < kCorrectWithinM) {
            error_sum += std::fabs(out.range_m[b] - reference.range_m[b]);
            ++error_n;
          }
        }
      }
      if (rate == 0) dry[static_cast<std::size_t>(f)] = out;
    }
    m.detection_rate_pct = detected > 0 ? 100.0 * correct / detected : 0;
    m.false_detection_rate_pct = detected > 0 ? 100.0 * (detected - correct) / detected : 0;
    m.mean_abs_range_error_m = error_n > 0 ? error_sum / error_n : 0;
    m.snr_db = detected > 0 ? 20.0 * std::log10(power_sum / detected / noise) : 0;
    m.points_per_frame = detected / frames;
    m.density_per_m2 = m.points_per_frame / area;
    results.push_back(m);
  }
  return results;
}

}  // namespace lidaremu::clients::report
