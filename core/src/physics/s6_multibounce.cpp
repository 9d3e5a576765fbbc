// PHYSICS.md section 6 (seed 000, 1.3.6): 8-float paths. A mirror-like first hit passes its
// light on; the first hit that is not mirror-like returns it. The point lies along the first
// segment at half the optical path: the ghost behind the glass. The return enters the receiver
// directly when theta_in is within the angular resolution, otherwise back along the mirrors (one
// more reflection per mirror).
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
    stage_kit::for_each_pulse(
        b, [&](std::size_t beam, Pulse& p) { follow_path(b, beam, segments, p); });
  }

 private:
  static void follow_path(const BlockContext& b, std::size_t beam, int segments, Pulse& pulse) {
    const auto& h = b.hits;
    Eigen::Vector3d previous = Eigen::Vector3d::Zero();
    double travelled = 0;
    double mirror_gain = 1;
    for (int s = 0; s < segments; ++s) {
      const std::size_t i = h.hit(beam, pulse.ray, s);
      const Material* m = h.material[i] ? b.materials.find(h.material[i]) : nullptr;
      if (!m) return;  // the path ended (padding) before a diffuse hit: keep the first return
      const Eigen::Vector3d p = stage_kit::hit_point(h, i);
      const Eigen::Vector3d n = stage_kit::hit_normal(h, i);
      const Eigen::Vector3d incoming = (p - previous).normalized();
      const double leg = (p - previous).norm();
      travelled += leg;
      const bool next_exists = s + 1 < segments && h.material[h.hit(beam, pulse.ray, s + 1)] != 0;
      if (physics::is_mirror_like(*m) && next_exists) {
        mirror_gain *= m->specular;
        previous = p;
        continue;
      }
      if (s == 0) return;  // an ordinary first hit: geometry already made its pulse
      const double cos_theta = -incoming.dot(n);
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
      pulse.gain = static_cast<float>(gain);
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
