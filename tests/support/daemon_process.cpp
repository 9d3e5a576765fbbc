#include "daemon_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace lidaremu::test {
using Clock = std::chrono::steady_clock;

std::string daemon_path() { return LIDAREMU_TEST_DAEMON; }
std::string materials_path() { return LIDAREMU_TEST_MATERIALS; }
std::string data_path(const std::string& relative) {
  return std::string(LIDAREMU_TEST_DATA) + "/" + relative;
}

DaemonProcess::DaemonProcess(std::vector<std::string> args)
    // Under a sanitizer the largest models take seconds to build their pipeline (an AT128:
    // 7 s under ThreadSanitizer, near the usual 10 s deadline).
    : clients::DaemonProcess(daemon_path(), std::move(args), {},
                             std::chrono::seconds(kSanitized ? 60 : 10)) {}

bool DaemonProcess::freeze() const {
  send_signal(SIGSTOP);
  const auto stopped = [&] {
    const std::string tasks = "/proc/" + std::to_string(pid()) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks)) {
      const std::string stat = slurp(task.path().string() + "/stat");
      const auto after_name = stat.rfind(')');
      if (after_name == std::string::npos || stat.compare(after_name + 2, 1, "T") != 0) {
        return false;
      }
    }
    return true;
  };
  for (int i = 0; i < 200 && !stopped(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return stopped();
}

std::string hits_url(const DaemonProcess& d) {
  return "udp://127.0.0.1:" + std::to_string(d.hits_port());
}

std::string control_url(const DaemonProcess& d) {
  const std::string& out = d.output();
  const auto at = out.find("control http://");
  if (at == std::string::npos) throw std::runtime_error("the daemon printed no control endpoint");
  const auto start = at + std::string_view("control ").size();
  return out.substr(start, out.find(' ', start) - start);
}

UdpReceiver::UdpReceiver() {
  fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int buffer = 32 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the socket API
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("bind failed");
  socklen_t len = sizeof addr;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);  // NOLINT: the socket API
  port_ = ntohs(addr.sin_port);
}

UdpReceiver::~UdpReceiver() { ::close(fd_); }

std::vector<UdpReceiver::Datagram> UdpReceiver::receive(std::size_t count,
                                                        std::chrono::milliseconds quiet,
                                                        std::chrono::milliseconds deadline) {
  std::vector<Datagram> out;
  const auto start = Clock::now();
  auto last = start;
  std::vector<std::uint8_t> buf(65536);
  while (out.size() < count && Clock::now() - start < deadline && Clock::now() - last < quiet) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 10) <= 0) continue;
    sockaddr_in from{};
    socklen_t from_length = sizeof from;
    const ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), 0,
                                 reinterpret_cast<sockaddr*>(&from),  // NOLINT: the socket API
                                 &from_length);
    if (n < 0) continue;
    last = Clock::now();
    out.push_back({{buf.begin(), buf.begin() + n},
                   std::chrono::duration<double>(last - start).count(),
                   ntohl(from.sin_addr.s_addr),
                   ntohs(from.sin_port)});
  }
  return out;
}

HttpReply http_request(const std::string& method, const std::string& url, const std::string& body,
                       const std::string& token, const std::vector<std::string>& headers) {
  const std::string out = "/tmp/lidaremu-http-reply-" + std::to_string(::getpid()) + ".txt";
  std::string command = "python3 " + std::string(LIDAREMU_TEST_SUPPORT_DIR) + "/http_request.py " +
                        method + " '" + url + "' '" + body + "' '" + token + "'";
  for (const auto& h : headers) command += " '" + h + "'";
  if (std::system((command + " > " + out).c_str()) != 0) return {};  // NOLINT(cert-env33-c)
  std::ifstream in(out, std::ios::binary);
  HttpReply reply;
  in >> reply.status;
  in.get();  // the status line's end
  reply.body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::remove(out.c_str());
  return reply;
}

TcpReply tcp_exchange(const std::string& ip, std::uint16_t port, const std::string& bytes,
                      std::chrono::milliseconds wait, const std::string& until) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  ::inet_pton(AF_INET, ip.c_str(), &to.sin_addr);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    throw std::runtime_error("tcp_exchange: cannot connect to " + ip + ":" + std::to_string(port));
  }
  if (!bytes.empty()) (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  TcpReply reply;
  const auto deadline = Clock::now() + wait;
  char buffer[4096];
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (::poll(&p, 1, static_cast<int>(std::max<long long>(left, 0))) <= 0) break;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
      reply.closed = true;
      break;
    }
    reply.bytes.append(buffer, static_cast<std::size_t>(n));
    if (!until.empty() && reply.bytes.find(until) != std::string::npos) break;
  }
  ::close(fd);
  return reply;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<std::uint64_t> wake_ups(const std::string& task) {
  const std::string status = slurp(task + "/status");
  const std::string field = "\nvoluntary_ctxt_switches:";
  const auto at = status.find(field);
  if (at == std::string::npos) return std::nullopt;
  return std::stoull(status.substr(at + field.size()));
}

}  // namespace lidaremu::test
