#include "lidaremu/core/pcap.hpp"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
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

namespace {
constexpr std::size_t kIpv4Header = 20;

void store_be16(std::span<std::uint8_t> out, std::size_t at, std::uint16_t v) {
  out[at] = static_cast<std::uint8_t>(v >> 8);
  out[at + 1] = static_cast<std::uint8_t>(v);
}
void store_be32(std::span<std::uint8_t> out, std::size_t at, std::uint32_t v) {
  store_be16(out, at, static_cast<std::uint16_t>(v >> 16));
  store_be16(out, at + 2, static_cast<std::uint16_t>(v));
}

// RFC 1071 ones' complement sum, folded.
std::uint32_t ones_complement_sum(std::span<const std::uint8_t> bytes, std::uint32_t sum = 0) {
  for (std::size_t i = 0; i + 1 < bytes.size(); i += 2)
    sum += (std::uint32_t{bytes[i]} << 8) | bytes[i + 1];
  if (bytes.size() % 2) sum += std::uint32_t{bytes.back()} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum;
}
}  // namespace

namespace {
// The classic pcap format (libpcap's savefile.c and sf-pcap.c): a file header, then per record a
// header and the frame, every field in the writing host's byte order, told by the magic number.
constexpr std::uint32_t kPcapMagicMicroseconds = 0xA1B2C3D4;
constexpr std::uint32_t kLinkTypeEthernet = 1;  // DLT_EN10MB
constexpr std::uint32_t kSnapLength = 65535;
// Written when this much is buffered: a few hundred packets a system call.
constexpr std::size_t kFlushAt = std::size_t{256} * 1024;

void append_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  std::uint8_t bytes[4];
  std::memcpy(bytes, &v, 4);
  out.insert(out.end(), bytes, bytes + 4);
}
void append_u16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  std::uint8_t bytes[2];
  std::memcpy(bytes, &v, 2);
  out.insert(out.end(), bytes, bytes + 2);
}

}  // namespace

PcapWriter::PcapWriter(const std::filesystem::path& file, std::size_t mtu)
    : mtu_(mtu), frame_(kEthernetHeader + mtu), datagram_(kUdpHeader + kMaxDatagram) {
  if (mtu < kIpv4Header + 8 + kUdpHeader) throw std::runtime_error("pcap: MTU too small");
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error(file.string() + ": cannot write a pcap: " + std::strerror(errno));
  }
  // A flush's worth and the largest datagram's fragments with their headers: never reallocated.
  buffer_.reserve(kFlushAt + 2 * (kUdpHeader + kMaxDatagram));
  append_u32(buffer_, kPcapMagicMicroseconds);
  append_u16(buffer_, 2);  // version 2.4
  append_u16(buffer_, 4);
  append_u32(buffer_, 0);  // this zone: UTC
  append_u32(buffer_, 0);  // significant figures
  append_u32(buffer_, kSnapLength);
  append_u32(buffer_, kLinkTypeEthernet);
  if (!flush()) {
    const int why = error_;
    ::close(fd_);
    throw std::runtime_error(file.string() + ": cannot write a pcap: " + std::strerror(why));
  }
}

PcapWriter::~PcapWriter() {
  flush();
  ::close(fd_);
}

bool PcapWriter::flush() {
  if (error_ != 0) return false;
  std::size_t landed = 0;
  while (landed < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + landed, buffer_.size() - landed);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      // The file ends at its last whole datagram (or is empty, when the header failed).
      std::size_t whole = 0;
      for (const std::size_t end : datagram_ends_) {
        if (end <= landed) whole = end;
      }
      datagrams_lost_ +=
          static_cast<std::size_t>(std::count_if(datagram_ends_.begin(), datagram_ends_.end(),
                                                 [&](std::size_t end) { return end > whole; }));
      // If even this fails, a reader stops at the part record, as at a capture cut short.
      (void)::ftruncate(fd_, static_cast<off_t>(written_ == 0 ? 0 : written_ + whole));
      buffer_.clear();
      datagram_ends_.clear();
      return false;
    }
    landed += static_cast<std::size_t>(n);
  }
  written_ += buffer_.size();
  buffer_.clear();
  datagram_ends_.clear();
  return true;
}

std::size_t PcapWriter::write(double time_s, UdpAddress from, UdpAddress to,
                              std::span<const std::uint8_t> payload) {
  if (payload.size() > kMaxDatagram || error_ != 0) return 0;
  // The UDP datagram whole (its checksum covers the pseudo-header and every fragment's bytes).
  const std::size_t udp_length = kUdpHeader + payload.size();
  const std::span<std::uint8_t> udp(datagram_.data(), udp_length);
  store_be16(udp, 0, from.port);
  store_be16(udp, 2, to.port);
  store_be16(udp, 4, static_cast<std::uint16_t>(udp_length));
  store_be16(udp, 6, 0);
  std::copy(payload.begin(), payload.end(), udp.begin() + kUdpHeader);
  std::uint32_t sum = (from.ip >> 16) + (from.ip & 0xFFFF) + (to.ip >> 16) + (to.ip & 0xFFFF) +
                      kProtocolUdp + static_cast<std::uint32_t>(udp_length);
  auto checksum = static_cast<std::uint16_t>(~ones_complement_sum(udp, sum));
  store_be16(udp, 6, checksum == 0 ? 0xFFFF : checksum);

  // Ethernet II between two locally administered addresses.
  const std::span<std::uint8_t> frame(frame_);
  constexpr auto kMacs =
      std::to_array<std::uint8_t>({0x02, 0, 0, 0, 0, 0x01, 0x60, 0x76, 0x88, 0, 0, 0x01});
  std::copy(kMacs.begin(), kMacs.end(), frame.begin());
  store_be16(frame, 12, kEtherTypeIpv4);
  // Fragments carry multiples of 8 bytes, the last one the rest.
  const std::size_t per_fragment = (mtu_ - kIpv4Header) / 8 * 8;
  const std::uint16_t id = next_ip_id_++;
  std::size_t frames = 0;
  for (std::size_t offset = 0; offset < udp_length; offset += per_fragment) {
    const std::size_t length = std::min(per_fragment, udp_length - offset);
    const bool more = offset + length < udp_length;
    const std::span<std::uint8_t> ip = frame.subspan(kEthernetHeader);
    ip[0] = 0x45;  // IPv4, 5-word header
    ip[1] = 0;
    store_be16(ip, 2, static_cast<std::uint16_t>(kIpv4Header + length));
    store_be16(ip, 4, id);
    store_be16(ip, 6, static_cast<std::uint16_t>((more ? 0x2000 : 0) | (offset / 8)));
    ip[8] = 64;  // TTL
    ip[9] = kProtocolUdp;
    store_be16(ip, 10, 0);
    store_be32(ip, 12, from.ip);
    store_be32(ip, 16, to.ip);
    store_be16(ip, 10, static_cast<std::uint16_t>(~ones_complement_sum(ip.first(kIpv4Header))));
    std::copy_n(udp.begin() + static_cast<std::ptrdiff_t>(offset), length,
                ip.begin() + kIpv4Header);
    write_frame(time_s, kEthernetHeader + kIpv4Header + length);
    ++frames;
  }
  datagram_ends_.push_back(buffer_.size());
  if (buffer_.size() >= kFlushAt) flush();
  return frames;
}

void PcapWriter::write_frame(double time_s, std::size_t length) {
  const long long micros = std::llround(time_s * 1e6);
  append_u32(buffer_, static_cast<std::uint32_t>(micros / 1000000));
  append_u32(buffer_, static_cast<std::uint32_t>(micros % 1000000));
  append_u32(buffer_, static_cast<std::uint32_t>(length));  // captured
  append_u32(buffer_, static_cast<std::uint32_t>(length));  // on the wire
  buffer_.insert(buffer_.end(), frame_.begin(),
                 frame_.begin() + static_cast<std::ptrdiff_t>(length));
}

}  // namespace lidaremu::core
