#pragma once
// Reads UDP datagrams from classic pcap captures (libpcap), reassembling IPv4 fragments the way
// a receiving host does: large Ouster packets arrive fragmented in real captures.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
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

}  // namespace lidaremu::core
