#pragma once
// --pcap: every packet the daemon emits, from every sensor, in one capture file as a real
// network tap would record it (IPv4 fragments included).
#include <filesystem>
#include <mutex>
#include <span>

#include "lidaremu/core/pcap.hpp"

namespace lidaremu::daemon {

class CaptureFile;
class LiveView;

// Where a sensor also records what it emits (--pcap) and what it receives (--record), and the
// live view its decoded frames go to (Foxglove, exports).
struct Recorders {
  CaptureFile* output = nullptr;
  CaptureFile* input = nullptr;
  LiveView* view = nullptr;
};

class CaptureFile {
 public:
  explicit CaptureFile(const std::filesystem::path& file) : writer_(file) {}
  // Called by each sensor's emit thread after a send; one short lock per packet keeps the file
  // in send order across sensors.
  void record(double unix_time_s, core::UdpAddress from, core::UdpAddress to,
              std::span<const std::uint8_t> payload) {
    const std::scoped_lock lock(mutex_);
    writer_.write(unix_time_s, from, to, payload);
  }
  void flush() {
    const std::scoped_lock lock(mutex_);
    writer_.flush();
  }

 private:
  std::mutex mutex_;
  core::PcapWriter writer_;
};

}  // namespace lidaremu::daemon
