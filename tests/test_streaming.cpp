// Frames streamed in columns: the pipeline runs each stage on columns as they arrive (blooming
// once a column's neighbours are in) and the encoders send each packet once its columns are
// final. Whatever the steps, the returns and the packets are the bytes a whole frame gives; the
// columns not yet received are never read.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "daemon_process.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "pipeline_run.hpp"

using namespace lidaremu;
using namespace lidaremu::core;

namespace {

struct Case {
  const char* name;
  const char* model;
  double rain_mm_per_h = 0;
  int columns = 0;  // Ouster: columns per frame; Velodyne: 0 (600 rpm)
  int rays = 1;
  PhysicsMode mode = PhysicsMode::kDefault;
  bool all_retroreflective = false;  // every surface blooms
  ReturnMode return_mode = ReturnMode::kStrongest;
  OusterProfile profile = OusterProfile::kLegacy;
};

ScanPattern pattern_of(const Case& c) {
  const SensorModel& m = *find_sensor_model(c.model);
  return rpm_driven(m) ? *make_rpm_scan(m, 600).pattern
                       : *make_ouster_scan(m, c.columns, 10).pattern;
}

FrameHits render(const Case& c, const ScanPattern& pattern) {
  std::vector<float> rows;
  std::vector<std::uint32_t> ids;
  clients::DemoScene().render(BeamGeometry(pattern), rows, &ids, c.rays);
  FrameHits f;
  f.reshape({static_cast<std::uint32_t>(pattern.columns_per_frame),
             static_cast<std::uint16_t>(pattern.model->channels)},
            {static_cast<std::uint8_t>(c.rays), 1});
  f.clear(5);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const float* r = &rows[i * 7];
    f.x[i] = r[0], f.y[i] = r[1], f.z[i] = r[2], f.nx[i] = r[3], f.ny[i] = r[4], f.nz[i] = r[5];
    f.material[i] = static_cast<std::uint16_t>(r[6]);
    if (c.all_retroreflective && f.material[i] != 0) {
      f.material[i] = clients::material::kRetroreflector;
    }
    f.object_id[i] = ids[i];
  }
  f.columns_received = f.shape.columns;
  f.weather.rain_mm_per_h = c.rain_mm_per_h;
  return f;
}

// Columns [begin, end) of `from` into `to`, as the input thread stores a batch.
void copy_columns(const FrameHits& from, FrameHits& to, std::uint32_t begin, std::uint32_t end) {
  const std::size_t per_column = std::size_t{from.shape.channels} * from.layout.hits_per_beam();
  const auto first = static_cast<std::ptrdiff_t>(begin * per_column);
  const auto last = static_cast<std::ptrdiff_t>(end * per_column);
  const auto copy = [&](const auto& src, auto& dst) {
    std::copy(src.begin() + first, src.begin() + last, dst.begin() + first);
  };
  copy(from.x, to.x), copy(from.y, to.y), copy(from.z, to.z);
  copy(from.nx, to.nx), copy(from.ny, to.ny), copy(from.nz, to.nz);
  copy(from.angle_deg, to.angle_deg), copy(from.material, to.material);
  copy(from.object_id, to.object_id);
}

class CollectingSink final : public PacketSink {
 public:
  std::vector<std::vector<std::uint8_t>> packets;
  void on_packet(PacketChannel /*channel*/, std::span<const std::uint8_t> bytes,
                 double /*t*/) override {
    packets.emplace_back(bytes.begin(), bytes.end());
  }
};

PipelineSettings settings_of(const Case& c, const ScanPattern& pattern) {
  PipelineSettings s;
  s.stages = stage_chain(c.mode);
  s.params = default_physics_params(*pattern.model);
  s.return_mode = c.return_mode;
  s.seed = 42;
  return s;
}

std::unique_ptr<Encoder> encoder_of(const Case& c, const ScanPattern& pattern) {
  OusterOutput output;
  output.profile = c.profile;
  return make_encoder(pattern, {992200000001ull, 0x123456}, c.return_mode, output);
}

const Case kCases[] = {
    {.name = "VLP-16, default chain, rain", .model = "vlp16", .rain_mm_per_h = 10},
    {.name = "OS1-64 1024x10, default chain", .model = "os1-64", .columns = 1024},
    {.name = "OS1-32 512x10, every surface blooms, 5 rays, rain, two echoes",
     .model = "os1-32",
     .rain_mm_per_h = 25,
     .columns = 512,
     .rays = 5,
     .all_retroreflective = true,
     .return_mode = ReturnMode::kTwoStrongest,
     .profile = OusterProfile::kRng19Dual},
    {.name = "VLS-128 dual, every surface blooms",
     .model = "vls128",
     .all_retroreflective = true,
     .return_mode = ReturnMode::kDual},
    {.name = "OS1-128 1024x10, ideal (no frame stage)",
     .model = "os1-128",
     .columns = 1024,
     .mode = PhysicsMode::kIdeal},
};

}  // namespace

TEST_CASE("A frame streamed in steps of any size gives the whole frame's returns and packets",
          "[pipeline][streaming][determinism]") {
  const auto materials = MaterialTable::load(test::materials_path());
  std::mt19937 steps(7);
  for (const Case& c : kCases) {
    INFO(c.name);
    const ScanPattern pattern = pattern_of(c);
    const FrameHits whole = render(c, pattern);
    const auto columns = whole.shape.columns;

    // The reference: every stage on the whole frame at once.
    Pipeline reference(pattern, materials, settings_of(c, pattern));
    FrameReturns expected;
    reference.process_stages(0, reference.stage_names().size(), whole, expected);
    CollectingSink expected_packets;
    encoder_of(c, pattern)->encode_frame(expected, 1000.0, expected_packets);

    // Streamed: columns arrive in uneven steps; those not yet received hold nothing (a stage
    // reading ahead would see it), and the encoder sends what advance says is final.
    Pipeline streamed(pattern, materials, settings_of(c, pattern));
    FrameHits arriving;
    arriving.reshape(whole.shape, whole.layout);
    arriving.clear(whole.frame_number);
    arriving.weather = whole.weather;
    FrameReturns got;
    auto encoder = encoder_of(c, pattern);
    CollectingSink got_packets;
    streamed.begin_frame(arriving, got);
    const bool has_frame_stage = c.mode == PhysicsMode::kDefault;
    std::uint32_t received = 0;
    std::uint32_t advances = 0;
    while (received < columns) {
      const std::uint32_t step = std::uniform_int_distribution<std::uint32_t>(1, 97)(steps);
      const std::uint32_t next = std::min(columns, received + step);
      copy_columns(whole, arriving, received, next);
      received = next;
      const std::uint32_t final_columns = streamed.advance(arriving, received, got);
      ++advances;
      // Blooming reads round the seam: nothing is final before the frame is in. Without a
      // frame stage every received column is.
      CHECK(final_columns == (has_frame_stage && received < columns ? 0 : received));
      encoder->encode_columns(got, 1000.0, final_columns, got_packets);
    }
    REQUIRE(advances > 5);
    test::require_same_returns(got, expected);
    REQUIRE(got_packets.packets == expected_packets.packets);
    // A finished frame is left alone.
    CHECK(streamed.advance(arriving, columns, got) == columns);
  }
}

TEST_CASE("Streamed blooming reaches across the seam: the first columns bloom from the last",
          "[pipeline][streaming]") {
  // Retroreflectors only in the frame's last four columns: whatever blooms in its first columns
  // came round the seam, which a streamed frame can only do once the frame is in.
  const auto materials = MaterialTable::load(test::materials_path());
  const Case& c = kCases[2];
  const ScanPattern pattern = pattern_of(c);
  const FrameHits scene = render(c, pattern);
  FrameHits tail_only;
  tail_only.reshape(scene.shape, scene.layout);
  tail_only.clear(scene.frame_number);
  copy_columns(scene, tail_only, scene.shape.columns - 4, scene.shape.columns);
  const auto blooms_in_column = [&](const FrameReturns& r, std::uint32_t column) {
    std::size_t n = 0;
    for (std::uint16_t ch = 0; ch < r.shape.channels; ++ch) {
      for (int echo = 0; echo < 2; ++echo) {
        n += r.kind[r.slot(r.shape.beam(column, ch), echo)] ==
             static_cast<std::uint8_t>(ReturnKind::kBloom);
      }
    }
    return n;
  };
  Pipeline pipeline(pattern, materials, settings_of(c, pattern));
  FrameReturns returns;
  pipeline.begin_frame(tail_only, returns);
  for (std::uint32_t received = 64; received < scene.shape.columns; received += 64) {
    CHECK(pipeline.advance(tail_only, received, returns) == 0);
  }
  CHECK(pipeline.advance(tail_only, scene.shape.columns, returns) == scene.shape.columns);
  CHECK(blooms_in_column(returns, 0) > 0);
  CHECK(blooms_in_column(returns, scene.shape.columns / 2) == 0);
}
