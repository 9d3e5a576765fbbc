#include "lidaremu/protocol/raw_rows.hpp"

namespace lidaremu::protocol {

BatchError RawRowAssembler::check(std::span<const std::uint8_t> datagram) const {
  const std::size_t row_bytes = sizeof(float) * floats_per_row_;
  if (datagram.empty() || datagram.size() % row_bytes != 0) return BatchError::kRawSizeNotRows;
  return BatchError::kNone;
}

}  // namespace lidaremu::protocol
