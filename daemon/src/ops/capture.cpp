#include "lidaremu/daemon/ops/capture.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"

namespace lidaremu::daemon {

std::string errno_name(int error) {
  switch (error) {
    case ENOSPC:
      return "ENOSPC";
    case EIO:
      return "EIO";
    case EFBIG:
      return "EFBIG";
    case EDQUOT:
      return "EDQUOT";
    case EROFS:
      return "EROFS";
    case EACCES:
      return "EACCES";
    default:
      return "errno " + std::to_string(error);
  }
}

CaptureFile::CaptureFile(const std::filesystem::path& file, std::string kind)
    : path_(file), kind_(std::move(kind)), writer_(file), thread_([this] {
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
  if (file_.error() != 0 || !free_.try_pop(slot)) {
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
      if (writer_.error() == 0) {
        unflushed_.push_back(e.lane);
        writer_.write(e.slot->unix_time_s, e.slot->from, e.slot->to, e.slot->bytes);
      } else {
        e.lane->dropped_.fetch_add(1, std::memory_order_relaxed);  // queued when the file failed
      }
      e.lane->free_.push(e.slot);
      e.lane.reset();
    } else if (e.flushed) {
      writer_.flush();
      e.flushed->set_value();
    } else {
      writer_.flush();
      check_writer();
      return;
    }
    check_writer();
  }
}

void CaptureFile::check_writer() {
  const int failed = writer_.error();
  if (failed == 0) {
    if (writer_.buffered_datagrams() == 0) unflushed_.clear();  // all in the file
    return;
  }
  if (error_.load(std::memory_order_relaxed) != 0) return;
  // The packets the failure left out of the file count as their lanes' drops, as every one
  // after it does.
  const std::size_t lost = std::min(writer_.datagrams_lost(), unflushed_.size());
  for (std::size_t i = unflushed_.size() - lost; i < unflushed_.size(); ++i) {
    unflushed_[i]->dropped_.fetch_add(1, std::memory_order_relaxed);
  }
  unflushed_.clear();
  error_.store(failed, std::memory_order_relaxed);
  spdlog::error(
      "--{} {}: {} ({}): the capture ends at its last whole record; the sensors' streams go on",
      kind_, path_.string(), errno_name(failed), std::strerror(failed));
}

}  // namespace lidaremu::daemon
