#pragma once
// lidaremud's command line, produced from the settings schema: every row with a flag is an
// option, and one rule holds for a flag given with --config:
//  - a [daemon] flag overrides the file's value, and the daemon says so at start;
//  - a [[sensor]] flag is refused, naming the flag, the file and the key to set there instead
//    (a file may hold many sensors: which one a flag meant cannot be guessed).
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "lidaremu/daemon/config/settings.hpp"

namespace lidaremu::daemon {

constexpr int kExitUsage = 2;
constexpr int kExitConfig = 3;

struct CommandLine {
  DaemonSettings settings;
  std::filesystem::path config;    // empty: one sensor from flags
  std::vector<std::string> notes;  // what the daemon says at start: flags that override the file
  bool check_only = false;         // --check: settings read and checked, nothing started
};

// Reads argv into `out`. Nothing when the daemon should start; otherwise the exit code, with
// what was asked printed on `out_text` (--help, --reference) or the problem on `err`.
std::optional<int> read_command_line(int argc, const char* const* argv,
                                     const std::filesystem::path& default_materials,
                                     CommandLine& out, std::ostream& out_text, std::ostream& err);

}  // namespace lidaremu::daemon
