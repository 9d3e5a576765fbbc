#pragma once
// Where a batch's frame number stands against the frame being assembled (or the last one handed
// on). Engines number frames themselves: the counter wraps, restarts when the simulation does,
// and a single stray datagram can carry any number. Only late batches of recent frames are
// refused; anything else far from the current numbering starts a new sequence, counted and
// logged, so neither a restart nor a stray number can silence a sensor.
#include <cstdint>

namespace lidaremu::daemon {

// Late batches of the last kStaleWindow frames are stale (their frame was handed on).
inline constexpr std::uint32_t kStaleWindow = 8;
// A frame up to kAheadWindow ahead continues the sequence (the engine skipped a few); further
// ahead, or further behind than kStaleWindow, the engine renumbered: a new sequence.
inline constexpr std::uint32_t kAheadWindow = 64;

enum class FrameOrder : std::uint8_t { kSame, kNext, kStale, kResequence };

inline FrameOrder frame_order(std::uint32_t incoming, std::uint32_t reference) {
  if (incoming == reference) return FrameOrder::kSame;
  const std::uint32_t ahead = incoming - reference;  // modulo 2^32: the counter wraps
  if (ahead <= kAheadWindow) return FrameOrder::kNext;
  const std::uint32_t behind = reference - incoming;
  if (behind <= kStaleWindow) return FrameOrder::kStale;
  return FrameOrder::kResequence;
}

}  // namespace lidaremu::daemon
