#pragma once
// What lidaremu-bench reads off the host (bench_host.cpp), for bench.cpp: a loopback UDP sink
// and its batched receive, the kernel's UDP counters, CPU time of the daemon (by thread) and of
// the bench, the CPUs each may run on.
#include <sched.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace lidaremu::clients {

// A UDP socket on 127.0.0.1:0 with a large receive buffer.
class UdpSink {
 public:
  UdpSink();
  ~UdpSink();
  UdpSink(const UdpSink&) = delete;
  UdpSink& operator=(const UdpSink&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] std::string url() const { return "udp://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

// Receives everything waiting on fd in batches; calls on_datagram(bytes) for each.
template <typename OnDatagram>
void drain_socket(int fd, std::vector<std::uint8_t>& scratch, OnDatagram&& on_datagram) {
  constexpr int kBatch = 32;
  constexpr std::size_t kSize = 65536;
  scratch.resize(kBatch * kSize);
  std::array<mmsghdr, kBatch> messages{};
  std::array<iovec, kBatch> vectors{};
  for (;;) {
    for (int i = 0; i < kBatch; ++i) {
      vectors[i] = {scratch.data() + i * kSize, kSize};
      messages[i] = {};
      messages[i].msg_hdr.msg_iov = &vectors[i];
      messages[i].msg_hdr.msg_iovlen = 1;
    }
    const int n = ::recvmmsg(fd, messages.data(), kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) return;
    for (int i = 0; i < n; ++i) {
      on_datagram(std::span<const std::uint8_t>(scratch.data() + i * kSize, messages[i].msg_len));
    }
    if (n < kBatch) return;
  }
}

struct KernelUdpCounters {
  std::uint64_t in_errors = 0;
  std::uint64_t rcvbuf_errors = 0;
};

// /proc/net/snmp's Udp line: host-wide, so other traffic during the run counts too.
KernelUdpCounters read_kernel_udp_counters();
// User plus system CPU seconds of a process, from /proc/PID/stat.
double process_cpu_s(int pid);
// The bench's own.
double self_cpu_s();

// One thread of a process: its name (/proc/PID/task/TID/comm) and its CPU seconds (the
// scheduler's time on a CPU, or user plus system time where the kernel keeps no schedstat).
struct ThreadCpu {
  std::string name;
  double cpu_s = 0;
};
// Every thread of the process, by thread id.
std::map<int, ThreadCpu> thread_cpu(int pid);
// CPU seconds per thread name between two readings (threads started in between count whole).
std::map<std::string, double> cpu_by_thread_name(const std::map<int, ThreadCpu>& before,
                                                 const std::map<int, ThreadCpu>& after);

// The bench's own threads (the calling one, and those it starts) on these CPUs while alive.
class LoadAffinity {
 public:
  explicit LoadAffinity(const std::vector<int>& cpus);
  ~LoadAffinity();
  LoadAffinity(const LoadAffinity&) = delete;
  LoadAffinity& operator=(const LoadAffinity&) = delete;
  LoadAffinity(LoadAffinity&&) = delete;
  LoadAffinity& operator=(LoadAffinity&&) = delete;

 private:
  cpu_set_t before_{};
  bool set_ = false;
};

// The kernel's list of the CPUs a process may run on ("0-1", "0"), from /proc/PID/status.
std::string cpus_allowed_list(int pid);

}  // namespace lidaremu::clients
