#pragma once
// --pcap: every packet the daemon emits, from every sensor, in one capture file as a real
// network tap would record it (IPv4 fragments included); --record: every datagram received.
// Recording happens on the sending thread and the input threads, where it must not wait: each
// recording thread copies a packet into a slot of its own lane and queues it on the lane's
// wait-free ring (spsc_ring.hpp: a real-time sender never spins on another thread's progress,
// as it did on a shared tbb::concurrent_bounded_queue whose pusher was preempted); one writer
// thread writes the file, the lanes merged by time. A lane whose slots are all queued (the disk is
// behind) drops from the capture, and says so in its count. A write that fails (a full disk, an I/O
// error, the file size limit) ends the capture at its last whole record, logs why once with the
// path, and says so in /healthz and /metrics; the sensors' streams go on, their packets counted as
// left out of it.
#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "lidaremu/core/pcap.hpp"
#include "lidaremu/daemon/runtime/doorbell.hpp"
#include "lidaremu/daemon/runtime/spsc_ring.hpp"

namespace lidaremu::daemon {

class CaptureFile;
class LiveView;

// "ENOSPC", "EIO", "EFBIG", ... (what /metrics labels a write error with); "errno N" otherwise.
std::string errno_name(int error);

// Where a sensor also records what it emits (--pcap) and what it receives (--record), and the
// live view its decoded frames go to (Foxglove, exports).
struct Recorders {
  CaptureFile* output = nullptr;
  CaptureFile* input = nullptr;
  LiveView* view = nullptr;
};

class CaptureFile {
 public:
  // Opens the file (throws naming it) and starts the writer thread. `kind`: "pcap" or "record",
  // as /metrics and /healthz name it.
  CaptureFile(const std::filesystem::path& file, std::string kind);
  // Writes everything queued, then closes.
  ~CaptureFile();
  CaptureFile(const CaptureFile&) = delete;
  CaptureFile& operator=(const CaptureFile&) = delete;

  struct Slot {
    double unix_time_s = 0;
    core::UdpAddress from{};
    core::UdpAddress to{};
    std::vector<std::uint8_t> bytes;  // keeps its capacity: grows only for a larger packet
  };
  // One recording thread's way in (one thread per lane). record() copies the packet into a free
  // slot and queues it: no lock, no wait, a system call only to wake a sleeping writer; false
  // (and counted) when every slot is queued.
  class Lane {
   public:
    // False (and counted) too once the file has failed: nothing more can be written.
    bool record(double unix_time_s, core::UdpAddress from, core::UdpAddress to,
                std::span<const std::uint8_t> payload);
    [[nodiscard]] std::uint64_t dropped() const { return dropped_.load(); }

   private:
    friend class CaptureFile;
    Lane(CaptureFile& file, std::size_t slots, std::size_t reserve_bytes);
    SpscRing<Slot*> free_;    // the writer -> the recording thread
    SpscRing<Slot*> queued_;  // the recording thread -> the writer
    CaptureFile& file_;
    std::vector<std::unique_ptr<Slot>> pool_;
    std::atomic<std::uint64_t> dropped_{0};
  };
  // A lane of `slots` packets of up to `reserve_bytes` each without allocating (a larger one
  // grows its slot once); it must not outlive the file. What it queued is written after its
  // holder lets it go.
  std::shared_ptr<Lane> lane(std::size_t slots, std::size_t reserve_bytes);

  // Blocks until everything queued so far is in the file, and flushes it.
  void flush();

  [[nodiscard]] const std::string& kind() const { return kind_; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // The errno that ended the capture (ENOSPC, EIO, EFBIG, ...); 0 while it is being written.
  [[nodiscard]] int error() const { return error_.load(std::memory_order_relaxed); }

 private:
  void write_loop();
  // The writer thread: writes every packet the lanes hold now, the oldest first across lanes.
  void write_queued();
  [[nodiscard]] bool anything_queued() const;
  // Any recording thread: a packet was queued; wakes the writer if it sleeps.
  void wake_writer();

  // After writing: a failure ends the capture (logged once, the lanes told).
  void check_writer();

  std::filesystem::path path_;
  std::string kind_;
  core::PcapWriter writer_;  // the writer thread's only
  // The lanes of the packets the writer has taken but not yet written, in order (writer thread).
  std::vector<std::shared_ptr<Lane>> unflushed_;
  std::atomic<int> error_{0};
  // Lanes made and flushes asked for since the writer last looked, and the end (under the mutex:
  // never taken by a recording thread).
  std::mutex requests_mutex_;
  std::vector<std::shared_ptr<Lane>> added_lanes_;
  std::vector<std::promise<void>*> flush_requests_;
  bool ending_ = false;
  std::vector<std::shared_ptr<Lane>> lanes_;  // the writer thread's
  // The writer thread's: the lanes_ with packets to write this round, and how many.
  struct Merging {
    std::size_t lane;
    std::size_t left;
  };
  std::vector<Merging> merging_;
  WakeRequest writer_wants_waking_;
  Doorbell writer_bell_;
  std::thread thread_;
};

}  // namespace lidaremu::daemon
