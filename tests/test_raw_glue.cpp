// Raw mode (seed 000's glue) against the framed form of the same rays: several rays per beam
// (raw7), multi-bounce paths with their angle (raw8), a model whose lasers leave from offsets
// (HDL-64E). The same rows and seed give the same hits, and the same packet bytes.
#include <catch2/catch.hpp>
#include <limits>

#include "daemon_process.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/protocol/raw_rows.hpp"
#include "lidaremu/protocol/wire_decode.hpp"

using namespace lidaremu;

namespace {

constexpr std::uint32_t kFrame = 7;
constexpr std::uint16_t kConcrete = 8;

struct Glue {
  core::ScanPattern pattern;
  core::HitLayout layout;
  int floats;
  std::vector<float> rows;  // one frame, scan order: column, channel, ray, segment
};

// The demo scene with `rays` rays per beam, as 7-float rows.
Glue demo_rays(const char* model, int rays) {
  Glue g{clients::scan_for(model, 0, ""), {static_cast<std::uint8_t>(rays), 1}, 7, {}};
  clients::DemoScene().render(core::BeamGeometry(g.pattern), g.rows, nullptr, rays);
  return g;
}

// The demo scene as two-segment paths (8-float rows): where a beam meets the car's metal, its
// path goes on, mirrored, to a concrete wall 5 m further, with the angle seed 000 defines
// (between p_1 - p_0 and p_0 - origin, degrees); elsewhere the second segment is padding.
Glue demo_paths(const char* model) {
  Glue g{clients::scan_for(model, 0, ""), {1, 2}, 8, {}};
  std::vector<float> hits;
  clients::DemoScene().render(core::BeamGeometry(g.pattern), hits);
  std::size_t mirrors = 0;
  for (std::size_t i = 0; i < hits.size() / 7; ++i) {
    const float* h = &hits[i * 7];
    g.rows.insert(g.rows.end(), h, h + 7);
    g.rows.push_back(0.0f);
    const Eigen::Vector3d p(h[0], h[1], h[2]), n(h[3], h[4], h[5]);
    const bool metal = h[6] == clients::material::kOpaqueMetal;
    if (!metal) {
      g.rows.insert(g.rows.end(), {0, 0, 0, 0, 0, 1, 0, 0});
      continue;
    }
    ++mirrors;
    const Eigen::Vector3d in = p.normalized();
    const Eigen::Vector3d out = in - 2 * in.dot(n) * n;
    const Eigen::Vector3d wall = p + 5.0 * out;
    const auto angle = static_cast<float>(
        std::acos(std::clamp(wall.normalized().dot(in), -1.0, 1.0)) * 180 / std::numbers::pi);
    g.rows.insert(g.rows.end(), {float(wall.x()), float(wall.y()), float(wall.z()), float(-out.x()),
                                 float(-out.y()), float(-out.z()), float(kConcrete), angle});
  }
  REQUIRE(mirrors > 20);
  return g;
}

core::FrameHits empty_frame(const Glue& g) {
  core::FrameHits f;
  f.reshape({static_cast<std::uint32_t>(g.pattern.columns_per_frame),
             static_cast<std::uint16_t>(g.pattern.model->channels)},
            g.layout);
  f.clear(kFrame);
  return f;
}

const core::MaterialTable& materials() {
  static const auto table = core::MaterialTable::load(test::materials_path());
  return table;
}

core::FrameHits framed(const Glue& g) {
  core::FrameHits f = empty_frame(g);
  clients::BatchHeader h{.frame = kFrame,
                         .column_count = static_cast<std::uint32_t>(g.pattern.columns_per_frame),
                         .rays_per_beam = g.layout.rays_per_beam,
                         .segments_per_path = g.layout.segments_per_path,
                         .floats_per_row = static_cast<std::uint8_t>(g.floats)};
  const auto engine = *protocol::engine_conventions("ros");
  for (const auto& datagram : clients::build_frame_batches(
           h, static_cast<std::uint16_t>(g.pattern.model->channels), g.rows, 100000)) {
    protocol::BatchView view;
    REQUIRE(protocol::decode_hit_batch(datagram, view) == protocol::BatchError::kNone);
    protocol::store_batch(view, engine, materials(), f);
  }
  return f;
}

core::FrameHits raw(const Glue& g, std::size_t* datagrams) {
  core::FrameHits f = empty_frame(g);
  core::FrameHits* current = &f;
  const core::BeamGeometry geometry(g.pattern);
  protocol::RawRowAssembler assembler(geometry, g.floats, g.layout);
  const std::size_t floats_per_column =
      std::size_t(g.pattern.model->channels) * g.layout.hits_per_beam() * g.floats;
  const auto engine = *protocol::engine_conventions("ros");
  int wraps = 0;
  *datagrams = 0;
  for (const auto& part : clients::raw_datagrams(g.rows, floats_per_column)) {
    REQUIRE(assembler.check(part.bytes) == protocol::BatchError::kNone);
    assembler.store(part.bytes, engine, materials(), current, [&] { ++wraps; });
    ++*datagrams;
  }
  CHECK(wraps == 0);  // one frame sent, one frame assembled
  return f;
}

std::vector<std::vector<std::uint8_t>> packets_of(const Glue& g, const core::FrameHits& hits) {
  core::PipelineSettings s;
  s.params = core::default_physics_params(*g.pattern.model);
  s.seed = 99;
  core::Pipeline pipeline(g.pattern, materials(), s);
  core::FrameReturns out;
  pipeline.process(hits, out);
  struct Sink final : core::PacketSink {
    std::vector<std::vector<std::uint8_t>> packets;
    void on_packet(core::PacketChannel, std::span<const std::uint8_t> b, double) override {
      packets.emplace_back(b.begin(), b.end());
    }
  } sink;
  auto encoder = core::make_encoder(g.pattern, {992200000001ull, 0x123456});
  encoder->encode_frame(out, 1000.0, sink);
  return sink.packets;
}

void same_hits_same_packets(const Glue& g) {
  std::size_t datagrams = 0;
  const core::FrameHits a = framed(g);
  const core::FrameHits b = raw(g, &datagrams);
  INFO(g.pattern.model->name << ": " << datagrams << " raw datagrams");
  CHECK(b.columns_received == a.columns_received);
  CHECK(a.columns_received == a.shape.columns);
  CHECK(b.material == a.material);
  // The hits: the slots with a material (a slot without one is no hit, whatever its planes hold:
  // framed one-hit rows leave a refused row's conversion there, raw rows leave the slot alone).
  std::size_t unlike = 0;
  for (std::size_t i = 0; i < a.material.size() && i < b.material.size(); ++i) {
    if (a.material[i] == 0) continue;
    const bool same = b.x[i] == a.x[i] && b.y[i] == a.y[i] && b.z[i] == a.z[i] &&
                      b.nz[i] == a.nz[i] && b.angle_deg[i] == a.angle_deg[i];
    if (!same && unlike++ == 0) {
      UNSCOPED_INFO("hit " << i << ": raw (" << b.x[i] << ", " << b.y[i] << ", " << b.z[i]
                           << "), framed (" << a.x[i] << ", " << a.y[i] << ", " << a.z[i] << ")");
    }
  }
  CHECK(unlike == 0);
  const auto pa = packets_of(g, a);
  const auto pb = packets_of(g, b);
  CHECK(pa.size() > 10);
  CHECK(pb == pa);
}

}  // namespace

TEST_CASE("raw7 with five rays per beam: the same packets as the framed rays", "[protocol][raw]") {
  same_hits_same_packets(demo_rays("vlp16", 5));
  same_hits_same_packets(demo_rays("os1-64", 5));
}

TEST_CASE("raw8 paths with their angle: the same ghosts as the framed paths", "[protocol][raw]") {
  const Glue g = demo_paths("vlp16");
  same_hits_same_packets(g);
  // The ghosts are there: the raw frame's chain reports points behind the metal.
  std::size_t datagrams = 0;
  core::PipelineSettings s;
  s.params = core::default_physics_params(*g.pattern.model);
  core::Pipeline pipeline(g.pattern, materials(), s);
  core::FrameReturns out;
  pipeline.process(raw(g, &datagrams), out);
  std::size_t ghosts = 0;
  for (const auto k : out.kind) ghosts += k == static_cast<std::uint8_t>(core::ReturnKind::kGhost);
  CHECK(ghosts > 10);
}

TEST_CASE("raw7 on an HDL-64E (lasers with offsets): one frame, the framed packets",
          "[protocol][raw]") {
  same_hits_same_packets(demo_rays("hdl64e", 1));
  same_hits_same_packets(demo_rays("vls128", 1));
}

TEST_CASE("raw rows must come in whole beams", "[protocol][raw][hostile]") {
  const Glue g = demo_rays("vlp16", 5);
  const core::BeamGeometry geometry(g.pattern);
  protocol::RawRowAssembler assembler(geometry, 7, g.layout);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): float rows viewed as bytes
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(g.rows.data());
  constexpr std::size_t kRowBytes = 7 * sizeof(float);
  CHECK(assembler.check({bytes, kRowBytes * 5}) == protocol::BatchError::kNone);
  CHECK(assembler.check({bytes, kRowBytes * 4}) == protocol::BatchError::kRawNotWholeBeams);
  CHECK(assembler.check({bytes, kRowBytes * 5 + 3}) == protocol::BatchError::kRawSizeNotRows);
  CHECK(protocol::to_string(protocol::BatchError::kRawNotWholeBeams) == "raw_not_whole_beams");
}

TEST_CASE("The raw rows' memory estimate holds a datagram's rows and what is kept of them",
          "[protocol][raw][memory]") {
  // The largest UDP payload as rows, copied once and converted into eight or so arrays of the
  // same count: more than the datagram, a handful of times it at most, whatever the layout.
  for (const int floats : {7, 8}) {
    for (const core::HitLayout layout : {core::HitLayout{1, 1}, core::HitLayout{5, 1},
                                         core::HitLayout{12, 16}, core::HitLayout{0, 200}}) {
      const std::size_t bytes = protocol::RawRowAssembler::bytes_for(floats, layout);
      CHECK(bytes > protocol::kMaxDatagram);
      CHECK(bytes < 6 * protocol::kMaxDatagram);
    }
  }
}

TEST_CASE("A beam across the seam of the turn does not split the frame again",
          "[protocol][raw][hostile]") {
  // The audit: raw rows at column 0 split frames. A beam of the turn's last column that arrives
  // among the first column's (its azimuth a hair under 360 degrees: a laser offset, a float
  // rounding, an engine's jitter) read as a step back of a whole turn, and the next column-0
  // beam as yet another wrap: the frame was cut after one column. Only a step forward across
  // the seam is a new turn.
  const Glue g = demo_rays("vlp16", 1);
  const core::BeamGeometry geometry(g.pattern);
  const auto columns = static_cast<std::size_t>(g.pattern.columns_per_frame);
  constexpr std::size_t kChannels = 16;
  const auto beam_at = [&](std::size_t column) {
    for (std::size_t ch = 0; ch < kChannels; ++ch) {
      const float* row = &g.rows[(column * kChannels + ch) * 7];
      if (row[6] != 0) return std::vector<float>(row, row + 7);
    }
    FAIL("no hit in column " << column);
    return std::vector<float>();
  };
  std::vector<float> stream;
  for (const std::size_t column : {columns - 2, columns - 1, std::size_t{0}, columns - 1,
                                   std::size_t{0}, std::size_t{1}, columns - 1, std::size_t{2}}) {
    const auto beam = beam_at(column);
    stream.insert(stream.end(), beam.begin(), beam.end());
  }
  protocol::RawRowAssembler assembler(geometry, 7, g.layout);
  core::FrameHits frame = empty_frame(g);
  core::FrameHits* current = &frame;
  int wraps = 0;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): float rows viewed as bytes
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(stream.data());
  const auto engine = *protocol::engine_conventions("ros");
  assembler.store({bytes, stream.size() * sizeof(float)}, engine, materials(), current,
                  [&] { ++wraps; });
  CHECK(wraps == 1);  // the turn ended once, at the first column-0 beam
}

TEST_CASE("Raw rows stream: a beam of a column the physics may have taken is refused as late",
          "[protocol][raw][hostile]") {
  // The daemon streams a raw frame into the physics up to a couple of columns behind the
  // furthest column the engine has reached (complete_columns, then seal_below); a beam of an
  // earlier column can no longer be stored (its column may be in the physics), so it is
  // refused and counted, never written.
  const Glue g = demo_rays("vlp16", 1);
  const core::BeamGeometry geometry(g.pattern);
  constexpr std::size_t kChannels = 16;
  const auto beams_of = [&](std::size_t first_column, std::size_t last_column) {
    std::vector<float> rows;
    for (std::size_t c = first_column; c <= last_column; ++c) {
      for (std::size_t ch = 0; ch < kChannels; ++ch) {
        const float* row = &g.rows[(c * kChannels + ch) * 7];
        if (row[6] != 0) rows.insert(rows.end(), row, row + 7);
      }
    }
    return rows;
  };
  protocol::RawRowAssembler assembler(geometry, 7, g.layout);
  core::FrameHits frame = empty_frame(g);
  core::FrameHits* current = &frame;
  const auto engine = *protocol::engine_conventions("ros");
  const auto send = [&](const std::vector<float>& rows) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): float rows viewed as bytes
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(rows.data());
    return assembler.store({bytes, rows.size() * sizeof(float)}, engine, materials(), current,
                           [] { FAIL("no new turn here"); });
  };
  const auto in_order = beams_of(100, 109);
  CHECK(send(in_order).stored == in_order.size() / 7);
  CHECK(assembler.complete_columns() == 108);  // columns 108 and 109 still open
  assembler.seal_below(assembler.complete_columns());
  const auto early = beams_of(105, 105);
  REQUIRE(!early.empty());
  const auto late = send(early);
  CHECK(late.late == early.size() / 7);
  CHECK(late.stored == 0);
  const auto open = beams_of(108, 108);
  CHECK(send(open).stored == open.size() / 7);
}

TEST_CASE("raw8: a NaN or infinite angle is counted, its path dropped",
          "[protocol][raw][hostile]") {
  // The audit: raw8 rows with a NaN theta were not counted.
  const Glue g = demo_paths("vlp16");
  std::vector<float> beam(g.rows.begin(), g.rows.begin() + 16);  // one beam: two 8-float rows
  for (std::size_t c = 0; c < g.rows.size() / 16; ++c) {
    if (g.rows[c * 16 + 6] != 0) {
      beam.assign(g.rows.begin() + static_cast<std::ptrdiff_t>(c * 16),
                  g.rows.begin() + static_cast<std::ptrdiff_t>(c * 16 + 16));
      break;
    }
  }
  REQUIRE(beam[6] != 0);
  const core::BeamGeometry geometry(g.pattern);
  const auto engine = *protocol::engine_conventions("ros");
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> rows = beam;
    rows[7] = bad;  // the first segment's angle
    protocol::RawRowAssembler assembler(geometry, 8, g.layout);
    core::FrameHits frame = empty_frame(g);
    core::FrameHits* current = &frame;
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): float rows viewed as bytes
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(rows.data());
    const auto counts =
        assembler.store({bytes, rows.size() * sizeof(float)}, engine, materials(), current, [] {});
    CHECK(counts.non_finite == 1);
    CHECK(counts.stored == 0);
  }
}

TEST_CASE("Raw datagrams located many at once store what one at a time stores", "[protocol][raw]") {
  // The daemon converts and locates a receive's raw datagrams together, on TBB's workers, then
  // stores them in order; the turns, the frames' hits, the sealed columns and the late beams
  // must be those of one datagram at a time. Two and a half turns of a VLP-16 in datagrams of
  // 37 beams (a column's beams span two), an early beam after the first turn's column 500 (late),
  // and a bad row, through assemblers taking 1, 4 and 7 datagrams at once.
  const Glue g = demo_rays("vlp16", 1);
  const core::BeamGeometry geometry(g.pattern);
  std::vector<float> stream(g.rows);
  stream.insert(stream.end(), g.rows.begin(), g.rows.end());
  stream.insert(stream.end(), g.rows.begin(), g.rows.begin() + std::ptrdiff_t(g.rows.size() / 2));
  constexpr std::size_t kBeam = 7, kBeamsPerDatagram = 37;
  std::vector<std::vector<float>> datagrams;
  bool early_sent = false;
  for (std::size_t at = 0; at < stream.size(); at += kBeamsPerDatagram * kBeam) {
    const std::size_t end = std::min(stream.size(), at + kBeamsPerDatagram * kBeam);
    datagrams.emplace_back(stream.begin() + std::ptrdiff_t(at),
                           stream.begin() + std::ptrdiff_t(end));
    if (!early_sent && at / kBeam / 16 >= 500) {  // column 10's beams after it: late by then
      early_sent = true;
      datagrams.emplace_back(g.rows.begin() + 10 * 16 * kBeam, g.rows.begin() + 11 * 16 * kBeam);
    }
  }
  datagrams[3][2 * kBeam + 6] = 999;  // an unknown material
  const auto engine = *protocol::engine_conventions("ros");
  struct Outcome {
    std::vector<core::FrameHits> frames;
    protocol::RowCounts rows;
  };
  const auto run = [&](std::size_t at_once) {
    protocol::RawRowAssembler assembler(geometry, 7, g.layout, at_once);
    REQUIRE(assembler.datagrams_at_once() == at_once);
    Outcome out;
    out.frames.push_back(empty_frame(g));
    out.frames.reserve(4);
    core::FrameHits* current = &out.frames.back();
    std::vector<std::span<const std::uint8_t>> group;
    for (std::size_t first = 0; first < datagrams.size(); first += at_once) {
      group.clear();
      for (std::size_t i = first; i < std::min(datagrams.size(), first + at_once); ++i) {
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): float rows viewed as bytes
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(datagrams[i].data());
        group.emplace_back(bytes, datagrams[i].size() * sizeof(float));
        REQUIRE(assembler.check(group.back()) == protocol::BatchError::kNone);
      }
      assembler.convert_and_locate(group, engine, materials());
      for (std::size_t slot = 0; slot < group.size(); ++slot) {
        out.rows += assembler.store_located(slot, current, [&] {
          out.frames.push_back(empty_frame(g));
          current = &out.frames.back();
        });
        assembler.seal_below(assembler.complete_columns());  // as the daemon streams
      }
    }
    return out;
  };
  const Outcome one = run(1);
  REQUIRE(one.frames.size() == 3);
  CHECK(one.rows.late > 0);
  CHECK(one.rows.unknown_material == 1);
  CHECK(one.frames[0].columns_received == std::uint32_t(g.pattern.columns_per_frame));
  for (const std::size_t at_once : {4, 7}) {
    INFO(at_once << " datagrams at once");
    const Outcome many = run(at_once);
    REQUIRE(many.frames.size() == one.frames.size());
    CHECK(many.rows.stored == one.rows.stored);
    CHECK(many.rows.late == one.rows.late);
    CHECK(many.rows.unknown_material == one.rows.unknown_material);
    for (std::size_t f = 0; f < one.frames.size(); ++f) {
      CHECK(many.frames[f].columns_received == one.frames[f].columns_received);
      CHECK(many.frames[f].material == one.frames[f].material);
      CHECK(many.frames[f].x == one.frames[f].x);
      CHECK(many.frames[f].y == one.frames[f].y);
      CHECK(many.frames[f].z == one.frames[f].z);
      CHECK(many.frames[f].nz == one.frames[f].nz);
    }
  }
}
