// What leaves the chain (PHYSICS.md sections 2b, 3 and 8): the range quantised to the format's
// unit, the calibrated reflectivity drivers read (from the received power, as the sensor computes
// it), the signal, the echo pulse width and the ground truth.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>

#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

// The sensor's range-dependent gain correction is bounded: where its receiver sees almost
// nothing (the near field, a bistatic blind zone) it corrects by at most 1000x, so a return from
// there reads dark instead of dividing by zero.
constexpr double kMinCalibratedOverlap = 1e-3;

class ReportStage final : public Stage {
 public:
  void run(const BlockContext& b) const override {
    const auto& model = *b.geometry.pattern().model;
    const auto& c = b.constants;
    const double calibration_extinction = physics::extinction_from_visibility(
        stage_kit::kCalibrationVisibilityM, b.params.wavelength_nm);
    const double tau_h = b.params.pulse_half_width_ns * 1e-9;
    const auto& receiver = b.params.receiver;
    const double wavelength = b.params.wavelength_nm;
    // Ouster's NEAR_IR: the ambient photons the channel collects while it listens for echoes
    // (the range gate's round trip); SIGNAL: the echo's photons over the pulse (its energy,
    // P_0 tau_H), the power taken to real watts through the detector's own noise.
    const double listen_s = 2.0 * b.params.range_gate_m / physics::kSpeedOfLight;
    const double real_w_per_unit =
        receiver.dark_noise_w(b.params.bandwidth_hz, wavelength) / std::max(c.noise_w, 1e-30);
    for (std::size_t beam = b.begin; beam < b.end; ++beam) {
      b.out.near_ir[beam] = static_cast<std::uint16_t>(
          std::min(receiver.photons(b.work.ambient_w[beam], listen_s, wavelength), 65535.0));
      const Pulse* pulses = stage_kit::pulses_of(b, beam);
      const std::int8_t* pick = b.work.echo_pick.data() + beam * FrameReturns::kMaxEchoes;
      for (int e = 0; e < FrameReturns::kMaxEchoes; ++e) {
        const std::size_t slot = b.out.slot(beam, e);
        const Pulse* p = pick[e] >= 0 ? &pulses[pick[e]] : nullptr;
        const double range = p ? physics::quantise_range(p->range_m + b.work.range_offset_m[beam],
                                                         model.range_unit_m, model.max_range_m)
                               : 0.0;
        b.out.range_m[slot] = static_cast<float>(range);
        if (!p || range == 0.0) {
          b.out.power_w[slot] = 0;
          b.out.reflectivity[slot] = 0;
          b.out.signal_photons[slot] = 0;
          b.out.pulse_width_ns[slot] = 0;
          b.out.object_id[slot] = 0;
          b.out.kind[slot] = 0;
          continue;
        }
        const double r = p->range_m;
        const double white_w = physics::received_power(
            c.system_constant, 1.0 / std::numbers::pi, r,
            physics::two_way_transmission(calibration_extinction, r),
            std::max(physics::crossover(b.params.optics, r), kMinCalibratedOverlap));
        b.out.power_w[slot] = p->power_w;
        b.out.reflectivity[slot] = static_cast<std::uint8_t>(
            physics::estimated_reflectivity(p->power_w, white_w, p->noise_w));
        b.out.signal_photons[slot] = static_cast<std::uint16_t>(std::clamp(
            receiver.photons(p->power_w * real_w_per_unit, tau_h, wavelength), 1.0, 65535.0));
        b.out.pulse_width_ns[slot] = static_cast<float>(
            physics::echo_pulse_width_s(p->power_w, p->threshold_w, tau_h, p->extent_m) * 1e9);
        b.out.object_id[slot] = p->object_id;
        b.out.kind[slot] = static_cast<std::uint8_t>(p->kind);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Stage> make_report(const StageSetup& /*setup*/) {
  return std::make_unique<ReportStage>();
}

}  // namespace lidaremu::core::stages
