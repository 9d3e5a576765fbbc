#pragma once
// A Foxglove WebSocket server (protocol foxglove.websocket.v1): Foxglove Studio, and the
// daemon's own web page, connect to it, see the channels advertised (one point cloud per
// sensor), subscribe, and receive each message as it is published. It runs on its own thread so
// that slow viewers never delay sensor input; a viewer that falls behind loses messages (counted),
// never memory.
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "lidaremu/daemon/net/http_server.hpp"

namespace lidaremu::daemon {

struct FoxgloveChannel {
  std::uint32_t id = 0;
  std::string topic;
  std::string encoding = "json";
  std::string schema_name;
  std::string schema;
  std::string schema_encoding = "jsonschema";
};

struct FoxgloveCounters {
  std::atomic<std::uint64_t> clients_accepted{0};
  std::atomic<std::uint64_t> clients_refused{0};  // beyond the connection limit, or not a v1 client
  std::atomic<std::uint64_t> messages_sent{0};
  std::atomic<std::uint64_t> messages_dropped{0};       // a viewer was still busy with earlier ones
  std::atomic<std::uint64_t> bad_requests{0};           // unparsable or unknown client operations
  std::atomic<std::uint64_t> subscriptions_refused{0};  // beyond the per-client limit
};

class FoxgloveServer {
 public:
  // Called on the server's thread whenever a channel's subscriber count changes.
  using OnSubscribers = std::function<void(std::uint32_t channel, int subscribers)>;
  // Binds at once (throws std::runtime_error naming the address) and starts its thread.
  FoxgloveServer(const std::string& address, std::uint16_t port, OnSubscribers on_subscribers,
                 ServerLimits limits = {});
  ~FoxgloveServer();
  FoxgloveServer(const FoxgloveServer&) = delete;
  FoxgloveServer& operator=(const FoxgloveServer&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] const FoxgloveCounters& counters() const { return *counters_; }
  // Thread-safe: the change reaches every connected client.
  void advertise(FoxgloveChannel channel);
  void unadvertise(std::uint32_t channel_id);
  // Thread-safe: queued for every subscriber of the channel. time_ns: the message's time.
  void publish(std::uint32_t channel_id, std::uint64_t time_ns,
               std::shared_ptr<const std::string> payload);

  class Session;
  struct State;

 private:
  boost::asio::io_context io_;
  std::shared_ptr<State> state_;
  std::shared_ptr<FoxgloveCounters> counters_ = std::make_shared<FoxgloveCounters>();
  std::uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace lidaremu::daemon
