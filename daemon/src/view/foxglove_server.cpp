#include "lidaremu/daemon/view/foxglove_server.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/daemon/net/tcp_accept.hpp"
#include "lidaremu/daemon/ops/thread_guard.hpp"
#include "lidaremu/daemon/runtime/punctual_thread.hpp"

namespace lidaremu::daemon {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using nlohmann::json;

namespace {
constexpr const char* kSubprotocol = "foxglove.websocket.v1";
constexpr std::uint8_t kMessageData = 0x01;
// Per viewer: messages waiting to be written. Point clouds are megabytes; beyond this the
// newest is dropped for that viewer.
constexpr std::size_t kMaxQueuedData = 2;
// Replies (status, advertise) waiting for a client that sends requests but never reads: beyond
// this the client is dropped.
constexpr std::size_t kMaxQueued = 64;
// A viewer needs one subscription per channel (a sensor); more only grow a map on the server's
// heap (the audit's 5 M subscriptions took 240 MB).
constexpr std::size_t kMaxSubscriptions = 256;
// One machine may hold at most this many of the server's viewer connections, so one client
// cannot take every slot (32 in all).
constexpr int kMaxConnectionsPerClient = 8;

json channel_json(const FoxgloveChannel& c) {
  return {{"id", c.id},
          {"topic", c.topic},
          {"encoding", c.encoding},
          {"schemaName", c.schema_name},
          {"schema", c.schema},
          {"schemaEncoding", c.schema_encoding}};
}

bool offers_subprotocol(const http::request<http::string_body>& request) {
  const auto it = request.find(http::field::sec_websocket_protocol);
  if (it == request.end()) return false;
  const std::string_view offered(it->value().data(), it->value().size());
  return offered.find(kSubprotocol) != std::string_view::npos;
}
}  // namespace

// Lives on the server's thread only.
struct FoxgloveServer::State {
  explicit State(tcp::acceptor a) : acceptor(std::move(a)) {}
  tcp::acceptor acceptor;
  std::map<std::uint32_t, FoxgloveChannel> channels;
  std::set<std::shared_ptr<Session>> sessions;
  std::map<std::uint32_t, int> subscribers;  // by channel
  OnSubscribers on_subscribers;
  ServerLimits limits;
  std::shared_ptr<FoxgloveCounters> counters;
  int open = 0;
  std::map<std::string, int> open_per_client;  // by remote address

  // Sessions to visit: a copy, since a session that overflows closes and leaves the set.
  static std::vector<std::shared_ptr<Session>> copy(const std::set<std::shared_ptr<Session>>& s) {
    return {s.begin(), s.end()};
  }

  void count_subscribers(std::uint32_t channel, int delta) {
    const int now = subscribers[channel] += delta;
    if (on_subscribers) on_subscribers(channel, now);
  }
};

class FoxgloveServer::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<State> state, std::string client)
      : ws_(std::move(socket)),
        state_(std::move(state)),
        slot_(state_->open),
        client_slot_(state_->open_per_client, std::move(client)) {}

  void start() {
    upgrade_.header_limit(static_cast<std::uint32_t>(state_->limits.max_header_bytes));
    upgrade_.body_limit(state_->limits.max_body_bytes);
    beast::get_lowest_layer(ws_).expires_after(
        std::chrono::seconds(state_->limits.request_timeout_s));
    http::async_read(ws_.next_layer(), buffer_, upgrade_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->on_upgrade_request(ec);
                     });
  }

  void send_text(std::string text) {
    queue({std::make_shared<const std::string>(std::move(text)), false, {}});
  }

  void send_data(std::uint32_t channel, std::uint64_t time_ns,
                 const std::shared_ptr<const std::string>& payload) {
    for (const auto& [subscription, subscribed_channel] : subscriptions_) {
      if (subscribed_channel != channel) continue;
      if (queued_data_ >= kMaxQueuedData) {
        ++state_->counters->messages_dropped;
        continue;
      }
      // The message frame's header, then the payload every subscriber shares (megabytes: sent
      // from the one copy).
      Outgoing out{payload, true, {}};
      out.header[0] = kMessageData;
      core::store_le<std::uint32_t>(out.header, 1, subscription);
      core::store_le<std::uint64_t>(out.header, 5, time_ns);
      ++queued_data_;
      queue(std::move(out));
    }
  }

  void channel_gone(std::uint32_t channel) {
    for (auto it = subscriptions_.begin(); it != subscriptions_.end();) {
      if (it->second == channel) {
        it = subscriptions_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    for (const auto& [subscription, channel] : subscriptions_)
      state_->count_subscribers(channel, -1);
    subscriptions_.clear();
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
    state_->sessions.erase(shared_from_this());
  }

 private:
  struct Outgoing {
    std::shared_ptr<const std::string> bytes;
    bool binary;
    std::array<std::uint8_t, 13> header;  // binary: opcode, subscription id, timestamp
  };

  void on_upgrade_request(beast::error_code ec) {
    const auto& request = upgrade_.get();
    if (ec || !websocket::is_upgrade(request) || !offers_subprotocol(request)) {
      ++state_->counters->clients_refused;
      if (!ec) {
        // Plain HTTP, or another WebSocket protocol: say what this port speaks.
        auto reply = std::make_shared<http::response<http::string_body>>(http::status::bad_request,
                                                                         request.version());
        reply->set(http::field::content_type, "text/plain");
        reply->body() = std::string("this port speaks the Foxglove WebSocket protocol (") +
                        kSubprotocol + "): connect Foxglove Studio to ws://HOST:PORT\n";
        reply->prepare_payload();
        http::async_write(
            ws_.next_layer(), *reply,
            [self = shared_from_this(), reply](beast::error_code, std::size_t) { self->close(); });
        return;
      }
      return close();
    }
    beast::get_lowest_layer(ws_).expires_never();
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& response) {
      response.set(http::field::sec_websocket_protocol, kSubprotocol);
      response.set(http::field::server, "lidaremud");
    }));
    ws_.read_message_max(state_->limits.max_body_bytes);
    ws_.async_accept(request, [self = shared_from_this()](beast::error_code accept_ec) {
      if (accept_ec) return self->close();
      ++self->state_->counters->clients_accepted;
      self->greet();
      self->read_next();
    });
  }

  void greet() {
    send_text(json{{"op", "serverInfo"},
                   {"name", "lidaremud"},
                   {"capabilities", json::array()},
                   {"supportedEncodings", json::array()},
                   {"metadata", json::object()},
                   {"sessionId", std::to_string(state_->counters->clients_accepted.load())}}
                  .dump());
    json channels = json::array();
    for (const auto& [id, channel] : state_->channels) channels.push_back(channel_json(channel));
    if (!channels.empty()) send_text(json{{"op", "advertise"}, {"channels", channels}}.dump());
  }

  void read_next() {
    ws_.async_read(incoming_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->on_message();
      self->read_next();
    });
  }

  void status(int level, const std::string& message) {
    ++state_->counters->bad_requests;
    send_text(json{{"op", "status"}, {"level", level}, {"message", message}}.dump());
  }

  void on_message() {
    const std::string text = beast::buffers_to_string(incoming_.data());
    incoming_.consume(incoming_.size());
    const json request = json::parse(text, nullptr, false);
    if (!ws_.got_text() || request.is_discarded() || !request.is_object() ||
        !request.contains("op") || !request["op"].is_string()) {
      return status(2, "expected a JSON object with an \"op\"");
    }
    const std::string op = request["op"];
    if (op == "subscribe" && request.contains("subscriptions") &&
        request["subscriptions"].is_array()) {
      for (const auto& s : request["subscriptions"]) {
        if (!s.is_object() || !s.contains("id") || !s["id"].is_number_unsigned() ||
            !s.contains("channelId") || !s["channelId"].is_number_unsigned()) {
          status(2, "subscribe: each subscription needs an unsigned id and channelId");
          continue;
        }
        const auto id = s["id"].get<std::uint32_t>();
        const auto channel = s["channelId"].get<std::uint32_t>();
        if (!state_->channels.contains(channel)) {
          status(1, "subscribe: no channel " + std::to_string(channel));
          continue;
        }
        if (subscriptions_.contains(id)) continue;
        if (subscriptions_.size() >= kMaxSubscriptions) {
          ++state_->counters->subscriptions_refused;
          status(2, "subscribe: at most " + std::to_string(kMaxSubscriptions) +
                        " subscriptions per client; unsubscribe first");
          break;
        }
        subscriptions_[id] = channel;
        state_->count_subscribers(channel, +1);
      }
    } else if (op == "unsubscribe" && request.contains("subscriptionIds") &&
               request["subscriptionIds"].is_array()) {
      for (const auto& id : request["subscriptionIds"]) {
        if (!id.is_number_unsigned()) continue;
        const auto it = subscriptions_.find(id.get<std::uint32_t>());
        if (it == subscriptions_.end()) continue;
        state_->count_subscribers(it->second, -1);
        subscriptions_.erase(it);
      }
    } else {
      status(1, "unsupported operation '" + op + "'");
    }
  }

  void queue(Outgoing out) {
    if (closed_) return;
    if (outgoing_.size() >= kMaxQueued) {
      ++state_->counters->bad_requests;
      return close();
    }
    outgoing_.push_back(std::move(out));
    if (outgoing_.size() == 1) write_next();
  }

  void write_next() {
    const Outgoing& next = outgoing_.front();
    ws_.binary(next.binary);
    const std::array<asio::const_buffer, 2> buffers{
        asio::buffer(next.header.data(), next.binary ? next.header.size() : 0),
        asio::buffer(*next.bytes)};
    ws_.async_write(buffers, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      if (self->outgoing_.front().binary) {
        --self->queued_data_;
        ++self->state_->counters->messages_sent;
      }
      self->outgoing_.pop_front();
      if (!self->outgoing_.empty()) self->write_next();
    });
  }

  struct OpenSlot {
    int& open;
    explicit OpenSlot(int& o) : open(o) { ++open; }
    ~OpenSlot() { --open; }
    OpenSlot(const OpenSlot&) = delete;
    OpenSlot& operator=(const OpenSlot&) = delete;
  };
  // A client's count of open connections; the entry goes with its last connection.
  struct ClientSlot {
    std::map<std::string, int>& counts;
    std::string client;
    ClientSlot(std::map<std::string, int>& c, std::string who) : counts(c), client(std::move(who)) {
      ++counts[client];
    }
    ~ClientSlot() {
      if (--counts[client] <= 0) counts.erase(client);
    }
    ClientSlot(const ClientSlot&) = delete;
    ClientSlot& operator=(const ClientSlot&) = delete;
  };

  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buffer_;
  beast::flat_buffer incoming_;
  http::request_parser<http::string_body> upgrade_;
  std::shared_ptr<State> state_;
  OpenSlot slot_;
  ClientSlot client_slot_;                                // this client's connections
  std::map<std::uint32_t, std::uint32_t> subscriptions_;  // subscription id -> channel
  std::deque<Outgoing> outgoing_;
  std::size_t queued_data_ = 0;
  bool closed_ = false;
};

FoxgloveServer::FoxgloveServer(const std::string& address, std::uint16_t port,
                               OnSubscribers on_subscribers, ServerLimits limits)
    : state_(std::make_shared<State>(open_acceptor(io_, address, port, "Foxglove WebSocket"))) {
  state_->on_subscribers = std::move(on_subscribers);
  state_->limits = limits;
  state_->counters = counters_;
  port_ = state_->acceptor.local_endpoint().port();
  tcp_detail::accept_connections(
      state_->acceptor,
      [state = state_.get(), max = limits.max_connections] { return state->open >= max; },
      [state = state_](tcp::socket socket) {
        boost::system::error_code ec;
        const std::string client = socket.remote_endpoint(ec).address().to_string();
        if (const auto it = state->open_per_client.find(client);
            it != state->open_per_client.end() && it->second >= kMaxConnectionsPerClient) {
          ++state->counters->clients_refused;
          return;  // the socket closes as it goes
        }
        auto session = std::make_shared<Session>(std::move(socket), state, client);
        state->sessions.insert(session);
        session->start();
      },
      [] { return false; },  // viewers stay connected by design: the cap refuses newcomers
      [counters = counters_] { ++counters->clients_refused; });
  thread_ = std::thread([this] {
    leave_signals_to_the_main_thread();
    run_guarded("the Foxglove server", [this] { io_.run(); });
  });
}

FoxgloveServer::~FoxgloveServer() {
  // Close everything on the server's thread, then stop it: sessions leave the state's set (which
  // ends their cycle with it); handlers still queued are destroyed with the io_context.
  asio::post(io_, [this, state = state_] {
    beast::error_code ignored;
    state->acceptor.close(ignored);
    for (const auto& s : State::copy(state->sessions)) s->close();  // close() leaves the set
    io_.stop();
  });
  thread_.join();
}

void FoxgloveServer::advertise(FoxgloveChannel channel) {
  asio::post(io_, [state = state_, channel = std::move(channel)] {
    const std::string message =
        json{{"op", "advertise"}, {"channels", json::array({channel_json(channel)})}}.dump();
    state->channels[channel.id] = channel;
    for (const auto& s : State::copy(state->sessions)) s->send_text(message);
  });
}

void FoxgloveServer::unadvertise(std::uint32_t channel_id) {
  asio::post(io_, [state = state_, channel_id] {
    if (state->channels.erase(channel_id) == 0) return;
    const std::string message =
        json{{"op", "unadvertise"}, {"channelIds", json::array({channel_id})}}.dump();
    for (const auto& s : State::copy(state->sessions)) {
      s->channel_gone(channel_id);
      s->send_text(message);
    }
    state->subscribers.erase(channel_id);
  });
}

void FoxgloveServer::publish(std::uint32_t channel_id, std::uint64_t time_ns,
                             std::shared_ptr<const std::string> payload) {
  asio::post(io_, [state = state_, channel_id, time_ns, payload = std::move(payload)] {
    for (const auto& s : State::copy(state->sessions)) s->send_data(channel_id, time_ns, payload);
  });
}

}  // namespace lidaremu::daemon
