#include "lidaremu/core/return_mode.hpp"

#include <array>
#include <utility>

namespace lidaremu::core {
namespace {
constexpr std::array<std::pair<std::string_view, ReturnMode>, 7> kNames{{
    {"strongest", ReturnMode::kStrongest},
    {"last", ReturnMode::kLast},
    {"first", ReturnMode::kFirst},
    {"dual", ReturnMode::kDual},
    {"triple", ReturnMode::kTriple},
    {"first-last", ReturnMode::kFirstLast},
    {"first-strongest", ReturnMode::kFirstStrongest},
}};
}  // namespace

std::string_view return_mode_name(ReturnMode echoes) {
  for (const auto& [name, mode] : kNames) {
    if (mode == echoes) return name;
  }
  return "two-strongest";
}

std::optional<ReturnMode> return_mode_named(std::string_view name) {
  for (const auto& [known, mode] : kNames) {
    if (known == name) return mode;
  }
  return std::nullopt;
}

}  // namespace lidaremu::core
