#include "spinning_optics.hpp"

namespace lidaremu::core {

// The 905 nm spinning heads share their optics (the Velodyne manuals' figures; the Hesai,
// RoboSense and Livox rows take them where their own datasheets are silent, and say so): manuals
// give divergence 3.0 mrad horizontal x 1.5 mrad vertical (half-angle 1.06 mrad, their geometric
// mean; aspect 2, which shapes the blooming kernel's core) and an exit spot of 12.7 x 9.5 mm;
// accuracy +/-3 cm "typical", with no conditions and no SNR curve: taken as 1 sigma for a 10 %
// target within a quarter of the datasheet range (dR = 0.30 m in sigma = dR / sqrt(2 SNR); 1.5 cm
// for strong echoes). Datasheets say "range up to R m" with neither reflectivity nor probability:
// taken as 10 % at 50 % detection, the edge of reach (the median point of the detection curve;
// "up to" promises no assured detection, unlike Ouster's 90 %). No
// datasheet gives the receiver's overlap: 20 m is a representative full-overlap range (PHYSICS.md
// 2b crossover) that keeps drizzle from blinding the sensor, as it does not blind real ones.
//
// Receiver: an APD behind a 25 mm lens and a 25 nm filter, each channel seeing 1.5 times the beam's
// full angle (3.2 mrad). The APD's input-referred NEP of 50 fW/sqrt(Hz) (automotive APD
// receivers: tens to hundreds of fW/sqrt(Hz)), excess noise factor 3 and quantum efficiency 0.8
// put the ambient power whose shot noise equals the detector's noise at NEP^2 QE / (2 h nu F) =
// 1.5 nW: full sun on a 10 % target facing it raises the noise 1.4 times.
SensorOptics spinning_head_optics(double datasheet_range_m) {
  return SensorOptics{.datasheet_range_m = datasheet_range_m,
                      .datasheet_reflectivity = 0.10,
                      .beam_exit_radius_m = 0.0055,
                      .beam_divergence_rad = 0.00106,
                      .beam_aspect = 2.0,
                      .range_noise_sigma_m = 0.015,
                      .range_noise_pulse_m = 0.30,
                      .full_overlap_m = 20,
                      .rx_aperture_m = 0.025,
                      .rx_fov_rad = 0.0032,
                      .optical_filter_nm = 25,
                      .ambient_knee_w = 1.5e-9};
}

}  // namespace lidaremu::core
