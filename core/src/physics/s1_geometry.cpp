// PHYSICS.md section 1 (geometry) and 5 (several rays per beam): one candidate per ray from its
// first hit: range, incidence, back faces, the sensor's range window, the footprint's range
// extent at grazing incidence.
#include <cmath>
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class GeometryStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    const auto& h = b.hits;
    const auto& model = *b.geometry.pattern().model;
    const int rays = stage_kit::rays_used(b);
    const Eigen::Vector3d sun(b.constants.sun_direction[0], b.constants.sun_direction[1],
                              b.constants.sun_direction[2]);
    const double sun_w = b.params.weather.sun_irradiance_w_per_m2;
    const auto& receiver = b.params.receiver;
    const float sky_w = static_cast<float>(receiver.sky_w(sun_w));
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      b.work.pulse_count[beam] = 0;
      b.work.range_offset_m[beam] = 0;
      b.work.drops_crossed[beam] = 0;
      b.work.bloom[beam] = Bloom{};
      b.work.ambient_w[beam] = sky_w;  // until a ray finds a surface
      const auto column = static_cast<std::uint32_t>(beam / h.shape.channels);
      const auto channel = static_cast<std::uint16_t>(beam % h.shape.channels);
      for (int ray = 0; ray < rays; ++ray) {
        const std::size_t i = h.hit(beam, ray, 0);
        if (h.material[i] == 0) continue;
        const Eigen::Vector3d p = stage_kit::hit_point(h, i);
        const Eigen::Vector3d n = stage_kit::hit_normal(h, i);
        const double distance = p.norm();
        // The emitter sits within millimetres of the origin: -p/|p| is the way back.
        const double cos_theta = -p.dot(n) / distance;
        if (!(cos_theta > 0.0) || distance < model.min_range_m || distance > model.max_range_m) {
          continue;
        }
        // The format's range convention (Ouster: from the lidar origin, minus the beam-origin
        // offset) taken from the centre ray, or the first ray that hit when the centre missed.
        if (ray == 0 || b.work.pulse_count[beam] == 0) {
          b.work.range_offset_m[beam] =
              static_cast<float>(b.geometry.reported_range(p, column, channel) - distance);
        }
        const double footprint = 2.0 * b.constants.beam.radius_m(distance);
        const double tan_theta = std::sqrt(std::max(1.0 - cos_theta * cos_theta, 0.0)) / cos_theta;
        Pulse pulse;
        pulse.range_m = static_cast<float>(distance);
        pulse.extent_m = static_cast<float>(std::min(footprint * tan_theta, 10.0));
        pulse.object_id = h.object_id[i];
        pulse.kind = ReturnKind::kTarget;
        pulse.cos_incidence = static_cast<float>(cos_theta);
        if (sun_w > 0) {
          const Material* m = b.materials.find(h.material[i]);
          pulse.ambient_w = static_cast<float>(
              receiver.ambient_w(sun_w, n.dot(sun), n.z(), m ? m->reflectivity : 0.0));
        }
        if (ray == 0 || b.work.pulse_count[beam] == 0) b.work.ambient_w[beam] = pulse.ambient_w;
        pulse.material = h.material[i];
        pulse.ray = static_cast<std::uint8_t>(ray);
        pulse.gain = 1.0f;
        stage_kit::add_pulse(b, beam, pulse);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Stage> make_geometry(const StageSetup& /*setup*/) {
  return std::make_unique<GeometryStage>();
}

}  // namespace lidaremu::core::stages
