// Fuzz target: a config file's text through the loader. Every input either loads or raises
// SettingsError with its problems; anything else (another exception, a crash) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lidaremu/daemon/config/settings.hpp"

// The libFuzzer entry point keeps the name libFuzzer looks for.
// NOLINTNEXTLINE(readability-identifier-naming)
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): bytes read as text
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)lidaremu::daemon::load_config_text(text, "fuzz.toml");
  } catch (const lidaremu::daemon::SettingsError&) {
  }
  return 0;
}
