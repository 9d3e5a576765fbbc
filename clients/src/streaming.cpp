#include "lidaremu/clients/streaming.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "lidaremu/core/scan_choice.hpp"
#include "lidaremu/core/scan_table.hpp"

namespace lidaremu::clients {
namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

core::ScanPattern scan_for(const std::string& model_name, int rpm, const std::string& mode,
                           const std::string& scan_pattern) {
  const core::SensorModel* model = core::find_sensor_model(model_name);
  if (!model)
    throw std::runtime_error("unknown model '" + model_name + "' (" + core::sensor_model_names() +
                             ")");
  const auto r = core::make_scan(*model, {.rpm = rpm, .mode = mode, .scan_pattern = scan_pattern});
  if (!r.pattern) throw std::runtime_error(r.error);
  return *r.pattern;
}

std::vector<RawPart> raw_datagrams(std::span<const float> rows, std::size_t floats_per_column) {
  const std::size_t columns = rows.size() / floats_per_column;
  const std::size_t columns_per_datagram = 65000 / (floats_per_column * sizeof(float));
  std::vector<RawPart> parts;
  for (std::size_t c = 0; c < columns; c += columns_per_datagram) {
    const std::size_t n = std::min(columns_per_datagram, columns - c);
    const auto part = rows.subspan(c * floats_per_column, n * floats_per_column);
    // The wire format is these bytes.
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(  // NOLINT(*-reinterpret-cast)
        part.data());
    parts.push_back({static_cast<std::uint32_t>(c), {bytes, part.size_bytes()}});
  }
  return parts;
}

FrameStreamer::FrameStreamer(UdpSender& sender, const core::ScanPattern& pattern,
                             StreamOptions options)
    : sender_(sender), pattern_(pattern), options_(options), frame_(options.first_frame) {}

void FrameStreamer::send_at(std::span<const std::uint8_t> datagram, double sim_time_s) {
  if (options_.speed > 0) {
    if (start_ < 0) start_ = now_s() - sim_time_s / options_.speed;
    const double wait = start_ + sim_time_s / options_.speed - now_s();
    if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
  if (sender_.send(datagram))
    ++datagrams_;
  else
    ++failures_;
}

void FrameStreamer::send_frame(std::span<const float> rows,
                               std::span<const std::uint32_t> object_ids) {
  const int channels = pattern_.model->channels;
  const std::size_t floats_per_column = std::size_t(channels) * options_.floats_per_row;
  const auto columns = static_cast<std::uint32_t>(rows.size() / floats_per_column);
  const double frame_time = frame_ * pattern_.frame_period_s;
  if (options_.raw) {
    for (const auto& part : raw_datagrams(rows, floats_per_column)) {
      send_at(part.bytes, frame_time + part.first_column * pattern_.column_period_s);
    }
  } else {
    BatchHeader h;
    h.sensor_id = options_.sensor_id;
    h.frame = frame_;
    h.column_count = columns;
    h.floats_per_row = static_cast<std::uint8_t>(options_.floats_per_row);
    // Simulation time starts at 1 s so that "0" can keep meaning "no time given".
    h.sim_time_ns = static_cast<std::uint64_t>((1.0 + frame_time) * 1e9);
    const auto column_ns = static_cast<std::uint64_t>(pattern_.column_period_s * 1e9);
    const auto batches = build_frame_batches(h, static_cast<std::uint16_t>(channels), rows,
                                             column_ns, 65507, object_ids);
    // Spread over the frame as the engine would produce them while the head turns.
    for (std::size_t k = 0; k < batches.size(); ++k) {
      send_at(batches[k],
              frame_time + pattern_.frame_period_s * double(k) / double(batches.size()));
    }
  }
  ++frame_;
}

}  // namespace lidaremu::clients
