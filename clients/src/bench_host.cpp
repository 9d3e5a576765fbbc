#include "bench_host.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace lidaremu::clients {

UdpSink::UdpSink() {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  const int buffer = 64 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the socket API
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    throw std::runtime_error("bind failed");
  }
  socklen_t length = sizeof addr;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length);  // NOLINT: the socket API
  port_ = ntohs(addr.sin_port);
}

UdpSink::~UdpSink() { ::close(fd_); }

// /proc/net/snmp's Udp line: host-wide, so other traffic during the run counts too.
KernelUdpCounters read_kernel_udp_counters() {
  std::ifstream in("/proc/net/snmp");
  std::string names, values;
  while (std::getline(in, names)) {
    if (names.rfind("Udp:", 0) != 0) continue;
    std::getline(in, values);
    std::istringstream n(names), v(values);
    KernelUdpCounters c;
    for (std::string name, value; n >> name && v >> value;) {
      if (name == "InErrors") c.in_errors = std::stoull(value);
      if (name == "RcvbufErrors") c.rcvbuf_errors = std::stoull(value);
    }
    return c;
  }
  return {};
}

// User plus system CPU seconds of a process, from /proc/PID/stat.
namespace {
// User plus system CPU seconds from a /proc stat file (a process's or a thread's).
double stat_cpu_s(const std::string& path) {
  std::ifstream in(path);
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}
}  // namespace

double process_cpu_s(int pid) { return stat_cpu_s("/proc/" + std::to_string(pid) + "/stat"); }

std::map<int, ThreadCpu> thread_cpu(int pid) {
  std::map<int, ThreadCpu> threads;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    ThreadCpu t;
    std::ifstream comm(entry.path() / "comm");
    std::getline(comm, t.name);
    // The scheduler's nanoseconds on a CPU where the kernel keeps them: /proc's stat counts in
    // ticks of 10 ms, too coarse for a thread of a short run.
    std::ifstream schedstat(entry.path() / "schedstat");
    double on_cpu_ns = 0;
    t.cpu_s =
        schedstat >> on_cpu_ns ? on_cpu_ns * 1e-9 : stat_cpu_s((entry.path() / "stat").string());
    try {
      threads[std::stoi(entry.path().filename().string())] = t;
    } catch (const std::exception&) {
      // not a thread id: skipped
    }
  }
  return threads;
}

std::map<std::string, double> cpu_by_thread_name(const std::map<int, ThreadCpu>& before,
                                                 const std::map<int, ThreadCpu>& after) {
  std::map<std::string, double> by_name;
  for (const auto& [tid, t] : after) {
    const auto earlier = before.find(tid);
    by_name[t.name] += t.cpu_s - (earlier != before.end() ? earlier->second.cpu_s : 0.0);
  }
  return by_name;
}

double self_cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

LoadAffinity::LoadAffinity(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  ::sched_getaffinity(0, sizeof before_, &before_);
  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  for (const int cpu : cpus) CPU_SET(cpu, &wanted);
  set_ = ::sched_setaffinity(0, sizeof wanted, &wanted) == 0;
}

LoadAffinity::~LoadAffinity() {
  if (set_) ::sched_setaffinity(0, sizeof before_, &before_);
}

std::string cpus_allowed_list(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  constexpr std::string_view kKey = "Cpus_allowed_list:";
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(kKey, 0) != 0) continue;
    const auto value = line.find_first_not_of(" \t", kKey.size());
    return value == std::string::npos ? "" : line.substr(value);
  }
  return "";
}

}  // namespace lidaremu::clients
