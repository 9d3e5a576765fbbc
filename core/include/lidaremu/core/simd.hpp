#pragma once
// The vector kernel's entry points: keyed random draws for runs of consecutive beams, computed in
// SIMD lanes (Google Highway, one build per instruction set, chosen at run time), and the choice of
// instruction set. Every result is the same on every instruction set the build dispatches to:
// integer Philox, IEEE add/multiply/divide/sqrt without fused multiply-add, and SLEEF's
// deterministic ("cinz") elementary functions, which return the same bits on every ISA.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lidaremu/core/counter_rng.hpp"

namespace lidaremu::core::simd {

// The instruction sets this build dispatches to and this CPU runs, best first ("AVX3", "AVX2",
// "SSE4", "SSSE3", "SCALAR" on x86-64).
std::vector<std::string> available_targets();
// The one in use.
std::string current_target();
// Uses `name` (one of available_targets(), case-insensitive) from now on, process-wide; "" or
// "best" returns to the best one. Throws std::invalid_argument naming the choices otherwise.
void use_target(std::string_view name);

// Means above this are drawn from the normal approximation N(mu, mu), rounded (the skew it drops,
// 1/sqrt(mu) < 0.25, is far below what the stages that draw such counts can show: rain's crossed
// drops only set the range jitter, as sqrt(count)).
inline constexpr float kPoissonInversionLimit = 16.0f;

// Draw `draw` of the streams of beams first_beam, first_beam + 1, ... (one per element of `out`),
// each keyed as CounterRng(key with .beam = that beam) keys it: the same Philox-4x32-10 words.
//
// Uniform in the open interval (0, 1): 2^23 values from the first word's top 23 bits.
void uniforms(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
              std::span<float> out);
// Standard normal by Box-Muller from the first two words (|z| < 5.8: tails beyond carry 7e-9).
void normals(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
             std::span<float> out);
// The same normals for scattered draws: draw draws[i] of beam beams[i], for the stages that need
// a draw for only some beams (writes the smallest of the three sizes).
void normals_at(const DrawKey& key, std::span<const std::uint32_t> beams,
                std::span<const std::uint32_t> draws, std::span<float> out);
// Poisson(means[i]) by inversion of the CDF from the first word's uniform below
// kPoissonInversionLimit, above it the normal approximation from the same words as normals(); 0
// for a mean that is not positive (NaN included). Writes min(means.size(), out.size()) counts.
void poissons(const DrawKey& key, std::uint32_t first_beam, std::uint32_t draw,
              std::span<const float> means, std::span<std::uint32_t> out);

// In place, element by element: SLEEF's exp and asin (1 ulp; the same bits on every target).
void exp_each(std::span<float> x);
void asin_each(std::span<float> x);
// out[i] = atan2(y[i], x[i]) in double (SLEEF, 1 ulp, the same bits on every target), for the
// first min of the three sizes.
void atan2_each(std::span<const double> y, std::span<const double> x, std::span<double> out);

}  // namespace lidaremu::core::simd
