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
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace lidaremu::test {
using Clock = std::chrono::steady_clock;

std::string daemon_path() { return LIDAREMU_TEST_DAEMON; }
std::string materials_path() { return LIDAREMU_TEST_MATERIALS; }
std::string data_path(const std::string& relative) {
  return std::string(LIDAREMU_TEST_DATA) + "/" + relative;
}

DaemonProcess::DaemonProcess(std::vector<std::string> args)
    : clients::DaemonProcess(daemon_path(), std::move(args)) {}

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

HttpReply http_request(const std::string& method, const std::string& url, const std::string& body,
                       const std::string& token) {
  const std::string out = "/tmp/lidaremu-http-reply-" + std::to_string(::getpid()) + ".txt";
  std::string command = "python3 " + std::string(LIDAREMU_TEST_SUPPORT_DIR) + "/http_request.py " +
                        method + " '" + url + "' '" + body + "'";
  if (!token.empty()) command += " '" + token + "'";
  if (std::system((command + " > " + out).c_str()) != 0) return {};  // NOLINT(cert-env33-c)
  std::ifstream in(out);
  HttpReply reply;
  in >> reply.status;
  reply.body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::remove(out.c_str());
  return reply;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace lidaremu::test
