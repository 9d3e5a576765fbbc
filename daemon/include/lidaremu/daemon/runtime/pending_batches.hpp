#pragma once
// A frame's framed batches, accepted but not yet turned into hits: the input thread checks each
// datagram, marks its columns and copies its bytes here (its receive buffers are reused at
// once); the processing thread converts what is pending, many batches at once on the physics'
// workers, before the physics takes their columns. The input thread's share of a beam is then a
// check and a copy, not the conversion (issue 32: one sensor's input thread was its serial part).
//
// Bounded: room for a frame's worth of columns at the layout's rows each, allocated once. A batch
// that does not fit is the input thread's to convert at once (correct, only serial).
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

namespace lidaremu::daemon {

class PendingBatches {
 public:
  // Bytes a column may take: its rows at 8 floats and an object id each, and its share of a
  // datagram's own framing (a HitBatch's header and vectors: well under 256 bytes a batch, and a
  // batch carries one column at least).
  static constexpr std::size_t kFramingBytesPerColumn = 256;
  static constexpr std::size_t kBytesPerRow = 8 * sizeof(float) + sizeof(std::uint32_t);
  // A column a batch converted by the input thread brought (no pending batch claims it).
  static constexpr std::uint32_t kConvertedAtOnce = 0xffffffffu;
  static constexpr std::uint32_t kUnclaimed = 0xfffffffeu;

  // Room for `columns` columns of `rows_per_column` rows.
  void reserve(std::uint32_t columns, std::size_t rows_per_column);
  // What reserve allocates (the daemon's memory estimate).
  static std::size_t bytes_for(std::uint32_t columns, std::size_t rows_per_column);
  [[nodiscard]] bool reserved() const { return !first_copy_of_.empty(); }

  // Input thread, the frame begun afresh (nothing of the frame is being converted).
  void clear();
  // Input thread: the batch's bytes kept for conversion, claiming the columns
  // [first_column, first_column + column_count) not claimed before; false when full (nothing
  // kept). Visible to the processing thread once the frame's progress is published after it.
  bool append(std::span<const std::uint8_t> datagram, std::uint32_t first_column,
              std::uint32_t column_count);
  // Input thread: columns a batch converted at once brought first.
  void claim_converted(std::uint32_t first_column, std::uint32_t column_count);

  // Processing thread: batches appended so far, and each one's bytes.
  [[nodiscard]] std::uint32_t count() const { return count_.load(std::memory_order_acquire); }
  [[nodiscard]] std::span<const std::uint8_t> batch(std::uint32_t index) const {
    const Entry& e = entries_[index];
    return {bytes_.data() + e.offset, e.size};
  }
  // Per column: the batch that brought it first (its rows are the ones kept).
  [[nodiscard]] std::span<const std::uint32_t> first_copy_of() const { return first_copy_of_; }

 private:
  struct Entry {
    std::size_t offset = 0;
    std::size_t size = 0;
  };
  void claim(std::uint32_t first_column, std::uint32_t column_count, std::uint32_t batch);

  std::vector<std::uint8_t> bytes_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> first_copy_of_;
  std::size_t used_ = 0;
  std::atomic<std::uint32_t> count_{0};
};

}  // namespace lidaremu::daemon
