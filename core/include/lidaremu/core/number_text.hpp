#pragma once
// Numbers as calibration files write them.
#include <array>
#include <charconv>
#include <string>

namespace lidaremu::core {

// The shortest decimal text that reads back as the same double: a calibration file's own digits
// come back as they were ("-0.047500" as "-0.0475", 15 as "15").
inline std::string shortest_decimal(double value) {
  std::array<char, 32> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  return {text.data(), end};
}

}  // namespace lidaremu::core
