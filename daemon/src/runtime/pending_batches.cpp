#include "lidaremu/daemon/runtime/pending_batches.hpp"

#include <algorithm>
#include <cstring>

namespace lidaremu::daemon {

std::size_t PendingBatches::bytes_for(std::uint32_t columns, std::size_t rows_per_column) {
  return std::size_t{columns} * (rows_per_column * kBytesPerRow + kFramingBytesPerColumn +
                                 sizeof(Entry) + sizeof(std::uint32_t));
}

void PendingBatches::reserve(std::uint32_t columns, std::size_t rows_per_column) {
  bytes_.resize(std::size_t{columns} * (rows_per_column * kBytesPerRow + kFramingBytesPerColumn));
  entries_.resize(columns);  // a batch claims a column at least, else it is not kept
  first_copy_of_.assign(columns, kUnclaimed);
  clear();
}

void PendingBatches::clear() {
  std::fill(first_copy_of_.begin(), first_copy_of_.end(), kUnclaimed);
  used_ = 0;
  count_.store(0, std::memory_order_relaxed);
}

void PendingBatches::claim(std::uint32_t first_column, std::uint32_t column_count,
                           std::uint32_t batch) {
  const auto end =
      std::min<std::size_t>(std::size_t{first_column} + column_count, first_copy_of_.size());
  for (std::size_t c = first_column; c < end; ++c) {
    if (first_copy_of_[c] == kUnclaimed) first_copy_of_[c] = batch;
  }
}

bool PendingBatches::append(std::span<const std::uint8_t> datagram, std::uint32_t first_column,
                            std::uint32_t column_count) {
  const std::uint32_t index = count_.load(std::memory_order_relaxed);
  if (index >= entries_.size() || datagram.size() > bytes_.size() - used_) return false;
  std::memcpy(bytes_.data() + used_, datagram.data(), datagram.size());
  entries_[index] = {used_, datagram.size()};
  used_ += datagram.size();
  claim(first_column, column_count, index);
  count_.store(index + 1, std::memory_order_release);
  return true;
}

void PendingBatches::claim_converted(std::uint32_t first_column, std::uint32_t column_count) {
  claim(first_column, column_count, kConvertedAtOnce);
}

}  // namespace lidaremu::daemon
