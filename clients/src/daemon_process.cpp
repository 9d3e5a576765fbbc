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
  reader_ = std::jthread([this](const std::stop_token& stop) { drain(stop); });
  const auto deadline = Clock::now() + start_deadline;
  while (Clock::now() < deadline) {
    read_output(std::chrono::milliseconds(50));
    if (const auto ports = hits_ports(); !ports.empty()) {
      hits_port_ = ports.front();
      return;
    }
    if (!running()) break;
  }
  const std::string said = output();
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  stop_reading();
  ::close(stdout_fd_);
  throw std::runtime_error("lidaremud did not start; it said: " + said);
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  stop_reading();
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

void DaemonProcess::drain(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    pollfd p{stdout_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    if (!read_available()) return;  // the daemon and its children are gone
  }
}

bool DaemonProcess::read_available() {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n > 0) {
      {
        const std::lock_guard lock(output_mutex_);
        output_.append(buf, static_cast<std::size_t>(n));
      }
      output_grew_.notify_all();
      continue;
    }
    return n != 0;  // 0: the end; -1: nothing more for now (or an error, tried again later)
  }
}

void DaemonProcess::stop_reading() {
  if (!reader_.joinable()) return;
  reader_.request_stop();
  reader_.join();
  read_available();  // whatever the reader had not taken yet
}

std::string DaemonProcess::output() const {
  const std::lock_guard lock(output_mutex_);
  return output_;
}

void DaemonProcess::read_output(std::chrono::milliseconds wait) {
  std::unique_lock lock(output_mutex_);
  const std::size_t before = output_.size();
  output_grew_.wait_for(lock, wait, [&] { return output_.size() != before; });
}

std::vector<std::uint16_t> DaemonProcess::hits_ports() const {
  const std::string said = output();
  std::vector<std::uint16_t> ports;
  constexpr std::string_view kMark = " hits udp://";
  for (auto at = said.find(kMark); at != std::string::npos;
       at = said.find(kMark, at + kMark.size())) {
    const auto colon = said.find(':', at + kMark.size());
    const auto end = said.find(' ', colon);
    if (colon == std::string::npos || end == std::string::npos) break;
    ports.push_back(static_cast<std::uint16_t>(std::stoi(said.substr(colon + 1, end - colon - 1))));
  }
  return ports;
}

bool DaemonProcess::running() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }

int DaemonProcess::stop() {
  if (pid_ <= 0) return exit_code_;  // stopped already: kill(-1) would signal every process
  ::kill(pid_, SIGTERM);
  int status = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  int waited = 0;
  while (Clock::now() < deadline && (waited = ::waitpid(pid_, &status, WNOHANG)) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (waited == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  stop_reading();
  const std::string said = output();
  std::istringstream lines(said);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("lidaremu_", 0) != 0) continue;
    const auto space = line.rfind(' ');
    const std::string value = line.substr(space + 1);
    values_[line.substr(0, space)] = std::stod(value);
    counters_[line.substr(0, space)] = static_cast<std::uint64_t>(std::stod(value));
  }
  exit_code_ =
      waited == 0 ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  if (exit_code_ != 0)
    std::fprintf(stderr, "lidaremud exited with %d; it said:\n%s\n", exit_code_, said.c_str());
  return exit_code_;
}

std::uint64_t DaemonProcess::counter(const std::string& name_with_labels) const {
  const auto it = counters_.find(name_with_labels);
  if (it == counters_.end())
    throw std::runtime_error("no counter " + name_with_labels + " in:\n" + output());
  return it->second;
}

double DaemonProcess::value(const std::string& name_with_labels) const {
  const auto it = values_.find(name_with_labels);
  if (it == values_.end())
    throw std::runtime_error("no value " + name_with_labels + " in:\n" + output());
  return it->second;
}

void DaemonProcess::send_signal(int signal) const {
  if (pid_ > 0) ::kill(pid_, signal);  // stopped: no process of its own (-1 means every one)
}

bool DaemonProcess::wait_for_output(const std::string& text, std::chrono::milliseconds deadline) {
  std::unique_lock lock(output_mutex_);
  return output_grew_.wait_for(lock, deadline,
                               [&] { return output_.find(text) != std::string::npos; });
}

}  // namespace lidaremu::clients
