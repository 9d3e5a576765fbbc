// The physics report's curves of what a perception engineer checks first: reflectivity against
// incidence, range noise against range, fog clutter against visibility, the sun's cost in reach,
// point density in rain. Each is measured on the real chain over whole synthetic frames.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "lidaremu/clients/physics_report.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "report_frame.hpp"

namespace lidaremu::clients::report {
using namespace detail;
namespace {

double median_reflectivity(const core::FrameReturns& out) {
  std::vector<int> r;
  for (std::size_t b = 0; b < out.shape.beams(); ++b) {
    if (out.range_m[b] > 0 && out.kind[b] == static_cast<std::uint8_t>(core::ReturnKind::kTarget)) {
      r.push_back(out.reflectivity[b]);
    }
  }
  if (r.empty()) return 0;
  std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
  return r[r.size() / 2];
}

std::string title(const Setup& setup, const std::string& what) {
  return std::string(setup.pattern.model->name) + ": " + what;
}

}  // namespace

Table reflectivity_vs_incidence(const Setup& setup, const core::MaterialTable& materials,
                                const std::vector<std::uint16_t>& ids, double range_m) {
  Table t;
  t.title = title(setup, "reported reflectivity vs incidence at " + format_number(range_m) +
                             " m (median of a frame)");
  t.x_label = "incidence angle (deg)";
  t.y_label = "calibrated reflectivity (0-100 diffuse, 101-255 retroreflective)";
  t.columns = {"angle_deg"};
  for (const auto id : ids) {
    const core::Material* m = materials.find(id);
    t.columns.push_back(m ? m->name : std::to_string(id));
  }
  core::Pipeline pipeline(setup.pattern, materials, setup.settings);
  SyntheticFrame frame(setup.pattern);
  core::FrameReturns out;
  for (int deg = 0; deg <= 85; deg += 5) {
    std::vector<double> row{double(deg)};
    for (const auto id : ids) {
      frame.tilted_every_beam(range_m, id, deg * std::numbers::pi / 180.0);
      pipeline.process(frame.hits(), out);
      row.push_back(median_reflectivity(out));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table range_sigma_vs_range(const Setup& setup, const std::vector<double>& reflectivities,
                           double max_range_m, double step_m) {
  Table t;
  t.title = title(setup, "range noise vs range (1 sigma, Lambertian targets)");
  t.x_label = "range (m)";
  t.y_label = "range sigma (m)";
  t.log_y = true;
  t.columns = {"range_m"};
  for (const double r : reflectivities) t.columns.push_back(format_number(r * 100) + " %");
  const auto materials = targets(reflectivities);
  core::Pipeline pipeline(setup.pattern, materials, setup.settings);
  SyntheticFrame frame(setup.pattern);
  core::FrameReturns out;
  for (const double range : range_steps(max_range_m, step_m)) {
    std::vector<double> row{range};
    for (std::size_t i = 0; i < reflectivities.size(); ++i) {
      frame.facing_every_beam(range, static_cast<std::uint16_t>(i + 1));
      pipeline.process(frame.hits(), out);
      double sum = 0, sum2 = 0;
      std::size_t n = 0;
      for (std::size_t b = 0; b < frame.beams(); ++b) {
        if (!(out.range_m[b] > 0) ||
            out.kind[b] != static_cast<std::uint8_t>(core::ReturnKind::kTarget)) {
          continue;
        }
        const double e = out.range_m[b] - range;
        sum += e, sum2 += e * e, ++n;
      }
      // Too few echoes to say (beyond reach): no point.
      row.push_back(n > frame.beams() / 10
                        ? std::sqrt(std::max(sum2 / double(n) - sum * sum / double(n * n), 0.0))
                        : NAN);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table fog_clutter_vs_visibility(const Setup& setup, const std::vector<double>& visibilities_m) {
  Table t;
  t.title = title(setup, "beams that hit nothing reporting the fog itself");
  t.x_label = "meteorological visibility (m)";
  t.y_label = "share of beams";
  t.log_x = true;
  t.columns = {"visibility_m", "fog points"};
  const auto materials = targets({0.1});
  core::Pipeline pipeline(setup.pattern, materials, setup.settings);
  SyntheticFrame frame(setup.pattern);
  frame.empty();
  core::FrameReturns out;
  for (const double v : visibilities_m) {
    frame.hits().weather.visibility_m = v;
    pipeline.process(frame.hits(), out);
    t.rows.push_back({v, share_of_kind(out, core::ReturnKind::kFog)});
  }
  return t;
}

Table sun_detection_vs_range(const Setup& setup, double reflectivity,
                             const std::vector<double>& irradiances_w_per_m2, double max_range_m,
                             double step_m) {
  Table t;
  t.title = title(setup, format_number(reflectivity * 100) +
                             " % target facing the sun: detection probability vs range");
  t.x_label = "range (m)";
  t.y_label = "share of the beams facing the sun detected";
  t.columns = {"range_m"};
  for (const double e : irradiances_w_per_m2) {
    t.columns.push_back(e == 0 ? std::string("night") : format_number(e) + " W/m2");
  }
  auto settings = setup.settings;
  settings.params.sun_elevation_deg = 0;  // on the horizon behind the sensor: the beams ahead
  settings.params.sun_azimuth_deg = 180;  // see their target lit head-on
  const auto materials = targets({reflectivity});
  core::Pipeline pipeline(setup.pattern, materials, settings);
  SyntheticFrame frame(setup.pattern);
  core::FrameReturns out;
  for (const double range : range_steps(max_range_m, step_m)) {
    std::vector<double> row{range};
    frame.facing_every_beam(range, 1);
    for (const double e : irradiances_w_per_m2) {
      frame.hits().weather.sun_irradiance_w_per_m2 = e;
      pipeline.process(frame.hits(), out);
      std::size_t n = 0, seen = 0;
      for (std::size_t b = 0; b < frame.beams(); ++b) {
        if (frame.direction(b).x() < 0.97) continue;
        ++n, seen += out.range_m[b] > 0;
      }
      row.push_back(n ? double(seen) / double(n) : 0.0);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table rain_density(const std::vector<RainMetrics>& metrics) {
  Table t;
  t.title = "demo scene in rain: points per frame (seed 004: density falls) and false detections";
  t.x_label = "rain rate (mm/h)";
  t.y_label = "relative to dry";
  t.columns = {"rain_mm_per_h", "points per frame / dry", "1 + false detection rate"};
  const double dry = metrics.empty() ? 1.0 : metrics.front().points_per_frame;
  for (const auto& m : metrics) {
    t.rows.push_back(
        {m.rain_mm_per_h, m.points_per_frame / dry, 1.0 + m.false_detection_rate_pct / 100.0});
  }
  return t;
}

}  // namespace lidaremu::clients::report
