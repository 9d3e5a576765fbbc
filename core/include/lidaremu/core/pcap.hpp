#pragma once
// Reads UDP datagrams from classic pcap captures (libpcap), reassembling IPv4 fragments the way
// a receiving host does: large Ouster packets arrive fragmented in real captures.
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace lidaremu::core {

struct UdpDatagram {
  double capture_time_s = 0;
  std::uint32_t source_ip = 0;
  std::uint16_t source_port = 0;
  std::uint16_t destination_port = 0;
  std::vector<std::uint8_t> payload;
};

class PcapReader {
 public:
  // Throws std::runtime_error naming the file when it cannot be opened.
  explicit PcapReader(const std::filesystem::path& file);
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  // The next whole UDP datagram, or nothing at the end of the file.
  std::optional<UdpDatagram> next();
  [[nodiscard]] std::size_t frames_skipped() const { return frames_skipped_; }

 private:
  std::optional<UdpDatagram> take_ipv4(const std::uint8_t* ip, std::size_t length, double time_s);

  struct Fragments {
    std::map<std::size_t, std::vector<std::uint8_t>> pieces;  // by byte offset
    std::size_t total = 0;                                    // known once the last arrives
  };
  void* handle_ = nullptr;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint16_t>, Fragments> pending_;
  std::size_t frames_skipped_ = 0;
};

// Writes UDP datagrams as a real capture holds them: Ethernet II, IPv4 (header checksum), UDP
// (checksum), and IPv4 fragments of at most `mtu` bytes for datagrams that do not fit, as a real
// sensor's stack sends large Ouster packets; the classic pcap format (microsecond stamps, the
// writing host's byte order), as libpcap's dumper writes it. Not thread-safe: one writer per
// thread or a lock.
//
// A write that fails (a full disk, an I/O error, the file size limit) ends the capture: the file
// is cut back to its last whole datagram (all its fragments), so every reader takes it as a
// capture that ends there, and error() says why, datagrams_lost() how many it had taken that
// are not in the file; writes after it do nothing.
struct UdpAddress {
  std::uint32_t ip = 0;  // host order, 127.0.0.1 = 0x7F000001
  std::uint16_t port = 0;
};
class PcapWriter {
 public:
  static constexpr std::size_t kMaxDatagram = 65507;
  // Throws std::runtime_error naming the file when it cannot be created.
  explicit PcapWriter(const std::filesystem::path& file, std::size_t mtu = 1500);
  // Writes what is buffered, and closes.
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Returns the number of link frames taken (1, or the fragment count; written by the next
  // flush at the latest); 0 if too large, or once the file has failed.
  std::size_t write(double time_s, UdpAddress from, UdpAddress to,
                    std::span<const std::uint8_t> payload);
  // Writes what is buffered; false once the file has failed.
  bool flush();
  // The errno of the write that failed (ENOSPC, EIO, EFBIG, ...); 0 while none has.
  [[nodiscard]] int error() const { return error_; }
  // Datagrams taken and not yet written (0 just after a flush).
  [[nodiscard]] std::size_t buffered_datagrams() const { return datagram_ends_.size(); }
  // Datagrams taken that the failure left out of the file.
  [[nodiscard]] std::size_t datagrams_lost() const { return datagrams_lost_; }

 private:
  void write_frame(double time_s, std::size_t length);
  int fd_ = -1;
  std::vector<std::uint8_t> buffer_;        // whole datagrams' records not yet written
  std::vector<std::size_t> datagram_ends_;  // where each of them ends in buffer_
  std::size_t datagrams_lost_ = 0;
  std::uint64_t written_ = 0;  // bytes in the file, every one of whole records
  int error_ = 0;
  std::size_t mtu_;
  std::uint16_t next_ip_id_ = 1;
  std::vector<std::uint8_t> frame_;     // one link frame, reused
  std::vector<std::uint8_t> datagram_;  // UDP header + payload, reused
};

}  // namespace lidaremu::core
