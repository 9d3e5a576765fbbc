#pragma once
// The real lidaremud, started as a child process for end-to-end tests.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lidaremu/clients/daemon_process.hpp"

namespace lidaremu::test {

// Sanitized daemons run several times slower: checks that depend on keeping up with a sensor's
// real rate hold in the normal build only (as the [pacing] tests).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// The built lidaremud.
class DaemonProcess : public clients::DaemonProcess {
 public:
  explicit DaemonProcess(std::vector<std::string> args);
  // SIGSTOP, returning once every thread shows as stopped (each stops as the kernel next
  // schedules it: until then the input thread may still read). What is sent meanwhile waits in
  // the kernel's buffers; send_signal(SIGCONT) lets the daemon read it all at once. False when
  // the threads did not all stop within a second.
  [[nodiscard]] bool freeze() const;
};

// "udp://127.0.0.1:PORT" of the daemon's (first) hit input.
std::string hits_url(const DaemonProcess& d);
// "http://HOST:PORT" of the daemon's control endpoint, as it printed it (started with --http).
std::string control_url(const DaemonProcess& d);

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
    std::uint16_t source_port;
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
struct HttpReply {
  int status = 0;  // 0: no answer at all
  std::string body;
};
// One request through tests/support/http_request.py (the standard library's HTTP client): a
// body goes as JSON unless `headers` ("Name: value") give another Content-Type.
HttpReply http_request(const std::string& method, const std::string& url,
                       const std::string& body = "", const std::string& token = "",
                       const std::vector<std::string>& headers = {});

// A raw TCP conversation: connects to IP:PORT, sends `bytes`, and collects what comes back until
// the peer closes, `wait` passes, or (when given) the reply holds `until`. `closed` tells whether
// the peer closed. Throws when it cannot connect.
struct TcpReply {
  std::string bytes;
  bool closed = false;
};
TcpReply tcp_exchange(const std::string& ip, std::uint16_t port, const std::string& bytes,
                      std::chrono::milliseconds wait, const std::string& until = "");

// A whole file's bytes ("" when it cannot be read).
std::string slurp(const std::string& path);

// How often the thread whose /proc directory is `task` (/proc/PID/task/TID) has given up its CPU
// to wait (voluntary_ctxt_switches): each is a wake-up. Nothing when it cannot be read.
std::optional<std::uint64_t> wake_ups(const std::string& task);

}  // namespace lidaremu::test
