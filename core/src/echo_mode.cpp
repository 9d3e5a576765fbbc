#include "lidaremu/core/echo_mode.hpp"

#include <array>
#include <utility>

namespace lidaremu::core {
namespace {
constexpr std::array<std::pair<std::string_view, EchoMode>, 7> kNames{{
    {"strongest", EchoMode::kStrongest},
    {"last", EchoMode::kLast},
    {"first", EchoMode::kFirst},
    {"dual", EchoMode::kDual},
    {"triple", EchoMode::kTriple},
    {"first-last", EchoMode::kFirstLast},
    {"first-strongest", EchoMode::kFirstStrongest},
}};
}  // namespace

std::string_view echo_mode_name(EchoMode echoes) {
  for (const auto& [name, mode] : kNames) {
    if (mode == echoes) return name;
  }
  return "two-strongest";
}

std::optional<EchoMode> echo_mode_named(std::string_view name) {
  for (const auto& [known, mode] : kNames) {
    if (known == name) return mode;
  }
  return std::nullopt;
}

}  // namespace lidaremu::core
