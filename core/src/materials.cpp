#include "lidaremu/core/materials.hpp"

#include <toml++/toml.h>

#include <sstream>
#include <stdexcept>

#include "lidaremu/core/config_text.hpp"

namespace lidaremu::core {
namespace {

std::string where(const std::string& source, const toml::node& node) {
  const auto& src = node.source();
  return source + ":" + std::to_string(src.begin.line);
}

}  // namespace

MaterialTable MaterialTable::load(const std::filesystem::path& file) {
  const ConfigText read = read_config_file(file);
  if (read.error) {
    throw std::runtime_error(*read.error +
                             " (the material table: give a readable file with --materials, or "
                             "keep config/materials.toml next to the build)");
  }
  return from_toml_text(read.text, file.string());
}

MaterialTable MaterialTable::from_toml_text(std::string_view text, const std::string& source_name) {
  if (auto deep = find_too_deep_toml(text)) {
    throw std::runtime_error(source_name + ":" + *deep);
  }
  toml::table doc;
  try {
    doc = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << source_name << ":" << e.source().begin.line << ": not valid TOML: " << e.description();
    throw std::runtime_error(msg.str());
  }
  std::vector<std::string> problems;
  MaterialTable table;
  for (const auto& [key, value] : doc) {
    if (key.str() != "material") {
      problems.push_back(source_name + ": unknown key '" + std::string(key.str()) +
                         "' (only [[material]] entries are accepted)");
    }
  }
  const toml::array* entries = doc["material"].as_array();
  if (!entries) problems.push_back(source_name + ": no [[material]] entries");
  for (std::size_t i = 0; entries && i < entries->size(); ++i) {
    const toml::table* t = (*entries)[i].as_table();
    const std::string path = "material[" + std::to_string(i) + "]";
    if (!t) {
      problems.push_back(source_name + ": " + path + " must be a table");
      continue;
    }
    Material m;
    bool reflectivity_given = false;
    for (const auto& [key, value] : *t) {
      const std::string k(key.str());
      const std::string at = where(source_name, value) + ": " + path + "." + k;
      if (k == "name") {
        if (auto s = value.value<std::string>())
          m.name = *s;
        else
          problems.push_back(at + " must be a string");
        continue;
      }
      const auto number = value.value<double>();
      if (!number) {
        problems.push_back(at + " must be a number");
        continue;
      }
      if (k == "id") {
        if (*number < 1 || *number > kMaxId ||
            *number != static_cast<double>(static_cast<int>(*number))) {
          problems.push_back(at + " must be a whole number from 1 to " + std::to_string(kMaxId) +
                             " (0 means 'no hit' and is reserved)");
        }
        m.id = static_cast<std::uint16_t>(*number);
      } else if (k == "alpha" || k == "beta" || k == "gamma") {
        if (*number < 0 || *number > 1) problems.push_back(at + " must be between 0 and 1");
        (k == "alpha" ? m.diffuse : k == "beta" ? m.specular : m.retroreflective) = *number;
      } else if (k == "sigma_deg") {
        if (!(*number > 0) || *number > 90) problems.push_back(at + " must be in (0, 90] degrees");
        m.lobe_width_deg = *number;
      } else if (k == "reflectivity") {
        if (*number < 0 || *number > 1) problems.push_back(at + " must be between 0 and 1");
        m.reflectivity = *number;
        reflectivity_given = true;
      } else if (k == "fresnel_f0") {
        if (*number < 0 || *number > 1) problems.push_back(at + " must be between 0 and 1");
        m.fresnel_f0 = *number;
      } else if (k == "transmittance") {
        if (*number < 0 || *number > 1) problems.push_back(at + " must be between 0 and 1");
        m.transmittance = *number;
      } else if (k == "roughness") {
        if (!(*number >= 0.005) || *number > 2) {
          problems.push_back(at + " must be from 0.005 to 2 (RMS facet slope)");
        }
        m.roughness = *number;
      } else if (k == "retro_peak_per_sr") {
        if (*number < 1 || *number > 1e4) problems.push_back(at + " must be from 1 to 10000 /sr");
        m.retro_peak_per_sr = *number;
      } else if (k == "retro_observation_deg" || k == "retro_entrance_deg") {
        if (!(*number > 0) || *number > 90) problems.push_back(at + " must be in (0, 90] degrees");
        (k == "retro_observation_deg" ? m.retro_observation_deg : m.retro_entrance_deg) = *number;
      } else {
        problems.push_back(at +
                           ": unknown key (accepted: id, name, alpha, beta, gamma, sigma_deg, "
                           "reflectivity, fresnel_f0, roughness, transmittance, retro_peak_per_sr, "
                           "retro_observation_deg, retro_entrance_deg)");
      }
    }
    if (!reflectivity_given) m.reflectivity = m.diffuse;
    if (m.diffuse + m.specular + m.retroreflective > 1.0 + 1e-9) {
      problems.push_back(where(source_name, *t) + ": " + path +
                         ": alpha + beta + gamma must not exceed 1 (energy conservation)");
    }
    if (m.id == 0) continue;  // reported above
    if (table.by_id_.size() <= m.id) table.by_id_.resize(m.id + 1);
    if (table.by_id_[m.id]) {
      problems.push_back(where(source_name, *t) + ": " + path + ": id " + std::to_string(m.id) +
                         " is defined twice");
      continue;
    }
    table.by_id_[m.id] = table.materials_.size();
    table.materials_.push_back(std::move(m));
  }
  if (!problems.empty()) {
    std::string msg = "material table has " + std::to_string(problems.size()) + " problem(s):";
    for (const auto& p : problems) msg += "\n  " + p;
    throw std::runtime_error(msg);
  }
  return table;
}

}  // namespace lidaremu::core
