#pragma once
// The demo scene seen by one frame of a scan pattern through the ideal physics chain: what the
// encoder tests of every family feed their encoder and compare the decoded points with.
#include <vector>

#include "cloud_match.hpp"
#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/sensor_model.hpp"

namespace lidaremu::test {

// The hits the engine sent and the returns the encoder gets.
struct DemoFrame {
  std::vector<XYZ> hits;
  std::vector<XYZ> hit_by_beam;  // every beam, a miss at the origin
  core::FrameReturns returns;
};

// `frame`: the frame number (a table scan's beams point elsewhere in every frame).
DemoFrame demo_frame(const core::ScanPattern& pattern, core::ReturnMode echoes,
                     std::uint32_t frame = 0);

}  // namespace lidaremu::test
