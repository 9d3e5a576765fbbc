#pragma once
// The physics stages by name: one row per stage (its PHYSICS.md section, what it reads and
// writes, how to build it), in the order a chain runs them. A chain is a list of names, from the
// config's `physics_stages` or from a preset; it is checked when it is built.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lidaremu/core/physics/stage.hpp"

namespace lidaremu::core {

struct StageRow {
  std::string_view name;
  std::string_view section;  // PHYSICS.md section
  // Stages of one role exclude each other (one surface model, one detector); empty: none.
  std::string_view role;
  std::uint32_t reads;
  std::uint32_t writes;
  bool whole_frame;  // sees every beam of the frame at once (blooming needs neighbours)
  std::unique_ptr<Stage> (*make)(const StageSetup&);
  std::string_view summary;
};

// Every stage, in the order a chain runs them.
std::span<const StageRow> stage_registry();
const StageRow* find_stage(std::string_view name);

// The presets of `--physics`: the realistic chain, and the ideal one (no noise, no loss, no
// random effect: what the engine sent comes back, quantised).
enum class PhysicsMode : std::uint8_t { kIdeal, kDefault };
std::vector<std::string> stage_chain(PhysicsMode mode);

// Puts `name` into the chain at its place, replacing the stage of the same role (surface.ipsp
// for surface.brdf); without a role, adds it if absent. Throws std::invalid_argument for an
// unknown name.
void use_stage(std::vector<std::string>& chain, std::string_view name);
// Removes `name` from the chain (nothing if absent).
void drop_stage(std::vector<std::string>& chain, std::string_view name);

// Checks a chain: every name known, in the registry's order, at most one stage per role, every
// stage's inputs written by an earlier one, ending with a report. Throws std::invalid_argument
// with a message a user can act on; returns the rows otherwise.
std::vector<const StageRow*> check_chain(std::span<const std::string> chain);

}  // namespace lidaremu::core
