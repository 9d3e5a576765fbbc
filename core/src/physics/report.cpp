// What leaves the chain (PHYSICS.md sections 2b, 3 and 8): the range quantised to the format's
// unit, the calibrated reflectivity drivers read (from the received power, as the sensor computes
// it), the signal, the echo pulse width and the ground truth.
#include <algorithm>
#include <array>
#include <memory>
#include <span>

#include "lidaremu/core/simd.hpp"
#include "stage_kit.hpp"

namespace lidaremu::core::stages {
namespace {

// The sensor's range-dependent gain correction is bounded: where its receiver sees almost
// nothing (the near field, a bistatic blind zone) it corrects by at most 1000x, so a return from
// there reads dark instead of dividing by zero.
constexpr double kMinCalibratedOverlap = 1e-3;

// A run's reported echoes, gathered for the vector functions, and what they derive.
struct Echoes {
  static constexpr std::size_t kCapacity = stage_kit::kDrawRun * FrameReturns::kMaxEchoes;
  std::array<std::size_t, kCapacity> slot;
  std::array<std::size_t, kCapacity> pulse;  // its index in the candidate planes
  std::array<float, kCapacity> range_m;
  std::array<float, kCapacity> range_offset_m;
  std::array<float, kCapacity> power_w;
  std::array<float, kCapacity> threshold_w;
  std::array<float, kCapacity> extent_m;
  std::array<float, kCapacity> transmission;  // -2 alpha r, then exp of it
  std::array<float, kCapacity> asin_ratio;    // asin(sqrt(T / A))
  std::array<double, kCapacity> crossover;    // bistatic optics only
  std::array<float, kCapacity> reported_range_m;
  std::array<double, kCapacity> white_w;
  std::array<std::int32_t, kCapacity> reflectivity;
  std::array<std::uint16_t, kCapacity> signal_photons;
  std::array<float, kCapacity> pulse_width_ns;
  [[nodiscard]] simd::ReportEchoes lanes(bool bistatic) {
    return {range_m.data(),          range_offset_m.data(),
            power_w.data(),          threshold_w.data(),
            extent_m.data(),         transmission.data(),
            asin_ratio.data(),       bistatic ? crossover.data() : nullptr,
            reported_range_m.data(), white_w.data(),
            reflectivity.data(),     signal_photons.data(),
            pulse_width_ns.data()};
  }
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
    const auto& receiver = b.params.receiver;
    const double wavelength = b.params.wavelength_nm;
    const bool bistatic = b.params.optics.baseline_m > 0;
    // Ouster's NEAR_IR: the ambient photons the channel collects while it listens for echoes
    // (the range gate's round trip); SIGNAL: the echo's photons over the pulse (its energy,
    // P_0 tau_H), the power taken to real watts through the detector's own noise.
    const simd::PhotonCounting near_ir{
        .seconds = 2.0 * b.params.range_gate_m / physics::kSpeedOfLight,
        .photon_energy_j = physics::photon_energy_j(wavelength),
        .quantum_efficiency = receiver.quantum_efficiency};
    simd::ReportScales scales{.range_unit_m = model.range_unit_m,
                              .max_range_m = model.max_range_m,
                              .system_constant = c.system_constant,
                              .full_overlap_m = b.params.optics.full_overlap_m,
                              .min_overlap = kMinCalibratedOverlap,
                              .pulse_half_width_s = b.params.pulse_half_width_ns * 1e-9,
                              .signal = near_ir};
    scales.signal.watts_per_unit =
        receiver.dark_noise_w(b.params.bandwidth_hz, wavelength) / std::max(c.noise_w, 1e-30);
    scales.signal.seconds = scales.pulse_half_width_s;
    scales.signal.fewest = 1;
    // A run's echoes are gathered, computed together in SIMD lanes, and written back.
    Echoes echoes;
    const simd::ReportEchoes lanes = echoes.lanes(bistatic);
    stage_kit::for_each_run(b, [&](std::size_t first, std::size_t last) {
      simd::photon_counts(std::span(b.work.ambient_w).subspan(first, last - first), near_ir,
                          std::span(b.out.near_ir).subspan(first, last - first));
      std::size_t n = 0;
      for (std::size_t beam = first; beam < last; ++beam) {
        const std::int8_t* pick = b.work.echo_pick.data() + beam * FrameReturns::kMaxEchoes;
        for (int e = 0; e < planes_; ++e) {
          const std::size_t slot = b.out.slot(beam, e);
          if (pick[e] < 0) {
            b.out.range_m[slot] = 0;
            clear_slot(b.out, slot);
            continue;
          }
          const std::size_t index = b.work.pulses.index(beam, pick[e]);
          const PulseRef p = b.work.pulses.at(index);
          echoes.slot[n] = slot;
          echoes.pulse[n] = index;
          echoes.range_m[n] = p.range_m;
          echoes.range_offset_m[n] = b.work.range_offset_m[beam];
          echoes.power_w[n] = p.power_w;
          echoes.threshold_w[n] = p.threshold_w;
          echoes.extent_m[n] = p.extent_m;
          echoes.transmission[n] = static_cast<float>(-2.0 * calibration_extinction * p.range_m);
          if (bistatic) echoes.crossover[n] = physics::crossover(b.params.optics, p.range_m);
          ++n;
        }
      }
      simd::exp_each(std::span(echoes.transmission.data(), n));
      simd::asin_root_ratio(std::span(echoes.threshold_w.data(), n),
                            std::span(echoes.power_w.data(), n),
                            std::span(echoes.asin_ratio.data(), n));
      simd::report_echoes(lanes, n, scales);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t slot = echoes.slot[i];
        b.out.range_m[slot] = echoes.reported_range_m[i];
        if (echoes.reported_range_m[i] == 0) {
          clear_slot(b.out, slot);
          continue;
        }
        const PulseRef p = b.work.pulses.at(echoes.pulse[i]);
        b.out.power_w[slot] = p.power_w;
        b.out.reflectivity[slot] = static_cast<std::uint8_t>(
            echoes.reflectivity[i] >= 0
                ? echoes.reflectivity[i]
                : physics::estimated_reflectivity(p.power_w, echoes.white_w[i], p.noise_w));
        b.out.signal_photons[slot] = echoes.signal_photons[i];
        b.out.pulse_width_ns[slot] = echoes.pulse_width_ns[i];
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
