#pragma once
// The pipeline and an encoder run on the demo scene, for the tests that check what comes out:
// test_pipeline (threads, ideal physics, round trips), test_packet_layouts (echo layouts) and
// test_streaming (the same returns whatever the steps).
#include <cstdint>
#include <span>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::test {

// Every packet an encoder sends, in order, with its channel and time.
class CollectingSink final : public core::PacketSink {
 public:
  struct Packet {
    core::PacketChannel channel;
    std::vector<std::uint8_t> bytes;
    double time_s;
  };
  std::vector<Packet> packets;
  void on_packet(core::PacketChannel channel, std::span<const std::uint8_t> bytes,
                 double t) override {
    packets.push_back({channel, {bytes.begin(), bytes.end()}, t});
  }
  [[nodiscard]] std::vector<Packet> data() const;
};

// The model at 600 rpm, or an Ouster model at 1024x10.
core::ScanPattern pattern_for(const char* name);
// One frame of the demo scene's hits, numbered `number`.
core::FrameHits scene_frame(const core::ScanPattern& pattern, std::uint32_t number);
core::PipelineSettings settings_for(const core::ScanPattern& pattern, core::PhysicsMode mode,
                                    std::uint64_t seed);
// `frames` demo frames through the pipeline (seed 1234) and the model's strongest-return encoder
// on `threads` worker threads; the last frame's returns in `last` when given.
std::vector<CollectingSink::Packet> run(const char* model, core::PhysicsMode mode, int threads,
                                        int frames, core::FrameReturns* last = nullptr);

// Every output array of the two the same (REQUIREd: the first difference stops the test).
void require_same_returns(const core::FrameReturns& a, const core::FrameReturns& b);

}  // namespace lidaremu::test
