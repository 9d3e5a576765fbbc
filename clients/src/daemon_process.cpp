#include "lidaremu/clients/daemon_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace lidaremu::clients {
using Clock = std::chrono::steady_clock;

DaemonProcess::DaemonProcess(const std::string& executable, std::vector<std::string> args,
                             const std::vector<int>& cpus, std::chrono::seconds start_deadline) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  args.insert(args.begin(), executable);
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  for (const int cpu : cpus) CPU_SET(cpu, &allowed);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    // The daemon dies with the thread that started it: a test or bench killed mid-run would
    // otherwise leave it running, holding its ports, for whatever runs next. The parent may have
    // died before the request took effect.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(125);
    if (!cpus.empty() && ::sched_setaffinity(0, sizeof allowed, &allowed) != 0) ::_exit(126);
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
  const auto deadline = Clock::now() + start_deadline;
  while (Clock::now() < deadline) {
    read_available(std::chrono::milliseconds(50));
    if (const auto ports = hits_ports(); !ports.empty()) {
      hits_port_ = ports.front();
      return;
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

std::vector<std::uint16_t> DaemonProcess::hits_ports() const {
  std::vector<std::uint16_t> ports;
  constexpr std::string_view kMark = " hits udp://";
  for (auto at = output_.find(kMark); at != std::string::npos;
       at = output_.find(kMark, at + kMark.size())) {
    const auto colon = output_.find(':', at + kMark.size());
    const auto end = output_.find(' ', colon);
    if (colon == std::string::npos || end == std::string::npos) break;
    ports.push_back(
        static_cast<std::uint16_t>(std::stoi(output_.substr(colon + 1, end - colon - 1))));
  }
  return ports;
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
    const std::string value = line.substr(space + 1);
    values_[line.substr(0, space)] = std::stod(value);
    counters_[line.substr(0, space)] = static_cast<std::uint64_t>(std::stod(value));
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

double DaemonProcess::value(const std::string& name_with_labels) const {
  const auto it = values_.find(name_with_labels);
  if (it == values_.end())
    throw std::runtime_error("no value " + name_with_labels + " in:\n" + output_);
  return it->second;
}

void DaemonProcess::send_signal(int signal) const { ::kill(pid_, signal); }

bool DaemonProcess::wait_for_output(const std::string& text, std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (output_.find(text) == std::string::npos && std::chrono::steady_clock::now() < until) {
    read_available(std::chrono::milliseconds(20));
  }
  return output_.find(text) != std::string::npos;
}

}  // namespace lidaremu::clients
