#pragma once
// Reading a user's TOML file (daemon config, material table) without letting the file hurt:
// only a regular file, only so many bytes, only so deep, each checked before toml++ sees it.
// toml++ recurses per nesting level and reads whatever stream it is handed: a key dotted 40,000
// times overflows the stack, /dev/zero exhausts memory, a FIFO blocks the caller forever.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace lidaremu::core {

// 1 MiB: a config with a hundred sensors is under 20 KB.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;
// Tables, arrays and inline tables within one another, dotted keys counted per segment. The
// project's files nest three deep.
inline constexpr int kMaxConfigDepth = 32;

// The whole file, or the reason it was refused (not a regular file, larger than `max_bytes`,
// unreadable), naming the file. Never blocks: a FIFO or a device is refused without reading.
struct ConfigText {
  std::string text;
  std::optional<std::string> error;
};
ConfigText read_config_file(const std::filesystem::path& file,
                            std::size_t max_bytes = kMaxConfigBytes);

// The first place where `text` nests deeper than `max_depth` ("LINE: ..."), if any. Strings and
// comments are skipped as TOML reads them, so a deep-looking string value is no problem.
std::optional<std::string> find_too_deep_toml(std::string_view text,
                                              int max_depth = kMaxConfigDepth);

}  // namespace lidaremu::core
