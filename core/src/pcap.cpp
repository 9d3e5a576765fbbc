#include "lidaremu/core/pcap.hpp"

#include <pcap/pcap.h>

#include <span>
#include <stdexcept>

#include "lidaremu/core/byte_io.hpp"

namespace lidaremu::core {
namespace {
constexpr std::size_t kEthernetHeader = 14;
constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
constexpr std::uint16_t kEtherTypeVlan = 0x8100;
constexpr std::uint8_t kProtocolUdp = 17;
constexpr std::size_t kUdpHeader = 8;

std::uint32_t load_be32(std::span<const std::uint8_t> in, std::size_t at) {
  return (std::uint32_t{in[at]} << 24) | (std::uint32_t{in[at + 1]} << 16) |
         (std::uint32_t{in[at + 2]} << 8) | in[at + 3];
}
}  // namespace

PcapReader::PcapReader(const std::filesystem::path& file) {
  char error[PCAP_ERRBUF_SIZE] = {};
  handle_ = pcap_open_offline(file.c_str(), error);
  if (!handle_) throw std::runtime_error(file.string() + ": cannot read as pcap: " + error);
}

PcapReader::~PcapReader() {
  if (handle_) pcap_close(static_cast<pcap_t*>(handle_));
}

std::optional<UdpDatagram> PcapReader::next() {
  auto* pcap = static_cast<pcap_t*>(handle_);
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(pcap, &header, &data) == 1) {
    const std::span<const std::uint8_t> frame(data, header->caplen);
    const double time_s = header->ts.tv_sec + header->ts.tv_usec * 1e-6;
    if (frame.size() < kEthernetHeader) {
      ++frames_skipped_;
      continue;
    }
    std::size_t at = 12;
    std::uint16_t ether_type = load_be16(frame, at);
    if (ether_type == kEtherTypeVlan && frame.size() >= kEthernetHeader + 4) {
      at += 4;
      ether_type = load_be16(frame, at);
    }
    if (ether_type != kEtherTypeIpv4) {
      ++frames_skipped_;
      continue;
    }
    if (auto datagram = take_ipv4(frame.data() + at + 2, frame.size() - at - 2, time_s)) {
      return datagram;
    }
  }
  return std::nullopt;
}

std::optional<UdpDatagram> PcapReader::take_ipv4(const std::uint8_t* ip_bytes, std::size_t length,
                                                 double time_s) {
  const std::span<const std::uint8_t> ip(ip_bytes, length);
  if (ip.size() < 20 || (ip[0] >> 4) != 4) {
    ++frames_skipped_;
    return std::nullopt;
  }
  const std::size_t header_len = std::size_t{ip[0] & 0x0Fu} * 4u;
  const std::size_t total_len = std::min<std::size_t>(load_be16(ip, 2), ip.size());
  if (ip[9] != kProtocolUdp || header_len < 20 || total_len < header_len) {
    ++frames_skipped_;
    return std::nullopt;
  }
  const std::uint16_t flags_offset = load_be16(ip, 6);
  const bool more_fragments = (flags_offset & 0x2000) != 0;
  const std::size_t fragment_offset = std::size_t{flags_offset & 0x1FFFu} * 8u;
  const std::uint32_t source = load_be32(ip, 12);
  const auto body = ip.subspan(header_len, total_len - header_len);

  std::vector<std::uint8_t> whole;
  if (!more_fragments && fragment_offset == 0) {
    whole.assign(body.begin(), body.end());
  } else {
    const auto key = std::make_tuple(source, load_be32(ip, 16), load_be16(ip, 4));
    Fragments& f = pending_[key];
    f.pieces[fragment_offset].assign(body.begin(), body.end());
    if (!more_fragments) f.total = fragment_offset + body.size();
    if (f.total == 0) return std::nullopt;
    std::size_t covered = 0;
    for (const auto& [offset, piece] : f.pieces) {
      if (offset != covered) return std::nullopt;  // a hole: wait for more
      covered += piece.size();
    }
    if (covered != f.total) return std::nullopt;
    whole.reserve(f.total);
    for (const auto& [offset, piece] : f.pieces)
      whole.insert(whole.end(), piece.begin(), piece.end());
    pending_.erase(key);
  }
  if (whole.size() < kUdpHeader) {
    ++frames_skipped_;
    return std::nullopt;
  }
  UdpDatagram d;
  d.capture_time_s = time_s;
  d.source_ip = source;
  d.source_port = load_be16(whole, 0);
  d.destination_port = load_be16(whole, 2);
  const std::size_t udp_len = std::min<std::size_t>(load_be16(whole, 4), whole.size());
  d.payload.assign(whole.begin() + kUdpHeader, whole.begin() + std::max(udp_len, kUdpHeader));
  return d;
}

}  // namespace lidaremu::core
