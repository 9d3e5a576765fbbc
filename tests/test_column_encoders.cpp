// The spinning heads' encoders (Velodyne, Hesai, RoboSense) write whole packets on TBB's workers
// where their columns are all in, and append one column at a time elsewhere: both must give the
// same packets, in the same order, at the same times, whatever the steps and the threads.
#include <tbb/global_control.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "demo_frame.hpp"
#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/sensor_model.hpp"
#include "recording_sink.hpp"

using namespace lidaremu::core;

using lidaremu::test::RecordingSink;
using lidaremu::test::TimedPacket;

namespace {

struct Case {
  const char* model;
  ReturnMode echoes;
  int rpm = 0;  // the model's default
};

ScanPattern pattern_of(const Case& c) {
  const SensorModel* model = find_sensor_model(c.model);
  REQUIRE(model != nullptr);
  const auto scan = make_rpm_scan(*model, c.rpm != 0 ? c.rpm : model->spin.default_rpm);
  REQUIRE(scan.pattern);
  return *scan.pattern;
}

// Whether a frame of the case ends inside a packet (the next frame's columns complete it).
bool frames_end_mid_packet(const Case& c) {
  const auto pattern = pattern_of(c);
  const auto encoder = make_encoder(pattern, {}, c.echoes);
  REQUIRE(encoder);
  const auto per_packet = std::lround(encoder->data_packet_period_s() / pattern.column_period_s);
  return pattern.columns_per_frame % per_packet != 0;
}

// Three frames, each encoded in steps of `step` columns (0: the whole frame at once), then the
// part-filled packet the last one leaves flushed.
std::vector<TimedPacket> encode(const Case& c, std::uint32_t step, int threads) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  const auto pattern = pattern_of(c);
  auto encoder = make_encoder(pattern, {992200000011ull, 0x77}, c.echoes);
  REQUIRE(encoder);
  RecordingSink sink;
  for (std::uint32_t f = 0; f < 3; ++f) {
    const auto frame = lidaremu::test::demo_frame(pattern, c.echoes, f);
    const std::uint32_t columns = frame.returns.shape.columns;
    const double start_s = 1795608000.0 + f * pattern.frame_period_s;
    for (std::uint32_t end = step == 0 ? columns : step;; end += step) {
      encoder->encode_columns(frame.returns, start_s, std::min(end, columns), sink);
      if (end >= columns) break;
    }
  }
  encoder->flush(sink);
  return sink.packets;
}

}  // namespace

TEST_CASE(
    "Spinning heads: whole packets written in parallel are the packets of one column at a "
    "time",
    "[format][determinism]") {
  const Case cases[] = {
      {"vlp16", ReturnMode::kStrongest},
      {"vlp16", ReturnMode::kDual, 1200},
      {"vls128", ReturnMode::kDual},
      {"hdl64e", ReturnMode::kStrongest, 900},
      {"vlp32c", ReturnMode::kLast},
      {"pandar-ot128", ReturnMode::kDual},
      {"pandar-xt32", ReturnMode::kFirstStrongest},
      {"pandar-qt128", ReturnMode::kFirst},
      {"pandar-40p", ReturnMode::kLast},
      {"pandar-64", ReturnMode::kStrongest},
      {"pandar-at128", ReturnMode::kStrongest},
      {"pandar-at128", ReturnMode::kDual},
      {"rs16", ReturnMode::kStrongest},
      {"rs16", ReturnMode::kDual},
      {"rs32", ReturnMode::kDual},
      {"rs-helios", ReturnMode::kLast},
      {"rs-bpearl", ReturnMode::kStrongest},
  };
  // VLP-16 at its 600 rpm: 1,808 columns, 75 1/3 packets of 24; HDL-64E at 900: 1,389, of 6.
  CHECK(std::count_if(std::begin(cases), std::end(cases), frames_end_mid_packet) >= 2);
  for (const Case& c : cases) {
    INFO(c.model << " rpm " << c.rpm << " (0: its default)"
                 << " echoes " << static_cast<int>(c.echoes));
    // Steps of one column never hold two whole packets: every column is appended alone.
    const auto one_at_a_time = encode(c, 1, 1);
    REQUIRE(one_at_a_time.size() > 3 * ColumnEncoder::kPacketsAtOnce);
    for (const std::uint32_t step : {0u, 37u, 1000u}) {
      for (const int threads : {1, 4}) {
        INFO("steps of " << step << " columns, " << threads << " threads");
        const auto got = encode(c, step, threads);
        REQUIRE(got.size() == one_at_a_time.size());
        std::size_t differing = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
          differing += got[i].channel != one_at_a_time[i].channel ||
                       got[i].time_s != one_at_a_time[i].time_s ||
                       got[i].bytes != one_at_a_time[i].bytes;
        }
        CHECK(differing == 0);
      }
    }
  }
}
