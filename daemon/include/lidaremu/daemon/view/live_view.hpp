#pragma once
// The live view: each sensor's packets, decoded as a driver would (core::CloudDecoder) with the
// ground-truth object id of every echo, published as foxglove.PointCloud on the Foxglove
// WebSocket and written to PCD/PLY/KITTI files when asked. Sensors hand frames over only while
// someone watches or an export is due; the decoding runs on the view's own thread, and when it
// is busy frames are skipped (counted), never queued without bound.
#include <tbb/concurrent_queue.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "lidaremu/core/cloud.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/view/foxglove_server.hpp"

namespace lidaremu::daemon {

// One frame's data packets and echoes, copied off a sensor's processing thread.
struct LiveFrame {
  std::vector<std::uint8_t> bytes;       // the packets, back to back
  std::vector<std::size_t> packet_ends;  // where each ends in `bytes`
  core::FrameTruth truth;
  std::uint64_t sequence = 0;  // counts every frame the sensor processed, watched or not
  double unix_time_s = 0;
  void clear() {
    bytes.clear();
    packet_ends.clear();
  }
};

struct ViewCounters {
  std::atomic<std::uint64_t> frames_published{0};
  std::atomic<std::uint64_t> frames_skipped{0};  // the view was still busy with earlier frames
  std::atomic<std::uint64_t> frames_exported{0};
  std::atomic<std::uint64_t> export_errors{0};
  std::atomic<std::uint64_t> packets_undecodable{0};  // would be a bug: our own packets
};

class LiveView;

// A sensor's end of the live view. The processing thread asks `begin_frame` (null when nobody
// watches, nothing is due, or the view is busy), appends the frame's data packets, and submits.
class SensorTap : public std::enable_shared_from_this<SensorTap> {
 public:
  // `counters`: the sensor's, kept across its pipelines (a reinitialisation attaches a new tap).
  SensorTap(LiveView& view, const SensorSettings& settings, std::uint32_t channel_id,
            std::shared_ptr<ViewCounters> counters);
  ~SensorTap();
  SensorTap(const SensorTap&) = delete;
  SensorTap& operator=(const SensorTap&) = delete;

  LiveFrame* begin_frame();
  void submit(LiveFrame* frame, const core::FrameReturns& returns);
  [[nodiscard]] const ViewCounters& counters() const { return *counters_; }
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  friend class LiveView;
  [[nodiscard]] bool wanted() const;

  LiveView& view_;
  std::string name_;
  std::uint32_t channel_id_;
  std::atomic<int> subscribers_{0};
  std::atomic<int> exports_left_{0};
  std::uint64_t sequence_ = 0;           // processing thread
  int frames_seen_ = 0;                  // view thread
  std::uint64_t previous_sequence_ = 0;  // view thread
  std::vector<std::unique_ptr<LiveFrame>> pool_;
  tbb::concurrent_bounded_queue<LiveFrame*> free_;
  core::CloudDecoder decoder_;  // view thread
  core::FrameTruth previous_;   // view thread: the last frame decoded, for a Velodyne tail
  core::Cloud cloud_;           // view thread
  std::shared_ptr<ViewCounters> counters_;
};

class LiveView {
 public:
  // Opens the Foxglove WebSocket (settings.foxglove; a default address that cannot be bound only
  // warns) and the export directory; throws std::runtime_error with the reason otherwise.
  explicit LiveView(const DaemonSettings& settings);
  ~LiveView();
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  // Called where sensors are built; the tap lives as long as its sensor.
  std::shared_ptr<SensorTap> attach(const SensorSettings& settings,
                                    std::shared_ptr<ViewCounters> counters);
  // The WebSocket's port (0: none).
  [[nodiscard]] std::uint16_t foxglove_port() const { return foxglove_ ? foxglove_->port() : 0; }
  [[nodiscard]] const std::string& foxglove_host() const { return foxglove_host_; }
  [[nodiscard]] const FoxgloveServer* foxglove() const { return foxglove_.get(); }
  // The topic a sensor's cloud is published on.
  static std::string topic_for(const std::string& sensor_name);

 private:
  friend class SensorTap;
  struct Job {
    std::shared_ptr<SensorTap> tap;
    LiveFrame* frame = nullptr;
  };
  void detach(SensorTap& tap);
  void on_subscribers(std::uint32_t channel, int subscribers);  // the server's thread
  void run();
  void stop_thread();
  void handle(SensorTap& tap, LiveFrame& frame);
  void export_frame(SensorTap& tap, const core::Cloud& cloud);

  std::unique_ptr<FoxgloveServer> foxglove_;
  std::string foxglove_host_;
  std::filesystem::path export_dir_;
  std::vector<core::CloudFormat> export_formats_;
  int export_every_ = 1;
  int export_frames_ = 0;
  std::mutex taps_mutex_;  // attach/detach (start-up, reload) and subscriber changes only
  std::vector<std::weak_ptr<SensorTap>> taps_;
  std::uint32_t next_channel_ = 1;
  tbb::concurrent_bounded_queue<Job> jobs_;
  std::thread thread_;
};

// foxglove.PointCloud as a JSON message: x y z (float32), intensity (reflectivity, float32),
// object_id (uint32), ring (uint16), echo (uint8), 24 bytes a point, base64 data.
std::string foxglove_point_cloud_json(const core::Cloud& cloud, const std::string& frame_id,
                                      double unix_time_s);
// The JSON schema of foxglove.PointCloud, as advertised.
const std::string& foxglove_point_cloud_schema();

}  // namespace lidaremu::daemon
