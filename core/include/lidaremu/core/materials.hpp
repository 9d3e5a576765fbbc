#pragma once
// The material table of seed 000 (section 1.3.4) plus the BRDF parameters of PHYSICS.md 2b, as
// data read from config/materials.toml.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lidaremu::core {

struct Material {
  std::uint16_t id = 0;
  std::string name;
  double diffuse = 0;          // alpha
  double specular = 0;         // beta
  double retroreflective = 0;  // gamma
  double lobe_width_deg = 1;   // sigma
  // Range-equation model (PHYSICS.md 2b).
  double reflectivity = 0;             // Lambertian Gamma(0) at 905 nm; defaults to alpha
  double fresnel_f0 = 0;               // gloss: Fresnel reflectance at normal incidence (0: none)
  double roughness = 0.1;              // gloss: RMS facet slope (Beckmann m)
  double transmittance = 0;            // share passing straight through (8-float paths)
  double retro_peak_per_sr = 500;      // retroreflector BRDF peak, 100-1000 /sr (seed 001)
  double retro_observation_deg = 0.5;  // width of the peak in observation angle
  double retro_entrance_deg = 40;      // width of the fall-off with entrance angle
};

class MaterialTable {
 public:
  static constexpr std::uint16_t kMaxId = 4095;

  // Throws std::runtime_error naming the file, the key and the fix on any problem.
  static MaterialTable load(const std::filesystem::path& file);
  static MaterialTable from_toml_text(std::string_view text, const std::string& source_name);

  [[nodiscard]] const Material* find(std::uint16_t id) const {
    return id < by_id_.size() && by_id_[id] ? &materials_[*by_id_[id]] : nullptr;
  }
  [[nodiscard]] const std::vector<Material>& all() const { return materials_; }

 private:
  std::vector<Material> materials_;
  std::vector<std::optional<std::size_t>> by_id_;
};

}  // namespace lidaremu::core
