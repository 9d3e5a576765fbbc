#pragma once
// The real lidaremud, started as a child process for end-to-end tests.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lidaremu::test {

class DaemonProcess {
 public:
  // Starts lidaremud with these arguments and waits (with a deadline) for its "hits" line.
  explicit DaemonProcess(std::vector<std::string> args);
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  [[nodiscard]] std::uint16_t hits_port() const { return hits_port_; }
  // SIGTERM, wait for exit, parse the counters it prints. Returns the exit code.
  int stop();
  [[nodiscard]] std::uint64_t counter(const std::string& name_with_labels) const;
  [[nodiscard]] const std::string& output() const { return output_; }
  void send_signal(int signal) const;
  // Reads the daemon's stdout until `text` appears (true) or `deadline` passes (false).
  bool wait_for_output(const std::string& text, std::chrono::milliseconds deadline);
  [[nodiscard]] bool running() const;

 private:
  void read_available(std::chrono::milliseconds wait);
  int pid_ = -1;
  int stdout_fd_ = -1;
  std::uint16_t hits_port_ = 0;
  std::string output_;
  std::map<std::string, std::uint64_t> counters_;
};

// A UDP socket on 127.0.0.1:0 that collects datagrams.
class UdpReceiver {
 public:
  UdpReceiver();
  ~UdpReceiver();
  UdpReceiver(const UdpReceiver&) = delete;
  UdpReceiver& operator=(const UdpReceiver&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::string url() const { return "udp://127.0.0.1:" + std::to_string(port_); }
  struct Datagram {
    std::vector<std::uint8_t> bytes;
    double arrival_s;
    std::uint32_t source_ip;  // host order
  };
  // Receives until `count` datagrams arrived or nothing came for `quiet`, or `deadline` passed.
  std::vector<Datagram> receive(std::size_t count, std::chrono::milliseconds quiet,
                                std::chrono::milliseconds deadline);

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

std::string daemon_path();
std::string materials_path();
std::string data_path(const std::string& relative);

}  // namespace lidaremu::test
