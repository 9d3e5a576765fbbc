// Livox SDK2 command frames: the header with its CRC-16, the data with its CRC-32, and the
// discovery answer a Mid-360 sends a host's search (FORMATS-HESAI-ROBOSENSE.md section 3).
#include <isa-l/crc.h>

#include <algorithm>
#include <boost/crc.hpp>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/livox.hpp"

namespace lidaremu::core::livox {

std::uint16_t crc16_ccitt_false(std::span<const std::uint8_t> bytes) {
  boost::crc_optimal<16, 0x1021, 0xFFFF, 0, false, false> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

// CRC-32/ISO-HDLC (zlib's): ISA-L's crc32_gzip_refl with seed 0, folded with carry-less
// multiplies (Boost's table lookup a byte was most of a Livox point packet's encoding).
std::uint32_t crc32(std::span<const std::uint8_t> bytes) {
  return crc32_gzip_refl(0, bytes.data(), bytes.size());
}

std::size_t write_command(std::span<std::uint8_t> out, const CommandHeader& header,
                          std::span<const std::uint8_t> data) {
  const std::size_t size = kCommandHeaderSize + data.size();
  if (size > out.size() || size > kMaxCommandFrame) return 0;
  const auto frame = out.first(size);
  std::fill(frame.begin(), frame.begin() + kCommandHeaderSize, std::uint8_t{0});
  const auto put = [&](CommandField name, std::uint64_t value) {
    store_raw(frame, 0, command_field(name), value);
  };
  put(CommandField::kSof, kSof);
  put(CommandField::kVersion, kCommandVersion);
  put(CommandField::kLength, size);
  put(CommandField::kSequence, header.sequence & kSequenceMask);
  put(CommandField::kCommandId, header.command_id);
  put(CommandField::kCommandType, static_cast<std::uint8_t>(header.type));
  put(CommandField::kSenderType, static_cast<std::uint8_t>(header.sender));
  put(CommandField::kHeaderCrc, crc16_ccitt_false(frame.first(kHeaderCrcCovers)));
  // The SDK writes 0, not the CRC of nothing, for a frame without data (the same value).
  put(CommandField::kDataCrc, data.empty() ? 0 : crc32(data));
  std::copy(data.begin(), data.end(), frame.begin() + kCommandHeaderSize);
  return size;
}

CommandError read_command(std::span<const std::uint8_t> datagram, CommandView& out) {
  if (datagram.size() < kCommandHeaderSize) return CommandError::kTooShort;
  const auto get = [&](CommandField name) { return load_raw(datagram, 0, command_field(name)); };
  if (get(CommandField::kSof) != kSof) return CommandError::kBadSof;
  if (get(CommandField::kVersion) != kCommandVersion) return CommandError::kBadVersion;
  const std::uint64_t length = get(CommandField::kLength);
  if (length < kCommandHeaderSize || length > datagram.size()) return CommandError::kBadLength;
  if (get(CommandField::kHeaderCrc) != crc16_ccitt_false(datagram.first(kHeaderCrcCovers))) {
    return CommandError::kBadHeaderCrc;
  }
  const auto data = datagram.subspan(kCommandHeaderSize, length - kCommandHeaderSize);
  if (get(CommandField::kDataCrc) != (data.empty() ? 0 : crc32(data))) {
    return CommandError::kBadDataCrc;
  }
  out.header.sequence = static_cast<std::uint32_t>(get(CommandField::kSequence));
  out.header.command_id = static_cast<std::uint16_t>(get(CommandField::kCommandId));
  out.header.type = static_cast<CommandType>(get(CommandField::kCommandType));
  out.header.sender = static_cast<SenderType>(get(CommandField::kSenderType));
  out.data = data;
  return CommandError::kNone;
}

std::size_t write_discovery_answer(std::span<std::uint8_t> out, std::uint32_t sequence,
                                   const UnitState& unit) {
  std::array<std::uint8_t, kDetectionSize> data{};
  data[kDetectionRetCode] = 0;
  data[kDetectionDevType] = kDevTypeMid360;
  std::copy_n(unit.serial.begin(), std::min(unit.serial.size(), kSerialBytes),
              data.begin() + kDetectionSerial);
  // The address as it is written on the wire: its first octet first.
  store_be(data, kDetectionIp, 4, unit.address);
  store_le<std::uint16_t>(data, kDetectionCmdPort, unit.command_port);
  const CommandHeader header{.sequence = sequence,
                             .command_id = static_cast<std::uint16_t>(CommandId::kDiscovery),
                             .type = CommandType::kAck,
                             .sender = SenderType::kLidar};
  return write_command(out, header, data);
}

CommandAnswer answer_command(std::span<const std::uint8_t> datagram, const UnitState& unit,
                             std::span<std::uint8_t> out, const ApplyWorkMode& apply) {
  CommandView request;
  if (read_command(datagram, request) != CommandError::kNone) return {};
  if (kCommandHeaderSize + request.data.size() < datagram.size()) {
    return {0, CommandOutcome::kTrailingBytes};
  }
  if (request.header.type != CommandType::kRequest || request.header.sender != SenderType::kHost) {
    return {0, CommandOutcome::kNotARequest};
  }
  const CommandHeader ack{.sequence = request.header.sequence,
                          .command_id = request.header.command_id,
                          .type = CommandType::kAck,
                          .sender = SenderType::kLidar};
  switch (static_cast<CommandId>(request.header.command_id)) {
    case CommandId::kDiscovery:
      return {write_discovery_answer(out, request.header.sequence, unit),
              CommandOutcome::kAnswered};
    case CommandId::kWorkModeControl: {
      const auto answer = answer_work_mode(request.data, unit, apply);
      return {write_command(out, ack, answer), CommandOutcome::kAnswered};
    }
    case CommandId::kGetInternalInfo: {
      std::array<std::uint8_t, kMaxCommandFrame - kCommandHeaderSize> data{};
      const std::size_t size = write_internal_info(request.data, unit, data);
      return {write_command(out, ack, std::span(data).first(size)), CommandOutcome::kAnswered};
    }
    default:
      return {0, CommandOutcome::kUnknownCommand};
  }
}

}  // namespace lidaremu::core::livox
