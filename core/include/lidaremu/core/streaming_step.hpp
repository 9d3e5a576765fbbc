#pragma once
// How many columns a frame streamed into the physics takes a step (Pipeline::advance), as the
// daemon runs it and the benchmarks measure it.
#include <algorithm>
#include <cstdint>

#include "lidaremu/core/frame.hpp"

namespace lidaremu::core {

// An eighth of the frame, 8,192 to 32,768 beams. Each step is a fork and a join, and between
// steps the workers idle (spinning, then asleep, then woken): 32 steps an OS1-128 frame cost
// 7-14 % of its physics' CPU against 8. Larger ones leave more of the frame to do after its last
// datagram: a VLP-16 frame in one step, at the end, made a vehicle's frames late (1,122-1,125 of
// 1,136 out against all of them). docs/performance.md, "Fewer, larger steps".
inline std::uint32_t streaming_step_columns(FrameShape shape) {
  const std::uint32_t channels = std::max<std::uint32_t>(1, shape.channels);
  const std::uint32_t eighth = shape.columns / 8;
  const std::uint32_t fewest = std::max<std::uint32_t>(1, 8192 / channels);
  const std::uint32_t most = std::max<std::uint32_t>(1, 32768 / channels);
  return std::clamp(eighth, fewest, most);
}

}  // namespace lidaremu::core
