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
  {
    const std::lock_guard lock(requests_mutex_);
    ending_ = true;
  }
  writer_bell_.ring();
  thread_.join();
}

CaptureFile::Lane::Lane(CaptureFile& file, std::size_t slots, std::size_t reserve_bytes)
    : free_(std::max<std::size_t>(slots, 1)),
      queued_(std::max<std::size_t>(slots, 1)),
      file_(file) {
  for (std::size_t i = 0; i < slots; ++i) {
    pool_.push_back(std::make_unique<Slot>());
    pool_.back()->bytes.reserve(reserve_bytes);
    free_.try_push(pool_.back().get());
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
  queued_.try_push(slot);  // never full: it holds every slot
  file_.wake_writer();
  return true;
}

std::shared_ptr<CaptureFile::Lane> CaptureFile::lane(std::size_t slots, std::size_t reserve_bytes) {
  std::shared_ptr<Lane> made(new Lane(*this, slots, reserve_bytes));
  const std::lock_guard lock(requests_mutex_);
  added_lanes_.push_back(made);
  return made;
}

void CaptureFile::flush() {
  std::promise<void> flushed;
  auto done = flushed.get_future();
  {
    const std::lock_guard lock(requests_mutex_);
    flush_requests_.push_back(&flushed);
  }
  writer_bell_.ring();
  done.wait();
}

void CaptureFile::wake_writer() {
  if (writer_wants_waking_.take()) writer_bell_.ring();
}

bool CaptureFile::anything_queued() const {
  return std::any_of(lanes_.begin(), lanes_.end(),
                     [](const auto& lane) { return lane->queued_.size() > 0; });
}

void CaptureFile::write_queued() {
  // What each lane holds now, no more: a lane its thread keeps filling must not keep a flush
  // (or a lane made meanwhile) waiting for ever.
  merging_.clear();
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    if (const std::size_t queued = lanes_[i]->queued_.size(); queued > 0) {
      merging_.push_back({i, queued});
    }
  }
  // Each lane's packets are in its thread's order; across lanes, the oldest head goes first (a
  // tap's order, as one queue for every lane gave).
  const auto head_time_s = [&](const Merging& m) {
    Slot* head = nullptr;
    lanes_[m.lane]->queued_.try_front(head);
    return head->unix_time_s;
  };
  while (!merging_.empty()) {
    std::size_t oldest = 0;
    for (std::size_t i = 1; i < merging_.size(); ++i) {
      if (head_time_s(merging_[i]) < head_time_s(merging_[oldest])) oldest = i;
    }
    const std::shared_ptr<Lane>& lane = lanes_[merging_[oldest].lane];
    Slot* slot = nullptr;
    lane->queued_.try_pop(slot);
    if (writer_.error() == 0) {
      unflushed_.push_back(lane);
      writer_.write(slot->unix_time_s, slot->from, slot->to, slot->bytes);
    } else {
      lane->dropped_.fetch_add(1, std::memory_order_relaxed);  // queued when the file failed
    }
    lane->free_.try_push(slot);  // never full: it holds every slot
    check_writer();
    if (--merging_[oldest].left == 0) {
      merging_[oldest] = merging_.back();
      merging_.pop_back();
    }
  }
}

void CaptureFile::write_loop() {
  std::vector<std::promise<void>*> flushes;
  for (;;) {
    bool ending = false;
    {
      const std::lock_guard lock(requests_mutex_);
      for (auto& lane : added_lanes_) lanes_.push_back(std::move(lane));
      added_lanes_.clear();
      flushes.swap(flush_requests_);
      ending = ending_;
    }
    // Everything queued before a flush was asked for, or before the end, is in the file first.
    write_queued();
    if (!flushes.empty() || ending) {
      writer_.flush();
      check_writer();
    }
    for (std::promise<void>* flushed : flushes) flushed->set_value();
    flushes.clear();
    if (ending) return;
    // A lane its sensor has let go of, and whose packets are all written, is done with.
    std::erase_if(lanes_, [](const auto& lane) {
      if (lane.use_count() != 1) return false;
      // Its holder's last packets were queued before it let go (a release the count's read and
      // this fence pair with): they are seen here.
      std::atomic_thread_fence(std::memory_order_acquire);
      return lane->queued_.size() == 0;
    });
    // Asked to be woken, then looked again: a packet queued in between is seen either here or
    // by the ring its lane sends.
    writer_wants_waking_.ask();
    if (anything_queued()) {
      writer_wants_waking_.withdraw();
      continue;
    }
    writer_bell_.wait();
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
