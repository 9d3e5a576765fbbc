#include "daemon_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace lidaremu::test {
using Clock = std::chrono::steady_clock;

std::string daemon_path() { return LIDAREMU_TEST_DAEMON; }
std::string materials_path() { return LIDAREMU_TEST_MATERIALS; }
std::string data_path(const std::string& relative) {
  return std::string(LIDAREMU_TEST_DATA) + "/" + relative;
}

DaemonProcess::DaemonProcess(std::vector<std::string> args) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  args.insert(args.begin(), daemon_path());
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  stdout_fd_ = pipe_fds[0];
  ::fcntl(stdout_fd_, F_SETFL, O_NONBLOCK);
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    read_available(std::chrono::milliseconds(50));
    const auto at = output_.find(" hits udp://");
    if (at != std::string::npos) {
      const auto colon = output_.find(':', at + 12);
      const auto end = output_.find(' ', colon);
      if (colon != std::string::npos && end != std::string::npos) {
        hits_port_ =
            static_cast<std::uint16_t>(std::stoi(output_.substr(colon + 1, end - colon - 1)));
        return;
      }
    }
    if (!running()) break;
  }
  throw std::runtime_error("lidaremud did not start; it said: " + output_);
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

bool DaemonProcess::running() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }

void DaemonProcess::read_available(std::chrono::milliseconds wait) {
  pollfd p{stdout_fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return;
  char buf[4096];
  for (ssize_t n; (n = ::read(stdout_fd_, buf, sizeof buf)) > 0;)
    output_.append(buf, static_cast<std::size_t>(n));
}

int DaemonProcess::stop() {
  ::kill(pid_, SIGTERM);
  int status = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  int waited = 0;
  while (Clock::now() < deadline && (waited = ::waitpid(pid_, &status, WNOHANG)) == 0) {
    read_available(std::chrono::milliseconds(20));
  }
  if (waited == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  read_available(std::chrono::milliseconds(0));
  std::istringstream lines(output_);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("lidaremu_", 0) != 0) continue;
    const auto space = line.rfind(' ');
    counters_[line.substr(0, space)] = std::stoull(line.substr(space + 1));
  }
  const int code =
      waited == 0 ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  if (code != 0)
    std::fprintf(stderr, "lidaremud exited with %d; it said:\n%s\n", code, output_.c_str());
  return code;
}

std::uint64_t DaemonProcess::counter(const std::string& name_with_labels) const {
  const auto it = counters_.find(name_with_labels);
  if (it == counters_.end())
    throw std::runtime_error("no counter " + name_with_labels + " in:\n" + output_);
  return it->second;
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
                   ntohl(from.sin_addr.s_addr)});
  }
  return out;
}

void DaemonProcess::send_signal(int signal) const { ::kill(pid_, signal); }

bool DaemonProcess::wait_for_output(const std::string& text, std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (output_.find(text) == std::string::npos && std::chrono::steady_clock::now() < until) {
    read_available(std::chrono::milliseconds(20));
  }
  return output_.find(text) != std::string::npos;
}

}  // namespace lidaremu::test
