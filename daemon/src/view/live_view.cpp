#include "lidaremu/daemon/view/live_view.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/cloud_export.hpp"
#include "lidaremu/core/family.hpp"
#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"

namespace lidaremu::daemon {
namespace {

// Frames a sensor may have with the view at once: one being decoded, one waiting.
constexpr int kFramesInView = 2;
constexpr std::size_t kPointStride = 28;

std::optional<core::ouster::Metadata> metadata_for(const SensorSettings& s) {
  if (!core::family_of(*s.model).stream_needs_metadata()) return std::nullopt;
  return core::ouster::parse_metadata(
      core::ouster::metadata_json(s.pattern, s.identity, {.output = s.ouster}));
}

void append_base64(std::string& out, std::span<const std::uint8_t> bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    const std::uint32_t v = (bytes[i] << 16) | (rest == 2 ? bytes[i + 1] << 8 : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
}

}  // namespace

const std::string& foxglove_point_cloud_schema() {
  // foxglove.PointCloud (https://docs.foxglove.dev/docs/visualization/message-schemas/point-cloud)
  static const std::string schema =
      nlohmann::json{
          {"title", "foxglove.PointCloud"},
          {"type", "object"},
          {"properties",
           {{"timestamp",
             {{"type", "object"},
              {"properties", {{"sec", {{"type", "integer"}}}, {"nsec", {{"type", "integer"}}}}}}},
            {"frame_id", {{"type", "string"}}},
            {"pose",
             {{"type", "object"},
              {"properties",
               {{"position",
                 {{"type", "object"},
                  {"properties",
                   {{"x", {{"type", "number"}}},
                    {"y", {{"type", "number"}}},
                    {"z", {{"type", "number"}}}}}}},
                {"orientation",
                 {{"type", "object"},
                  {"properties",
                   {{"x", {{"type", "number"}}},
                    {"y", {{"type", "number"}}},
                    {"z", {{"type", "number"}}},
                    {"w", {{"type", "number"}}}}}}}}}}},
            {"point_stride", {{"type", "integer"}, {"minimum", 0}}},
            {"fields",
             {{"type", "array"},
              {"items",
               {{"type", "object"},
                {"properties",
                 {{"name", {{"type", "string"}}},
                  {"offset", {{"type", "integer"}, {"minimum", 0}}},
                  {"type", {{"type", "integer"}}}}}}}}},
            {"data", {{"type", "string"}, {"contentEncoding", "base64"}}}}}}
          .dump();
  return schema;
}

std::string foxglove_point_cloud_json(const core::Cloud& cloud, const std::string& frame_id,
                                      double unix_time_s) {
  // PackedElementField numeric types: UINT8 1, UINT16 3, UINT32 5, FLOAT32 7.
  const double sec = std::floor(unix_time_s);
  nlohmann::json head = {{"timestamp",
                          {{"sec", static_cast<std::int64_t>(sec)},
                           {"nsec", static_cast<std::int64_t>((unix_time_s - sec) * 1e9)}}},
                         {"frame_id", frame_id},
                         {"pose",
                          {{"position", {{"x", 0}, {"y", 0}, {"z", 0}}},
                           {"orientation", {{"x", 0}, {"y", 0}, {"z", 0}, {"w", 1}}}}},
                         {"point_stride", kPointStride},
                         {"fields",
                          {{{"name", "x"}, {"offset", 0}, {"type", 7}},
                           {{"name", "y"}, {"offset", 4}, {"type", 7}},
                           {{"name", "z"}, {"offset", 8}, {"type", 7}},
                           {{"name", "intensity"}, {"offset", 12}, {"type", 7}},
                           {{"name", "object_id"}, {"offset", 16}, {"type", 5}},
                           {{"name", "ring"}, {"offset", 20}, {"type", 3}},
                           {{"name", "echo"}, {"offset", 22}, {"type", 1}},
                           {{"name", "kind"}, {"offset", 23}, {"type", 1}},
                           {{"name", "pulse_width"}, {"offset", 24}, {"type", 7}}}}};
  std::string out = head.dump();
  out.pop_back();  // the closing brace: "data" follows
  out += ",\"data\":\"";
  out.reserve(out.size() + (cloud.points.size() * kPointStride + 2) / 3 * 4 + 3);
  // Points go through base64 in chunks that are a multiple of 3 bytes long.
  std::array<std::uint8_t, kPointStride * 3 * 64> chunk{};
  std::size_t used = 0;
  for (const auto& p : cloud.points) {
    std::span<std::uint8_t> record(chunk.data() + used, kPointStride);
    core::store_le<float>(record, 0, p.x);
    core::store_le<float>(record, 4, p.y);
    core::store_le<float>(record, 8, p.z);
    core::store_le<float>(record, 12, static_cast<float>(p.reflectivity));
    core::store_le<std::uint32_t>(record, 16, p.object_id);
    core::store_le<std::uint16_t>(record, 20, p.ring);
    record[22] = p.echo;
    record[23] = p.kind;
    core::store_le<float>(record, 24, p.pulse_width_ns);
    used += kPointStride;
    if (used == chunk.size()) {
      append_base64(out, chunk);
      used = 0;
    }
  }
  append_base64(out, std::span(chunk.data(), used));
  out += "\"}";
  return out;
}

SensorTap::SensorTap(LiveView& view, const SensorSettings& settings, std::uint32_t channel_id,
                     std::shared_ptr<ViewCounters> counters)
    : view_(view),
      name_(settings.name),
      channel_id_(channel_id),
      decoder_(settings.pattern, metadata_for(settings), settings.pipeline.return_mode),
      counters_(std::move(counters)) {
  free_.set_capacity(kFramesInView);
  for (int i = 0; i < kFramesInView; ++i) {
    pool_.push_back(std::make_unique<LiveFrame>());
    free_.push(pool_.back().get());
  }
  if (!view.export_dir_.empty()) exports_left_ = view.export_frames_;
}

SensorTap::~SensorTap() { view_.detach(*this); }

bool SensorTap::wanted() const { return subscribers_.load() > 0 || exports_left_.load() > 0; }

LiveFrame* SensorTap::begin_frame() {
  const std::uint64_t sequence = ++sequence_;
  if (!wanted()) return nullptr;
  LiveFrame* frame = nullptr;
  if (!free_.try_pop(frame)) {
    ++counters_->frames_skipped;
    return nullptr;
  }
  frame->clear();
  frame->sequence = sequence;
  return frame;
}

void SensorTap::submit(LiveFrame* frame, const core::FrameReturns& returns) {
  frame->truth.assign(returns);
  frame->unix_time_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // The view holds the tap until it is done with the frame.
  view_.jobs_.push({shared_from_this(), frame});
}

LiveView::LiveView(const DaemonSettings& settings)
    : export_dir_(settings.export_dir),
      export_formats_(parse_export_formats(settings.export_formats)
                          .value_or(std::vector<core::CloudFormat>{core::CloudFormat::kPcd})),
      export_every_(settings.export_every),
      export_frames_(settings.export_frames),
      thread_([this] { run(); }) {
  if (const auto address = parse_http_address(settings.foxglove)) {
    try {
      foxglove_ = std::make_unique<FoxgloveServer>(
          address->first, address->second,
          [this](std::uint32_t channel, int subscribers) { on_subscribers(channel, subscribers); });
      foxglove_host_ = address->first;
    } catch (const std::exception& e) {
      if (settings.foxglove_explicit) {
        stop_thread();
        throw;
      }
      spdlog::warn("no live view: {} (choose with --foxglove HOST:PORT, or --foxglove off)",
                   e.what());
    }
  }
  if (!export_dir_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(export_dir_, ec);
    if (ec) {
      stop_thread();
      foxglove_.reset();
      throw std::runtime_error("export directory " + export_dir_.string() +
                               ": cannot create it: " + ec.message());
    }
  }
}

LiveView::~LiveView() {
  stop_thread();      // the view thread publishes through the server: it goes first
  foxglove_.reset();  // then the server (its last subscriber changes still find the view)
}

void LiveView::stop_thread() {
  jobs_.push({nullptr, nullptr});
  thread_.join();
  Job left;
  while (jobs_.try_pop(left)) {
  }
}

std::string LiveView::topic_for(const std::string& sensor_name) {
  return "/lidaremu/" + sensor_name + "/points";
}

std::shared_ptr<SensorTap> LiveView::attach(const SensorSettings& settings,
                                            std::shared_ptr<ViewCounters> counters) {
  std::uint32_t channel = 0;
  {
    const std::scoped_lock lock(taps_mutex_);
    channel = next_channel_++;
  }
  auto tap = std::make_shared<SensorTap>(*this, settings, channel, std::move(counters));
  {
    const std::scoped_lock lock(taps_mutex_);
    taps_.push_back(tap);
  }
  if (foxglove_) {
    foxglove_->advertise({.id = channel,
                          .topic = topic_for(settings.name),
                          .schema_name = "foxglove.PointCloud",
                          .schema = foxglove_point_cloud_schema()});
  }
  return tap;
}

void LiveView::detach(SensorTap& tap) {
  {
    const std::scoped_lock lock(taps_mutex_);
    std::erase_if(taps_, [&](const std::weak_ptr<SensorTap>& w) {
      const auto t = w.lock();
      return !t || t.get() == &tap;
    });
  }
  if (foxglove_) foxglove_->unadvertise(tap.channel_id_);
}

void LiveView::on_subscribers(std::uint32_t channel, int subscribers) {
  const std::scoped_lock lock(taps_mutex_);
  for (const auto& weak : taps_) {
    if (const auto tap = weak.lock(); tap && tap->channel_id_ == channel) {
      tap->subscribers_ = subscribers;
    }
  }
}

void LiveView::run() {
  leave_signals_to_the_main_thread();
  bool ended = false;
  // After a failure the frames still go back to their sensors (a sensor waiting for a free
  // one would otherwise skip the view for good) until the end marker.
  const auto hand_back = [&] {
    while (!ended) {
      Job job;
      jobs_.pop(job);
      if (!job.tap) return;
      job.tap->free_.push(job.frame);
    }
  };
  run_guarded(
      "the live view",
      [&] {
        for (;;) {
          Job job;
          jobs_.pop(job);
          if (!job.tap) {
            ended = true;
            return;
          }
          handle(*job.tap, *job.frame);
          job.tap->free_.push(job.frame);
        }
      },
      hand_back);
}

void LiveView::handle(SensorTap& tap, LiveFrame& frame) {
  std::vector<std::span<const std::uint8_t>> packets;
  std::size_t begin = 0;
  for (const std::size_t end : frame.packet_ends) {
    packets.emplace_back(frame.bytes.data() + begin, end - begin);
    begin = end;
  }
  // A Velodyne frame's first packets finish the frame before: their ids come from it when the
  // view saw it, and those points are left out otherwise.
  const bool previous_seen = tap.previous_.valid && tap.previous_sequence_ + 1 == frame.sequence;
  static const core::FrameTruth unknown;
  const int bad = tap.decoder_.decode(packets, frame.truth, previous_seen ? tap.previous_ : unknown,
                                      tap.cloud_);
  if (bad > 0) {
    tap.counters_->packets_undecodable += static_cast<std::uint64_t>(bad);
    spdlog::error("sensor {}: live view: {} of our own packets did not decode", tap.name_, bad);
  }
  std::swap(tap.previous_, frame.truth);
  tap.previous_sequence_ = frame.sequence;

  if (foxglove_ && tap.subscribers_.load() > 0) {
    foxglove_->publish(tap.channel_id_, static_cast<std::uint64_t>(frame.unix_time_s * 1e9),
                       std::make_shared<const std::string>(
                           foxglove_point_cloud_json(tap.cloud_, tap.name_, frame.unix_time_s)));
    ++tap.counters_->frames_published;
  }
  // Exported frames are whole: a frame whose stream starts with the previous frame's tail only
  // once the frame before it was seen.
  const bool whole = previous_seen || !tap.decoder_.frames_carry_previous_tail();
  if (tap.exports_left_.load() > 0 && whole && tap.frames_seen_++ % export_every_ == 0) {
    export_frame(tap, tap.cloud_);
  }
}

void LiveView::export_frame(SensorTap& tap, const core::Cloud& cloud) {
  char number[16];
  std::snprintf(number, sizeof number, "%06u", cloud.frame_number);
  try {
    for (const auto format : export_formats_) {
      const auto path =
          export_dir_ / (tap.name_ + "-" + number + "." + core::cloud_format_extension(format));
      core::write_cloud_file(path.string(), cloud);
    }
    ++tap.counters_->frames_exported;
    --tap.exports_left_;
  } catch (const std::exception& e) {
    ++tap.counters_->export_errors;
    tap.exports_left_ = 0;  // a full disk or a removed directory: stop, say why once
    spdlog::error("sensor {}: export stopped: {}", tap.name_, e.what());
  }
}

}  // namespace lidaremu::daemon
