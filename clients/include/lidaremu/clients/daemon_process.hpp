#pragma once
// lidaremud as a child process: started with arguments, its output read, signalled, stopped,
// and the counters it prints on exit parsed. For tools (lidaremu-bench) and end-to-end tests.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lidaremu::clients {

class DaemonProcess {
 public:
  // Starts the daemon executable with these arguments and waits (up to start_deadline) for its
  // first "hits" line; throws std::runtime_error with what it said if it never comes. cpus: the
  // CPUs it may run on (empty: the caller's); TBB sizes its workers to them. The daemon is
  // killed when the thread that started it ends (PR_SET_PDEATHSIG), its process killed or not:
  // start it on a thread that outlives it.
  DaemonProcess(const std::string& executable, std::vector<std::string> args,
                const std::vector<int>& cpus = {},
                std::chrono::seconds start_deadline = std::chrono::seconds(10));
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  [[nodiscard]] std::uint16_t hits_port() const { return hits_port_; }
  // The hit port of every sensor that has printed its line so far, in order.
  [[nodiscard]] std::vector<std::uint16_t> hits_ports() const;
  // SIGTERM, wait for exit, parse the counters it prints. Returns the exit code.
  int stop();
  [[nodiscard]] std::uint64_t counter(const std::string& name_with_labels) const;
  // The same line's value as a number (seconds, sums: not whole).
  [[nodiscard]] double value(const std::string& name_with_labels) const;
  [[nodiscard]] const std::string& output() const { return output_; }
  void send_signal(int signal) const;
  // Reads the daemon's stdout until `text` appears (true) or `deadline` passes (false).
  bool wait_for_output(const std::string& text, std::chrono::milliseconds deadline);
  // Appends whatever the daemon printed within `wait` to output().
  void read_output(std::chrono::milliseconds wait) { read_available(wait); }
  [[nodiscard]] bool running() const;
  [[nodiscard]] int pid() const { return pid_; }

 private:
  void read_available(std::chrono::milliseconds wait);
  int pid_ = -1;
  int stdout_fd_ = -1;
  std::uint16_t hits_port_ = 0;
  std::string output_;
  std::map<std::string, std::uint64_t> counters_;
  std::map<std::string, double> values_;
};

}  // namespace lidaremu::clients
