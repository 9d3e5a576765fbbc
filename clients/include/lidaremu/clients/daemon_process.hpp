#pragma once
// lidaremud as a child process: started with arguments, its output read, signalled, stopped,
// and the counters it prints on exit parsed. For tools (lidaremu-bench) and end-to-end tests.
//
// Its output is read all the time, on a thread of its own: read only when asked, a daemon that
// printed more than the pipe holds (64 KiB) between two asks blocked on the write, whichever of
// its threads logged (its sender, its processing), and the run measured the stall.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
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
  // SIGTERM, wait for exit, parse the counters it prints. Returns the exit code (the same again
  // once stopped).
  int stop();
  [[nodiscard]] std::uint64_t counter(const std::string& name_with_labels) const;
  // The same line's value as a number (seconds, sums: not whole).
  [[nodiscard]] double value(const std::string& name_with_labels) const;
  // What the daemon printed so far (stdout and stderr).
  [[nodiscard]] std::string output() const;
  void send_signal(int signal) const;
  // Waits until `text` appears in the output (true) or `deadline` passes (false).
  bool wait_for_output(const std::string& text, std::chrono::milliseconds deadline);
  // Waits up to `wait` for the daemon to print more.
  void read_output(std::chrono::milliseconds wait);
  [[nodiscard]] bool running() const;
  [[nodiscard]] int pid() const { return pid_; }

 private:
  // The reading thread: appends what the daemon prints until its end of the pipe closes.
  void drain(const std::stop_token& stop);
  // Appends what the pipe holds now; false at its end.
  bool read_available();
  void stop_reading();
  int pid_ = -1;
  int exit_code_ = -1;
  int stdout_fd_ = -1;
  std::uint16_t hits_port_ = 0;
  mutable std::mutex output_mutex_;
  std::condition_variable output_grew_;
  std::string output_;
  std::jthread reader_;
  std::map<std::string, std::uint64_t> counters_;
  std::map<std::string, double> values_;
};

}  // namespace lidaremu::clients
