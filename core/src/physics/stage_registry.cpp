#include "lidaremu/core/physics/stage_registry.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

namespace lidaremu::core {
namespace stages {
// One factory per stage file.
std::unique_ptr<Stage> make_geometry(const StageSetup&);
std::unique_ptr<Stage> make_raster_correction(const StageSetup&);
std::unique_ptr<Stage> make_multibounce(const StageSetup&);
std::unique_ptr<Stage> make_surface_brdf(const StageSetup&);
std::unique_ptr<Stage> make_surface_ipsp(const StageSetup&);
std::unique_ptr<Stage> make_clear_air(const StageSetup&);
std::unique_ptr<Stage> make_rain(const StageSetup&);
std::unique_ptr<Stage> make_fog(const StageSetup&);
std::unique_ptr<Stage> make_blooming(const StageSetup&);
std::unique_ptr<Stage> make_detection_threshold(const StageSetup&);
std::unique_ptr<Stage> make_detection_capability(const StageSetup&);
std::unique_ptr<Stage> make_detection_ideal(const StageSetup&);
std::unique_ptr<Stage> make_echo_selection(const StageSetup&);
std::unique_ptr<Stage> make_range_noise(const StageSetup&);
std::unique_ptr<Stage> make_report(const StageSetup&);
}  // namespace stages

namespace {

// In the order a chain runs them.
constexpr std::array kRegistry{
    StageRow{"geometry", "1, 5", "", kHitsIn, kPulses, false, stages::make_geometry,
             "one candidate return per ray: range, incidence, back faces, range window"},
    StageRow{"geometry.raster_correction", "9", "", kHitsIn | kPulses, kPulses, false,
             stages::make_raster_correction,
             "ranges of depth-image rows moved onto the true beam direction"},
    StageRow{"paths.multibounce", "6", "", kHitsIn | kPulses, kPulses, false,
             stages::make_multibounce, "8-float paths: ghosts behind mirrors and glass"},
    StageRow{"surface.brdf", "2b", "surface", kPulses, kPower, false, stages::make_surface_brdf,
             "range equation with a BRDF, calibrated from the datasheet"},
    StageRow{"surface.ipsp", "2a", "surface", kPulses, kPower, false, stages::make_surface_ipsp,
             "seed 000's diffuse, specular and retroreflective mixture"},
    StageRow{"atmosphere.clear_air", "4a", "", kPower, kPower, false, stages::make_clear_air,
             "two-way extinction of clear air or fog, from the visibility"},
    StageRow{"atmosphere.rain", "4b", "", kPower, kPower, false, stages::make_rain,
             "rain: extinction, drops as returns, range jitter"},
    StageRow{"atmosphere.fog", "4a, 0", "", kPower, kPower, false, stages::make_fog,
             "the fog volume's backscatter: near-sensor returns at low visibility"},
    StageRow{"blooming", "7", "", kPower, kBloomed, true, stages::make_blooming,
             "retroreflectors bloom into neighbouring beams"},
    StageRow{"detection.threshold", "3", "detection", kPower, kDetections, false,
             stages::make_detection_threshold, "detector and ambient noise, 3-sigma threshold"},
    StageRow{"detection.capability", "3", "detection", kPower, kDetections, false,
             stages::make_detection_capability, "seed 002's reflectance-limit model, no noise"},
    StageRow{"detection.ideal", "3", "detection", kPower, kDetections, false,
             stages::make_detection_ideal, "every candidate detected, no noise"},
    StageRow{"echoes", "8", "", kDetections, kEchoesOut, false, stages::make_echo_selection,
             "the echoes the return mode or profile reports"},
    StageRow{"range.noise", "3", "", kEchoesOut, kEchoesOut, false, stages::make_range_noise,
             "Gaussian range noise on every reported echo"},
    StageRow{"report", "2b, 3, 8", "", kEchoesOut, kReported, false, stages::make_report,
             "quantised range, calibrated reflectivity, signal, pulse width, ground truth"},
};

std::size_t rank_of(const StageRow* row) {
  return static_cast<std::size_t>(row - kRegistry.data());
}

std::string describe(std::uint32_t mask) {
  static constexpr std::array<std::pair<std::uint32_t, const char*>, 7> kNames{
      {{kHitsIn, "hits"},
       {kPulses, "candidate returns"},
       {kPower, "received power (a surface stage)"},
       {kBloomed, "bloom contributions"},
       {kDetections, "detections (a detection stage)"},
       {kEchoesOut, "selected echoes (echoes)"},
       {kReported, "a report"}}};
  std::string s;
  for (const auto& [bit, n] : kNames) {
    if (mask & bit) s += (s.empty() ? "" : ", ") + std::string(n);
  }
  return s;
}

std::string known_names() {
  std::string s;
  for (const auto& row : kRegistry) s += (s.empty() ? "" : ", ") + std::string(row.name);
  return s;
}

const StageRow& known(std::string_view name) {
  const StageRow* row = find_stage(name);
  if (!row) {
    throw std::invalid_argument("unknown physics stage '" + std::string(name) +
                                "' (known: " + known_names() + ")");
  }
  return *row;
}

}  // namespace

std::span<const StageRow> stage_registry() { return kRegistry; }

const StageRow* find_stage(std::string_view name) {
  const auto* it = std::find_if(kRegistry.begin(), kRegistry.end(),
                                [&](const StageRow& r) { return r.name == name; });
  return it == kRegistry.end() ? nullptr : &*it;
}

std::vector<std::string> stage_chain(PhysicsMode mode) {
  if (mode == PhysicsMode::kIdeal) {
    return {"geometry", "paths.multibounce", "surface.brdf", "detection.ideal", "echoes", "report"};
  }
  return {"geometry",        "paths.multibounce", "surface.brdf", "atmosphere.clear_air",
          "atmosphere.rain", "atmosphere.fog",    "blooming",     "detection.threshold",
          "echoes",          "range.noise",       "report"};
}

void use_stage(std::vector<std::string>& chain, std::string_view name) {
  const StageRow& row = known(name);
  std::erase_if(chain, [&](const std::string& s) {
    const StageRow* other = find_stage(s);
    return s == name || (other && !row.role.empty() && other->role == row.role);
  });
  const auto at = std::find_if(chain.begin(), chain.end(), [&](const std::string& s) {
    const StageRow* other = find_stage(s);
    return other && rank_of(other) > rank_of(&row);
  });
  chain.insert(at, std::string(name));
}

void drop_stage(std::vector<std::string>& chain, std::string_view name) { std::erase(chain, name); }

std::vector<const StageRow*> check_chain(std::span<const std::string> chain) {
  std::vector<const StageRow*> rows;
  for (const std::string& name : chain) {
    const StageRow& row = known(name);
    for (const StageRow* before : rows) {
      if (before == &row) {
        throw std::invalid_argument("physics stage '" + name + "' is listed twice");
      }
      if (!row.role.empty() && before->role == row.role) {
        throw std::invalid_argument("physics stages '" + std::string(before->name) + "' and '" +
                                    name + "' are both " + std::string(row.role) +
                                    " models: keep one");
      }
      if (rank_of(before) > rank_of(&row)) {
        throw std::invalid_argument("physics stage '" + name + "' must come before '" +
                                    std::string(before->name) + "' (order: " + known_names() + ")");
      }
    }
    rows.push_back(&row);
  }
  std::uint32_t available = kHitsIn;
  for (const StageRow* row : rows) {
    const std::uint32_t missing = row->reads & ~available;
    if (missing) {
      throw std::invalid_argument("physics stage '" + std::string(row->name) + "' needs " +
                                  describe(missing) + ", which no earlier stage provides");
    }
    available |= row->writes;
  }
  if (!(available & kReported)) {
    throw std::invalid_argument("physics chain must end with 'report' (it never reports echoes)");
  }
  return rows;
}

}  // namespace lidaremu::core
