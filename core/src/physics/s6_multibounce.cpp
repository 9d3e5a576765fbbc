// PHYSICS.md section 6 (seed 000, 1.3.6): 8-float paths. A mirror-like first hit passes its
// light on; the first hit that is not mirror-like returns it. The point lies along the first
// segment at half the optical path: the ghost behind the glass. The return enters the receiver
// directly when theta_in is within the angular resolution, otherwise back along the mirrors (one
// more reflection per mirror). A path that carries straight on through a transmissive surface
// (glass: transmittance) is not a mirror's: the object behind is a target of its own, a second
// echo behind the glass's own.
#include <memory>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

class MultiBounceStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    const auto& h = b.hits;
    const int segments = h.layout.segments_per_path;
    if (segments < 2) return;
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      // The paths of the rays that hit; a path seen through glass adds a candidate after them.
      const int count = b.work.pulse_count[beam];
      for (int k = 0; k < count; ++k) {
        follow_path(b, beam, segments, stage_kit::pulses_of(b, beam)[k]);
      }
    }
  }

 private:
  // A segment that carries on in the same direction (within 1 degree) went through the surface.
  static bool straight_on(const Eigen::Vector3d& incoming, const Eigen::Vector3d& outgoing) {
    constexpr double kCosOneDegree = 0.99984769515639;
    return incoming.dot(outgoing.normalized()) > kCosOneDegree;
  }

  static void follow_path(const BlockContext& b, std::size_t beam, int segments, PulseRef pulse) {
    const auto& h = b.hits;
    Eigen::Vector3d previous = Eigen::Vector3d::Zero();
    double travelled = 0;
    double mirror_gain = 1;
    double transmission = 1;  // one way, through transmissive surfaces (glass)
    bool mirrored = false;
    for (int s = 0; s < segments; ++s) {
      const std::size_t i = h.hit(beam, pulse.ray, s);
      const Material* m = h.material[i] ? b.materials.find(h.material[i]) : nullptr;
      if (!m) return;  // the path ended (padding) before a diffuse hit: keep the first return
      const Eigen::Vector3d p = stage_kit::hit_point(h, i);
      const Eigen::Vector3d n = stage_kit::hit_normal(h, i);
      const Eigen::Vector3d incoming = (p - previous).normalized();
      const double leg = (p - previous).norm();
      travelled += leg;
      const std::size_t next = h.hit(beam, pulse.ray, s + 1 < segments ? s + 1 : s);
      const bool next_exists = s + 1 < segments && h.material[next] != 0;
      if (next_exists && m->transmittance > 0 &&
          straight_on(incoming, stage_kit::hit_point(h, next) - p)) {
        transmission *= m->transmittance;  // the pulse goes on through; the surface keeps its
        previous = p;                      // own (Fresnel) echo from the geometry stage
        continue;
      }
      if (physics::is_mirror_like(*m) && next_exists) {
        mirror_gain *= m->specular;
        mirrored = true;
        previous = p;
        continue;
      }
      if (s == 0) return;  // an ordinary first hit: geometry already made its pulse
      const double cos_theta = -incoming.dot(n);
      if (!mirrored) {
        // Seen through glass: a target of its own, behind the glass's echo (a second echo in
        // dual modes), its power through the glass twice.
        if (!(cos_theta > 0)) return;
        Pulse through = pulse;
        through.range_m = static_cast<float>((travelled + p.norm()) / 2.0);
        through.cos_incidence = static_cast<float>(cos_theta);
        through.material = h.material[i];
        through.object_id = h.object_id[i];
        through.gain = static_cast<float>(transmission * transmission);
        through.kind = ReturnKind::kTarget;
        stage_kit::add_pulse(b, beam, through);
        return;
      }
      if (!(cos_theta > 0)) {
        pulse.kind = ReturnKind::kNone;
        pulse.power_w = 0;
        return;
      }
      const bool direct = h.angle_deg[i] <= b.constants.multibounce_resolution_deg;
      const double back = direct ? p.norm() : travelled;
      const double gain = direct ? mirror_gain : mirror_gain * mirror_gain;
      pulse.range_m = static_cast<float>((travelled + back) / 2.0);
      pulse.cos_incidence = static_cast<float>(cos_theta);
      pulse.material = h.material[i];
      pulse.object_id = h.object_id[i];
      pulse.gain = static_cast<float>(gain * transmission * transmission);
      pulse.kind = ReturnKind::kGhost;
      return;
    }
  }
};

}  // namespace

std::unique_ptr<Stage> make_multibounce(const StageSetup& /*setup*/) {
  return std::make_unique<MultiBounceStage>();
}

}  // namespace lidaremu::core::stages
