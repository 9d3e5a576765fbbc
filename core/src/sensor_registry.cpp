// The registry: every sensor model, once, each family's rows from its folder
// (core/src/<family>/models.cpp), in the families' order.
#include <span>
#include <vector>

#include "lidaremu/core/family.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::core {
namespace {

struct Registry {
  std::vector<SensorModel> models;
  std::vector<const SensorModel*> index;
  Registry() {
    for (const Family* family : all_families()) {
      for (SensorModel& m : family->models()) {
        m.family = family_id(*family);
        models.push_back(std::move(m));
      }
    }
    for (const SensorModel& m : models) index.push_back(&m);
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

const SensorModel* find_sensor_model(std::string_view name) {
  for (const SensorModel* m : registry().index) {
    if (m->name == name) return m;
  }
  return nullptr;
}

std::span<const SensorModel* const> all_sensor_models() { return registry().index; }

std::string sensor_model_names() {
  std::string names;
  for (const SensorModel* m : registry().index) {
    if (!names.empty()) names += '|';
    names += m->name;
  }
  return names;
}

}  // namespace lidaremu::core
