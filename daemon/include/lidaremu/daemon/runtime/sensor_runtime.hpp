#pragma once
// One emulated sensor: an input thread that receives the engine's datagrams in batches
// (recvmmsg) and gathers them into frames, a processing thread that runs the physics under TBB
// on a frame's columns as they arrive and encodes, and a lane of the one sending thread every
// sensor shares (paced_sender.hpp), which paces its packets like the real unit. Bounded queues
// join them; when input outruns processing the oldest whole frame is dropped and counted. Each
// sensor's input has its own thread, so one sensor's flood (or the io thread's HTTP work) never
// delays another's receiving.
#include <tbb/concurrent_queue.h>

#include <array>
#include <atomic>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "lidaremu/core/encoder.hpp"
#include "lidaremu/core/frame.hpp"
#include "lidaremu/core/motion.hpp"
#include "lidaremu/core/pipeline.hpp"
#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/ops/capture.hpp"
#include "lidaremu/daemon/ops/counters.hpp"
#include "lidaremu/daemon/runtime/fair_share.hpp"
#include "lidaremu/daemon/runtime/frame_admission.hpp"
#include "lidaremu/daemon/runtime/paced_sender.hpp"
#include "lidaremu/daemon/runtime/pacing_schedule.hpp"
#include "lidaremu/daemon/runtime/packet_queue.hpp"
#include "lidaremu/daemon/runtime/physics_gate.hpp"
#include "lidaremu/daemon/runtime/raw_ingest.hpp"
#include "lidaremu/daemon/runtime/streamed_frame.hpp"
#include "lidaremu/daemon/runtime/wall_frame_clock.hpp"
#include "lidaremu/daemon/view/live_view.hpp"
#include "lidaremu/protocol/raw_rows.hpp"

namespace lidaremu::daemon {

// The counters /metrics shows of a sensor, kept across its pipelines: an API's reinitialisation
// builds a new pipeline on the same ones (EmulatedSensor), a reload's sensor of the same name
// takes them over (SensorHistory), so that they only go up while the sensor exists.
struct KeptCounters {
  std::shared_ptr<SensorCounters> sensor = std::make_shared<SensorCounters>();
  std::shared_ptr<ViewCounters> view = std::make_shared<ViewCounters>();
};

class SensorRuntime {
 public:
  // recorders: where emitted packets (--pcap) and received datagrams (--record) also go.
  SensorRuntime(const SensorSettings& settings, const core::MaterialTable& materials,
                Recorders recorders = {}, KeptCounters kept = {});
  ~SensorRuntime();
  // The memory a pipeline for `s` holds once started (its buffers, faulted in at start-up), in
  // bytes, before one is built: the daemon's memory estimate (memory_estimate.hpp).
  static std::size_t estimated_bytes(const SensorSettings& s, const Recorders& recorders = {});
  SensorRuntime(const SensorRuntime&) = delete;
  SensorRuntime& operator=(const SensorRuntime&) = delete;

  // Faults the pipeline's scratch in (138 MB for an OS1-128 2048x10, in huge pages: up to a few
  // hundred milliseconds when the kernel compacts memory for them) on the calling thread, before
  // start(), so that no frame waits for it. Without it the processing thread does it when it
  // starts (a reinitialisation: the io thread must not wait that long), and the first frames
  // may be dropped as late.
  void warm_up();
  // Binds the sockets (throws with an actionable message) and starts the threads.
  void start();
  // Stops input, processes what was accepted, sends it, and joins the threads.
  void drain_and_stop();
  // The two halves of drain_and_stop. stop_input (io thread) stops the input thread (at once:
  // it wakes on a signal of its own), closes the hit socket, so the port is free, and hands the
  // frame being filled on; join (any thread) waits until everything accepted was processed and
  // sent.
  void stop_input();
  void join();
  // Nothing more leaves (any thread): what is queued or still to come is discarded, and when
  // this returns no packet is being sent. An Ouster's reinitialisation stops its stream at the
  // command, so that no packet of the old configuration follows the answer.
  void mute_output();
  // Whether a data packet has left (any thread).
  [[nodiscard]] bool streaming() const { return streaming_.load(std::memory_order_relaxed); }

  [[nodiscard]] Endpoint bound_hits() const;
  // Weather from the next frame on (any thread; Control messages change it too, on the input
  // thread, which takes the lock only when the weather changed).
  void set_weather(const core::Weather& weather);
  [[nodiscard]] core::Weather weather() const;
  [[nodiscard]] bool paused() const { return paused_.load(std::memory_order_relaxed); }
  // Frames waiting for physics, packets waiting to be sent (approximate, for metrics).
  [[nodiscard]] std::size_t frames_queued() const;
  [[nodiscard]] std::size_t packets_queued() const;
  // Datagrams the kernel dropped on the hit socket because its buffer was full (Linux
  // /proc/net/udp): input lost before the daemon could see it. Kept after the socket closes.
  [[nodiscard]] std::uint64_t input_kernel_drops() const;
  [[nodiscard]] const SensorCounters& counters() const { return counters_; }
  // Packets and datagrams left out of --pcap / --record because the writer was behind.
  [[nodiscard]] std::uint64_t capture_dropped() const {
    return (output_lane_ ? output_lane_->dropped() : 0) +
           (input_lane_ ? input_lane_->dropped() : 0);
  }
  [[nodiscard]] const SensorSettings& settings() const { return settings_; }
  // The live view's counters for this sensor (null without a live view).
  [[nodiscard]] const ViewCounters* view_counters() const {
    return tap_ ? &tap_->counters() : nullptr;
  }

 private:
  class QueueSink;
  class TeeSink;

  // ingest (input thread)
  void input_loop();
  void on_datagram(std::span<const std::uint8_t> datagram);
  [[nodiscard]] std::string sender_text() const;
  void on_framed(std::span<const std::uint8_t> datagram);
  // A raw datagram, checked, is copied to be located on the sensor's locating thread with the
  // others of its receive (RawIngest); a set is stored into frames by store_raw once located. A
  // Control message stores everything taken before it first (flush_raw), so that everything takes
  // effect in the order it came.
  void on_raw(std::span<const std::uint8_t> datagram);
  void hand_over_raw();
  void flush_raw();
  void store_raw(std::size_t slot, std::int64_t arrival_ns);
  // How many raw datagrams are located together: a receive's worth, or a turn's when that is less.
  [[nodiscard]] static std::size_t raw_datagrams_at_once(const SensorSettings& s);
  void on_control(std::span<const std::uint8_t> datagram);
  std::uint64_t kernel_drops_at_close_ = 0;
  StreamedFrame* acquire_frame(std::uint32_t frame_number);
  // After a datagram is stored: publishes the columns now in (current_ready_) to the
  // processing thread (the first datagram hands the frame on).
  void publish_current();
  void submit_current();
  void log_rejection(protocol::BatchError e);
  // Rows converted (by the input thread or the processing thread's workers) into the counters;
  // rejected rows logged now and then.
  void account_rows(const protocol::RowCounts& rows, std::uint32_t frame_number);

  // processing and emission (own threads)
  void process_loop();
  // Real time: whether a complete frame can still leave fresh (FrameAdmission); when not, it is
  // dropped whole and counted. Once the input has stopped, everything accepted is processed.
  // A frame still arriving (not complete) is judged as it will be once complete, behind the
  // physics still to come of frames (of any sensor) admitted and due before it, which go first.
  bool admit_in_time(const core::FrameHits& frame, bool complete,
                     const PhysicsGate::Commitment& commitment);
  // When a frame's last packet must have left (steady-clock seconds): with the sensor's
  // FairShare lead, its place in the physics' line. A frame still arriving is expected complete
  // as long after its first datagram as the last complete frame took (a period before there was
  // one).
  [[nodiscard]] double frame_deadline_s(const core::FrameHits& frame, bool complete) const;
  // A frame's outcome into the sensor's share (and its gauge); frames the input dropped (input
  // outran processing) count against it too.
  void record_outcome(bool delivered, std::uint64_t frames = 1);
  void record_input_drops();
  // An admitted frame judged again once complete and through the physics.
  bool still_in_time(const core::FrameHits& frame, std::uint64_t physics_ns);
  // Runs the physics on the frame's columns as they are published, encoding what is final;
  // judge_after_physics: the real-time admission judges the frame again once it is complete and
  // through its physics, before any of it is sent. held: the gate, when the admission holds it (the
  // physics goes on under it; it is released whenever the thread leaves the physics).
  void process_frame(StreamedFrame& frame, QueueSink& sink, PhysicsGate::Commitment& commitment,
                     std::optional<PhysicsGate::Pass>& held, bool judge_after_physics);
  // The frame's batches appended since `converted` turned into hits, many at once on the
  // physics' workers; `converted` moves on to what was appended.
  void convert_pending(StreamedFrame& frame, std::uint32_t& converted);
  // When the sender's schedule has the first packet of a frame starting at sensor_time_s
  // (steady-clock seconds; none before the sender has anchored its schedule).
  [[nodiscard]] std::optional<double> first_packet_due_s(double sensor_time_s) const;
  // The sensor's lane of the shared sender (paced_sender.hpp), from its own sockets.
  class Emission;
  void start_sending();
  // The sensor time a frame starts at; next_frame_start only looks, frame_start_time also
  // moves the sensor's clock on.
  [[nodiscard]] double next_frame_start(const core::FrameHits& frame) const;
  double frame_start_time(const core::FrameHits& frame);

  SensorSettings settings_;
  const core::MaterialTable& materials_;
  boost::asio::ip::udp::socket hits_socket_;
  // Input thread: where the datagram being handled came from, when the last batch arrived.
  core::UdpAddress sender_;
  // When the datagram being handled reached the host (the kernel's receive timestamp, as
  // steady-clock nanoseconds; 0 outside a datagram): a frame it completes was complete then,
  // however long it waited in the socket's buffer.
  std::int64_t datagram_arrival_ns_ = 0;
  std::chrono::steady_clock::time_point last_batch_at_;
  // recvmmsg's buffers: one datagram each, a byte more than the largest accepted (so a larger
  // one shows as oversized, not as a truncated good one).
  static constexpr int kReceiveBatch = 32;
  // A pipeline's threads' stacks as touched, its encoder's and physics' tables: measured (1 MiB
  // covers every model's; test_side_channels_hostile's estimate check holds it to account).
  static constexpr std::size_t kThreadsAndTablesBytes = std::size_t{1} << 20;
  std::vector<std::uint8_t> receive_buffers_;

  core::Pipeline pipeline_;
  std::unique_ptr<core::Encoder> encoder_;
  double data_packet_period_s_ = 0;  // the encoder's, read by the sending thread
  std::optional<RawIngest> raw_;

  std::vector<std::unique_ptr<StreamedFrame>> frame_pool_;
  // Processing thread: each pending batch's row counts as its worker converts it.
  std::vector<protocol::RowCounts> batch_rows_;
  tbb::concurrent_bounded_queue<StreamedFrame*> free_frames_;
  // Frames handed on at their first stored batch, framed or raw rows alike: the processing
  // thread follows each as its columns are published (StreamedFrame).
  tbb::concurrent_bounded_queue<StreamedFrame*> ready_frames_;
  StreamedFrame* current_ = nullptr;
  bool current_handed_on_ = false;   // input thread: current_ is in ready_frames_
  std::uint32_t current_ready_ = 0;  // input thread: current_'s leading columns all in
  std::uint32_t stream_step_ = 1;    // columns a physics step takes (about 8,192 beams)
  std::optional<std::uint32_t> last_submitted_frame_;
  std::uint32_t raw_frame_counter_ = 0;
  core::Weather weather_;  // input thread's copy; stamped on every frame a batch lands in
  // The weather as the API and Control messages set it; weather_version_ moves on each change,
  // so the input thread copies it (under the lock) only then.
  mutable std::mutex shared_weather_mutex_;
  core::Weather shared_weather_;
  std::atomic<std::uint64_t> weather_version_{0};
  std::uint64_t weather_seen_ = 0;  // input thread
  void refresh_weather();
  // From Control messages: the sensor's pose for frames whose batches carry none.
  std::optional<Eigen::Isometry3d> control_pose_;
  void stamp_frame();  // weather, and the Control pose, onto the current frame

  std::optional<PacketQueue> packets_;  // sized once the encoder is known

  // processing-thread state
  FrameAdmission admission_;
  core::FrameReturns returns_;
  core::MotionEstimator motion_;  // from the engine's sensor poses, for the IMU
  std::optional<double> last_frame_start_;
  WallFrameClock wall_clock_;       // frame starts, clock = "wall"
  std::uint64_t frames_begun_ = 0;  // the frame sequence the packets carry
  double arrival_estimate_s_ = 0;   // how long the last complete frame took to arrive
  std::uint64_t gate_wait_ns_ = 0;  // the frame's physics' waits for the cores
  // The share of this sensor's frames that leave (FairShare: its place in line follows it), and
  // how many of the input's drops it has counted.
  FairShare share_;
  std::uint64_t input_drops_recorded_ = 0;

  // The sender's schedule, for the admission (steady-clock seconds minus sensor seconds), as the
  // sender last published it or as the frames admitted since will leave it.
  ScheduleOutlook schedule_outlook_;
  KeptCounters kept_;
  SensorCounters& counters_;  // *kept_.sensor
  Recorders recorders_;
  std::shared_ptr<CaptureFile::Lane> output_lane_;  // --pcap, from the sending thread
  std::shared_ptr<CaptureFile::Lane> input_lane_;   // --record, from the input thread
  std::shared_ptr<SensorTap> tap_;  // outlives the threads that use it (declared after)
  core::UdpAddress hits_address_;   // where datagrams arrive, as a recording shows it
  Endpoint bound_hits_;             // the same, as settings write it (kept once the socket closes)
  std::thread receiver_;
  std::thread processor_;
  std::shared_ptr<SendLane> sending_lane_;  // until the sender has seen its queue's end
  // The small members together, so the class wastes no padding between large ones.
  int wake_fd_ = -1;  // eventfd: stop_input wakes the input thread with it
  std::atomic<bool> input_stopping_{false};
  std::atomic<bool> muted_{false};    // mute_output: sending stops
  std::atomic<bool> sending_{false};  // the sending thread is in a send (mute_output waits)
  std::atomic<bool> paused_{false};   // by Control messages
  // A data packet of this pipeline has left (the counters may hold an earlier pipeline's).
  std::atomic<bool> streaming_{false};
  bool frames_ended_ = false;  // processing thread: the end marker of ready_frames_ arrived
  bool started_ = false;
  bool input_stopped_ = false;
};

}  // namespace lidaremu::daemon
