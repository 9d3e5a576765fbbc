#include "lidaremu/daemon/ops/capture.hpp"

#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"

namespace lidaremu::daemon {

CaptureFile::CaptureFile(const std::filesystem::path& file)
    : writer_(file), thread_([this] {
        leave_signals_to_the_main_thread();
        run_guarded("the capture writer", [this] { write_loop(); });
      }) {}

CaptureFile::~CaptureFile() {
  queue_.push({});  // the end: no lane, no flush request
  thread_.join();
}

CaptureFile::Lane::Lane(CaptureFile& file, std::size_t slots, std::size_t reserve_bytes)
    : file_(file) {
  for (std::size_t i = 0; i < slots; ++i) {
    pool_.push_back(std::make_unique<Slot>());
    pool_.back()->bytes.reserve(reserve_bytes);
    free_.push(pool_.back().get());
  }
}

bool CaptureFile::Lane::record(double unix_time_s, core::UdpAddress from, core::UdpAddress to,
                               std::span<const std::uint8_t> payload) {
  Slot* slot = nullptr;
  if (!free_.try_pop(slot)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  slot->unix_time_s = unix_time_s;
  slot->from = from;
  slot->to = to;
  slot->bytes.assign(payload.begin(), payload.end());
  file_.queue_.push({shared_from_this(), slot, nullptr});
  return true;
}

std::shared_ptr<CaptureFile::Lane> CaptureFile::lane(std::size_t slots, std::size_t reserve_bytes) {
  return std::shared_ptr<Lane>(new Lane(*this, slots, reserve_bytes));
}

void CaptureFile::flush() {
  std::promise<void> flushed;
  auto done = flushed.get_future();
  queue_.push({nullptr, nullptr, &flushed});
  done.wait();
}

void CaptureFile::write_loop() {
  for (;;) {
    Entry e;
    queue_.pop(e);
    if (e.slot) {
      writer_.write(e.slot->unix_time_s, e.slot->from, e.slot->to, e.slot->bytes);
      e.lane->free_.push(e.slot);
      e.lane.reset();
    } else if (e.flushed) {
      writer_.flush();
      e.flushed->set_value();
    } else {
      writer_.flush();
      return;
    }
  }
}

}  // namespace lidaremu::daemon
