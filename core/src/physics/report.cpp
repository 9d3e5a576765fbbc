// What leaves the chain (PHYSICS.md sections 2b, 3 and 8): the range quantised to the format's
// unit, the calibrated reflectivity drivers read (from the received power, as the sensor computes
// it), the signal, the echo pulse width and the ground truth.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numbers>
#include <span>

#include "lidaremu/core/simd.hpp"
#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

// The sensor's range-dependent gain correction is bounded: where its receiver sees almost
// nothing (the near field, a bistatic blind zone) it corrects by at most 1000x, so a return from
// there reads dark instead of dividing by zero.
constexpr double kMinCalibratedOverlap = 1e-3;

// A run's reported echoes, gathered for the vector functions.
struct Echoes {
  static constexpr std::size_t kCapacity = stage_kit::kDrawRun * FrameReturns::kMaxEchoes;
  std::array<std::size_t, kCapacity> slot;
  std::array<std::size_t, kCapacity> pulse;   // its index in the candidate planes
  std::array<float, kCapacity> transmission;  // -2 alpha r, then exp of it
  std::array<float, kCapacity> asin_ratio;    // sqrt(T / A), then asin of it
};

void clear_slot(FrameReturns& out, std::size_t slot) {
  out.power_w[slot] = 0;
  out.reflectivity[slot] = 0;
  out.signal_photons[slot] = 0;
  out.pulse_width_ns[slot] = 0;
  out.object_id[slot] = 0;
  out.kind[slot] = 0;
}

class ReportStage final : public Stage {
 public:
  // The planes the return mode fills; the rest stay as Pipeline leaves them, empty.
  explicit ReportStage(ReturnMode mode) : planes_(echo_planes(mode)) {}
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
    // The transmission and the pulse width's asin of a run's echoes are computed together, in
    // SIMD lanes; the rest per echo.
    Echoes echoes;
    stage_kit::for_each_run(b, [&](std::size_t first, std::size_t last) {
      std::size_t n = 0;
      for (std::size_t beam = first; beam < last; ++beam) {
        b.out.near_ir[beam] = static_cast<std::uint16_t>(
            std::min(receiver.photons(b.work.ambient_w[beam], listen_s, wavelength), 65535.0));
        const std::int8_t* pick = b.work.echo_pick.data() + beam * FrameReturns::kMaxEchoes;
        for (int e = 0; e < planes_; ++e) {
          const std::size_t slot = b.out.slot(beam, e);
          const bool picked = pick[e] >= 0;
          const std::size_t index = picked ? b.work.pulses.index(beam, pick[e]) : 0;
          const PulseRef p = b.work.pulses.at(index);
          const double range =
              picked ? physics::quantise_range(p.range_m + b.work.range_offset_m[beam],
                                               model.range_unit_m, model.max_range_m)
                     : 0.0;
          b.out.range_m[slot] = static_cast<float>(range);
          if (range == 0.0) {
            clear_slot(b.out, slot);
            continue;
          }
          echoes.slot[n] = slot;
          echoes.pulse[n] = index;
          echoes.transmission[n] = static_cast<float>(-2.0 * calibration_extinction * p.range_m);
          echoes.asin_ratio[n] =
              p.power_w > p.threshold_w ? std::sqrt(p.threshold_w / p.power_w) : 0.0f;
          ++n;
        }
      }
      simd::exp_each(std::span(echoes.transmission.data(), n));
      simd::asin_each(std::span(echoes.asin_ratio.data(), n));
      for (std::size_t i = 0; i < n; ++i) {
        const PulseRef p = b.work.pulses.at(echoes.pulse[i]);
        const std::size_t slot = echoes.slot[i];
        const double r = p.range_m;
        const double white_w = physics::received_power(
            c.system_constant, 1.0 / std::numbers::pi, r, echoes.transmission[i],
            std::max(physics::crossover(b.params.optics, r), kMinCalibratedOverlap));
        b.out.power_w[slot] = p.power_w;
        b.out.reflectivity[slot] = static_cast<std::uint8_t>(
            physics::estimated_reflectivity(p.power_w, white_w, p.noise_w));
        b.out.signal_photons[slot] = static_cast<std::uint16_t>(std::clamp(
            receiver.photons(p.power_w * real_w_per_unit, tau_h, wavelength), 1.0, 65535.0));
        b.out.pulse_width_ns[slot] =
            p.power_w > p.threshold_w
                ? static_cast<float>(physics::echo_pulse_width_from_asin_s(echoes.asin_ratio[i],
                                                                           tau_h, p.extent_m) *
                                     1e9)
                : 0.0f;
        b.out.object_id[slot] = p.object_id;
        b.out.kind[slot] = static_cast<std::uint8_t>(p.kind);
      }
    });
  }

 private:
  int planes_;
};

}  // namespace

std::unique_ptr<Stage> make_report(const StageSetup& setup) {
  return std::make_unique<ReportStage>(setup.return_mode);
}

}  // namespace lidaremu::core::stages
