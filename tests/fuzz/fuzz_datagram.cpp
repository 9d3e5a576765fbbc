// Fuzz target: one datagram through every decoder the daemon's input runs, in its order
// (identify, verify and decode a HitBatch, check its shape, store it into a frame; decode a
// Control; store raw 7- and 8-float rows), for a VLP-16 and an OS1-64.
#include <cstddef>
#include <cstdint>
#include <span>

#include "lidaremu/core/materials.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "lidaremu/protocol/engine_frame.hpp"
#include "lidaremu/protocol/raw_rows.hpp"
#include "lidaremu/protocol/wire_decode.hpp"

namespace {
using namespace lidaremu;

struct Target {
  core::ScanPattern pattern;
  core::BeamGeometry geometry;
  core::FrameHits frame;
  explicit Target(const core::ScanPattern& p) : pattern(p), geometry(p) {
    frame.reshape({static_cast<std::uint32_t>(p.columns_per_frame),
                   static_cast<std::uint16_t>(p.model->channels)},
                  {3, 4});
    frame.clear(0);
  }
};

const core::MaterialTable& materials() {
  static const auto table = core::MaterialTable::load(LIDAREMU_FUZZ_MATERIALS);
  return table;
}

void run(Target& t, std::span<const std::uint8_t> datagram) {
  const auto engine = *protocol::engine_conventions("unreal");
  switch (protocol::identify(datagram)) {
    case protocol::MessageKind::kHitBatch: {
      protocol::BatchView batch;
      if (protocol::decode_hit_batch(datagram, batch) != protocol::BatchError::kNone) return;
      if (protocol::check_batch_shape(batch, t.frame.shape.columns, t.frame.shape.channels) !=
          protocol::BatchError::kNone) {
        return;
      }
      protocol::store_batch(batch, engine, materials(), t.frame);
      return;
    }
    case protocol::MessageKind::kControl: {
      protocol::ControlView control;
      (void)protocol::decode_control(datagram, control);
      return;
    }
    case protocol::MessageKind::kUnknown:
      break;
  }
  for (const int floats : {7, 8}) {
    for (const core::HitLayout layout : {core::HitLayout{1, 1}, core::HitLayout{3, 2}}) {
      protocol::RawRowAssembler raw(t.geometry, floats, layout);
      if (raw.check(datagram) != protocol::BatchError::kNone) continue;
      core::FrameHits* frame = &t.frame;
      raw.store(datagram, engine, materials(), frame, [&] { t.frame.clear(1); });
    }
  }
}
}  // namespace

// The libFuzzer entry point keeps the name libFuzzer looks for.
// NOLINTNEXTLINE(readability-identifier-naming)
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Target velodyne(*core::make_rpm_scan(*core::find_sensor_model("vlp16"), 600).pattern);
  static Target ouster(
      *core::make_ouster_scan(*core::find_sensor_model("os1-64"), 512, 10).pattern);
  const std::span<const std::uint8_t> datagram(data, size);
  run(velodyne, datagram);
  run(ouster, datagram);
  return 0;
}
