// The live view end to end: the real daemon, a Foxglove WebSocket client written here from the
// protocol's specification (foxglove.websocket.v1), exports on disk, and the built-in page in
// headless Chromium. Ground truth is checked by position: each decoded point's beam is found
// from where it lies (BeamGeometry::locate), and its id must be the one the engine sent there.
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "daemon_process.hpp"
#include "lidaremu/clients/birds_eye.hpp"
#include "lidaremu/clients/demo_scene.hpp"
#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/streaming.hpp"
#include "lidaremu/core/byte_io.hpp"
#include "lidaremu/core/cloud_export.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using nlohmann::json;

namespace {

std::uint16_t port_after(const test::DaemonProcess& daemon, const std::string& prefix) {
  const auto at = daemon.output().find(prefix);
  REQUIRE(at != std::string::npos);
  return static_cast<std::uint16_t>(std::stoi(daemon.output().substr(at + prefix.size())));
}

// The demo scene for a VLP-16 and the object id the engine sends on every beam.
struct Scene {
  core::ScanPattern pattern = *core::make_rpm_scan(*core::find_sensor_model("vlp16"), 600).pattern;
  std::vector<float> rows;
  std::vector<std::uint32_t> ids;
  std::size_t hits = 0;
  Scene() {
    clients::DemoScene().render(core::BeamGeometry(pattern), rows, &ids);
    for (std::size_t i = 6; i < rows.size(); i += 7) hits += rows[i] != 0 ? 1 : 0;
  }
};

// Streams the scene at the sensor's rate on its own thread until destroyed.
class SceneStream {
 public:
  SceneStream(const Scene& scene, std::uint16_t port)
      : thread_([this, &scene, port] {
          clients::UdpSender sender("udp://127.0.0.1:" + std::to_string(port));
          clients::FrameStreamer streamer(sender, scene.pattern, {});
          while (!stop_) streamer.send_frame(scene.rows, scene.ids);
        }) {}
  ~SceneStream() {
    stop_ = true;
    thread_.join();
  }
  SceneStream(const SceneStream&) = delete;
  SceneStream& operator=(const SceneStream&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct IdCheck {
  std::size_t points = 0, matching = 0;
  std::set<std::uint32_t> ids;
};
// Each point's id against the engine's id on the beam the point's position belongs to.
IdCheck check_ids(const Scene& scene, std::span<const core::CloudPoint> points) {
  const core::BeamGeometry geometry(scene.pattern);
  IdCheck c;
  for (const auto& p : points) {
    const auto beam = geometry.locate(Eigen::Vector3d(p.x, p.y, p.z));
    const std::size_t b = std::size_t{beam.column} * 16 + beam.channel;
    ++c.points;
    c.matching += p.object_id == scene.ids[b] ? 1 : 0;
    c.ids.insert(p.object_id);
  }
  return c;
}

// A Foxglove WebSocket client: the handshake with the subprotocol, JSON text operations, binary
// message frames (opcode 1, subscription id, timestamp, payload).
class FoxgloveClient {
 public:
  FoxgloveClient(std::uint16_t port, const char* subprotocol = "foxglove.websocket.v1") : ws_(io_) {
    asio::ip::tcp::resolver resolver(io_);
    asio::connect(ws_.next_layer(), resolver.resolve("127.0.0.1", std::to_string(port)));
    // Reads give up after 10 s instead of hanging the suite.
    const timeval timeout{10, 0};
    ::setsockopt(ws_.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout,
                 sizeof timeout);
    ws_.set_option(websocket::stream_base::decorator([subprotocol](websocket::request_type& r) {
      if (subprotocol) r.set(beast::http::field::sec_websocket_protocol, subprotocol);
    }));
    ws_.handshake(response_, "127.0.0.1:" + std::to_string(port), "/");
  }
  const websocket::response_type& response() const { return response_; }
  // The next text message as JSON (binary messages before it are skipped).
  json next_text() {
    for (;;) {
      beast::flat_buffer buffer;
      ws_.read(buffer);
      if (ws_.got_text()) return json::parse(beast::buffers_to_string(buffer.data()));
    }
  }
  // The next binary message (text messages before it are kept in `texts`).
  std::string next_binary() {
    for (;;) {
      beast::flat_buffer buffer;
      ws_.read(buffer);
      if (ws_.got_text()) {
        texts.push_back(json::parse(beast::buffers_to_string(buffer.data())));
        continue;
      }
      return beast::buffers_to_string(buffer.data());
    }
  }
  void send(const json& message) {
    ws_.text(true);
    ws_.write(asio::buffer(message.dump()));
  }
  void send_raw(const std::string& text) {
    ws_.text(true);
    ws_.write(asio::buffer(text));
  }
  std::vector<json> texts;

 private:
  asio::io_context io_;
  websocket::stream<asio::ip::tcp::socket> ws_;
  websocket::response_type response_;
};

std::vector<std::uint8_t> base64_decode(const std::string& text) {
  std::vector<std::uint8_t> out;
  std::uint32_t bits = 0;
  int have = 0;
  for (const char c : text) {
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    if (c >= '0' && c <= '9') v = c - '0' + 52;
    if (c == '+') v = 62;
    if (c == '/') v = 63;
    if (v < 0) continue;  // '=' padding
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    have += 6;
    if (have >= 8) {
      have -= 8;
      out.push_back(static_cast<std::uint8_t>((bits >> have) & 0xFF));
    }
  }
  return out;
}

// A foxglove.PointCloud JSON message back into points, through its own field table.
std::vector<core::CloudPoint> points_of(const json& cloud) {
  std::map<std::string, std::pair<std::size_t, int>> fields;
  for (const auto& f : cloud["fields"]) fields[f["name"]] = {f["offset"], f["type"]};
  REQUIRE(fields.at("x") == std::pair<std::size_t, int>{0, 7});
  REQUIRE(fields.at("intensity").second == 7);
  REQUIRE(fields.at("object_id").second == 5);
  REQUIRE(fields.at("ring").second == 3);
  REQUIRE(fields.at("kind") == std::pair<std::size_t, int>{23, 1});
  REQUIRE(fields.at("pulse_width") == std::pair<std::size_t, int>{24, 7});
  const std::size_t stride = cloud["point_stride"];
  const auto data = base64_decode(cloud["data"]);
  REQUIRE(data.size() % stride == 0);
  std::vector<core::CloudPoint> out;
  for (std::size_t at = 0; at < data.size(); at += stride) {
    core::CloudPoint p;
    p.x = core::load_le<float>(data, at + fields["x"].first);
    p.y = core::load_le<float>(data, at + fields["y"].first);
    p.z = core::load_le<float>(data, at + fields["z"].first);
    p.reflectivity =
        static_cast<std::uint16_t>(core::load_le<float>(data, at + fields["intensity"].first));
    p.object_id = core::load_le<std::uint32_t>(data, at + fields["object_id"].first);
    p.ring = core::load_le<std::uint16_t>(data, at + fields["ring"].first);
    p.kind = data[at + fields.at("kind").first];
    p.pulse_width_ns = core::load_le<float>(data, at + fields.at("pulse_width").first);
    out.push_back(p);
  }
  return out;
}

// The daemon for the view tests (ideal physics, packets to a local sink, no sensor API) with
// `extra` flags; `port_line`, when given, is the start-up line whose port the test needs.
struct ViewDaemon {
  test::UdpReceiver sink;
  std::unique_ptr<test::DaemonProcess> daemon;
  std::uint16_t port = 0;
  ViewDaemon(const std::vector<std::string>& extra, const std::string& port_line = "") {
    std::vector<std::string> args{"--model",    "vlp16",
                                  "--hits",     "udp://127.0.0.1:0",
                                  "--out",      "udp://127.0.0.1:" + std::to_string(sink.port()),
                                  "--physics",  "ideal",
                                  "--api-port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    daemon = std::make_unique<test::DaemonProcess>(args);
    if (port_line.empty()) return;
    REQUIRE(daemon->wait_for_output(port_line, 5s));
    daemon->read_output(200ms);
    port = port_after(*daemon, port_line + "127.0.0.1:");
  }
};

}  // namespace

TEST_CASE("Foxglove WebSocket: a viewer subscribes and gets decoded clouds with ground-truth ids",
          "[e2e][view]") {
  const Scene scene;
  ViewDaemon view({"--http", "off", "--foxglove", "127.0.0.1:0"}, "live view ws://");
  test::DaemonProcess& daemon = *view.daemon;
  const auto port = view.port;

  FoxgloveClient viewer(port);
  CHECK(viewer.response()[beast::http::field::sec_websocket_protocol] == "foxglove.websocket.v1");
  const json info = viewer.next_text();
  CHECK(info["op"] == "serverInfo");
  CHECK(info["name"] == "lidaremud");
  const json advertise = viewer.next_text();
  REQUIRE(advertise["op"] == "advertise");
  REQUIRE(advertise["channels"].size() == 1);
  const json channel = advertise["channels"][0];
  CHECK(channel["topic"] == "/lidaremu/vlp16-0/points");
  CHECK(channel["schemaName"] == "foxglove.PointCloud");
  CHECK(channel["encoding"] == "json");
  CHECK(channel["schemaEncoding"] == "jsonschema");
  CHECK(json::parse(channel["schema"].get<std::string>())["properties"].contains("point_stride"));
  viewer.send(
      {{"op", "subscribe"}, {"subscriptions", {{{"id", 7}, {"channelId", channel["id"]}}}}});

  SceneStream stream(scene, daemon.hits_port());
  // The first cloud may start mid-stream; the second is a whole revolution.
  std::string message;
  for (int i = 0; i < 2; ++i) message = viewer.next_binary();
  REQUIRE(message.size() > 13);
  const auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(message.data()),  // NOLINT
                               message.size());
  CHECK(bytes[0] == 1);
  CHECK(core::load_le<std::uint32_t>(bytes, 1) == 7);
  const double stamp_s = static_cast<double>(core::load_le<std::uint64_t>(bytes, 5)) * 1e-9;
  const double now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(std::fabs(stamp_s - now_s) < 5.0);
  const json cloud = json::parse(message.substr(13));
  CHECK(cloud["frame_id"] == "vlp16-0");
  const auto points = points_of(cloud);
  const IdCheck ids = check_ids(scene, points);
  INFO(ids.points << " points, " << ids.matching << " with the engine's id, scene hits "
                  << scene.hits);
  CHECK(ids.matching == ids.points);
  // The walls, the car and the sign are all there (the road is object 0 in the demo scene).
  for (const std::uint32_t id : {1u, 2u, 10u, 20u}) CHECK(ids.ids.contains(id));
  CHECK(static_cast<double>(ids.points) >= 0.97 * static_cast<double>(scene.hits));
  CHECK(static_cast<double>(ids.points) <= 1.03 * static_cast<double>(scene.hits));
  // What made each echo and its pulse width travel with it: with ideal physics every echo is a
  // target, and its pulse is above a zero threshold for the whole sin^2 pulse (2 tau_H = 10 ns)
  // plus the range it spreads over (glass seen off its normal returns nothing: no pulse).
  std::size_t targets = 0, lit = 0, wide = 0;
  for (const auto& p : points) {
    targets += p.kind == static_cast<std::uint8_t>(core::ReturnKind::kTarget);
    if (p.reflectivity == 0) continue;
    ++lit;
    wide += p.pulse_width_ns >= 9.99f;
  }
  CHECK(targets == points.size());
  CHECK(lit > points.size() / 2);
  CHECK(wide == lit);

  // Hostile or mistaken requests get a status message, and the stream goes on.
  viewer.send_raw("{not json");
  viewer.send({{"op", "subscribe"}, {"subscriptions", {{{"id", 8}, {"channelId", 999}}}}});
  viewer.send({{"op", "teleport"}});
  // The replies queue behind the clouds already on their way (a slow, sanitized daemon has more).
  for (int i = 0; i < 100 && viewer.texts.size() < 3; ++i) viewer.next_binary();
  REQUIRE(viewer.texts.size() >= 3);
  for (const auto& t : viewer.texts) CHECK(t["op"] == "status");
  CHECK(viewer.texts[1]["message"].get<std::string>().find("no channel 999") != std::string::npos);

  // A client that does not speak the protocol is refused at the handshake.
  CHECK_THROWS(FoxgloveClient(port, nullptr));
  CHECK_THROWS(FoxgloveClient(port, "some.other.protocol"));
  CHECK(daemon.stop() == 0);
}

namespace {

// Resident memory of a process, in KiB (/proc/PID/status VmRSS).
long resident_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

TEST_CASE("A subscription flood is capped per viewer; memory stays flat; sessions get plain ids",
          "[e2e][view][hostile]") {
  // The audit: 5 M subscriptions grew the daemon from 14.7 to 253 MB, never freed; the session
  // id was a heap address.
  ViewDaemon view({"--http", "off", "--foxglove", "127.0.0.1:0"}, "live view ws://");
  test::DaemonProcess& daemon = *view.daemon;
  FoxgloveClient flood(view.port);
  const json info = flood.next_text();
  const json advertise = flood.next_text();
  REQUIRE(advertise["channels"].size() == 1);
  const auto channel = advertise["channels"][0]["id"].get<std::uint32_t>();
  const long before = resident_kib(daemon.pid());
  constexpr int kMessages = 300, kPerMessage = 1500;  // 450,000 subscriptions asked for
  for (int m = 0; m < kMessages; ++m) {
    json subscriptions = json::array();
    for (int i = 0; i < kPerMessage; ++i) {
      subscriptions.push_back({{"id", m * kPerMessage + i}, {"channelId", channel}});
    }
    flood.send({{"op", "subscribe"}, {"subscriptions", subscriptions}});
  }
  const json refused = flood.next_text();
  CHECK(refused["op"] == "status");
  CHECK_THAT(refused["message"].get<std::string>(), Catch::Contains("at most 256"));
  // The last message is handled once a later client is greeted (one server thread, in order).
  FoxgloveClient second(view.port);
  const json second_info = second.next_text();
  const long after = resident_kib(daemon.pid());
  INFO("resident " << before << " KiB before the flood, " << after << " KiB after");
  // (ASan keeps freed memory in quarantine, 256 MB by default: the parsing of the flood's
  // messages shows there, not a subscription's growth.)
  if (!test::kSanitized) CHECK(after - before < 4096);
  // Session ids are small counters, one per viewer.
  CHECK(info["sessionId"] == "1");
  CHECK(second_info["sessionId"] == "2");
  // One machine holds at most 8 of the 32 viewer connections: a ninth is refused, and a slot
  // frees when one closes.
  std::vector<std::unique_ptr<FoxgloveClient>> more;
  for (int i = 0; i < 6; ++i) more.push_back(std::make_unique<FoxgloveClient>(view.port));
  CHECK_THROWS(FoxgloveClient(view.port));
  more.pop_back();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the server sees it close
  CHECK_NOTHROW(FoxgloveClient(view.port));
  CHECK(daemon.stop() == 0);
}

TEST_CASE("--export writes whole decoded frames: PCD with object ids, PLY, KITTI .bin",
          "[e2e][view][export]") {
  const Scene scene;
  const std::string dir = "/tmp/lidaremu-e2e-export-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  ViewDaemon view({"--http", "off", "--foxglove", "off", "--export", dir, "--export-formats",
                   "pcd,ply,bin", "--export-frames", "2", "--export-every", "2"});
  test::DaemonProcess& daemon = *view.daemon;
  const auto pcd_files = [&] {
    std::vector<std::string> found;
    if (!std::filesystem::exists(dir)) return found;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".pcd") found.push_back(entry.path().string());
    }
    return found;
  };
  {
    // Four frames at 10 Hz take 0.4 s here; a sanitized daemon takes seconds over them.
    const SceneStream stream(scene, daemon.hits_port());
    std::this_thread::sleep_for(900ms);
    const auto deadline = std::chrono::steady_clock::now() + (test::kSanitized ? 60s : 5s);
    while (pcd_files().size() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(100ms);
    }
  }
  CHECK(daemon.stop() == 0);
  std::vector<std::string> pcds = pcd_files();
  std::sort(pcds.begin(), pcds.end());
  REQUIRE(pcds.size() == 2);
  for (const auto& pcd : pcds) {
    INFO(pcd);
    const core::Cloud cloud = core::read_pcd(pcd);
    const IdCheck ids = check_ids(scene, cloud.points);
    CHECK(ids.matching == ids.points);
    CHECK(static_cast<double>(ids.points) >= 0.97 * static_cast<double>(scene.hits));
    const std::string stem = pcd.substr(0, pcd.size() - 4);
    CHECK(std::filesystem::file_size(stem + ".bin") == 16 * cloud.points.size());
    std::ifstream ply(stem + ".ply");
    std::string line;
    std::getline(ply, line);
    CHECK(line == "ply");
    bool counted = false;
    while (std::getline(ply, line) && line != "end_header") {
      if (line == "element vertex " + std::to_string(cloud.points.size())) counted = true;
    }
    CHECK(counted);
  }
  // Every second frame the view decodes: two frames apart when it keeps up with the sensor (a
  // sanitized daemon's view skips frames, counted).
  const auto number = [](const std::string& path) {
    return std::stoi(path.substr(path.size() - 10, 6));
  };
  if (test::kSanitized) {
    CHECK(number(pcds[1]) - number(pcds[0]) >= 2);
  } else {
    CHECK(number(pcds[1]) - number(pcds[0]) == 2);
  }
  std::filesystem::remove_all(dir);
}

namespace {

// Pixels a point drew: strongly coloured, unlike the background, the grid and the grey text.
std::size_t coloured_pixels(const clients::Image& image) {
  std::size_t n = 0;
  for (std::size_t i = 0; i + 2 < image.rgb.size(); i += 3) {
    const auto [lo, hi] = std::minmax({image.rgb[i], image.rgb[i + 1], image.rgb[i + 2]});
    n += hi - lo > 60 && hi > 80 ? 1 : 0;
  }
  return n;
}

// The page in headless Chromium, driven through ChromeDriver by tests/support: once it says it
// drew at least `min_points` (0: after a moment), the screenshot's coloured pixels are counted.
std::size_t screenshot_coloured_pixels(const std::string& url, const std::string& png,
                                       int min_points) {
  std::filesystem::remove(png);
  const std::string command = "python3 " LIDAREMU_TEST_SUPPORT_DIR "/browser_screenshot.py '" +
                              url + "' " + png + " --min-points " + std::to_string(min_points) +
                              " > " + png + ".log 2>&1";
  const int status = std::system(command.c_str());
  INFO("browser_screenshot.py said: " << [&] {
    std::ifstream log(png + ".log");
    return std::string(std::istreambuf_iterator<char>(log), {});
  }());
  CHECK(status == 0);
  REQUIRE(std::filesystem::exists(png));
  const auto image = clients::read_png(png);
  CHECK(image.width == 800);
  CHECK(image.height > 400);  // the window less the browser's own bars
  return coloured_pixels(image);
}

}  // namespace

TEST_CASE("The built-in page draws the live cloud in headless Chromium", "[e2e][view][browser]") {
  const Scene scene;
  ViewDaemon view({"--http", "127.0.0.1:0", "--foxglove", "127.0.0.1:0"}, "control http://");
  test::DaemonProcess& daemon = *view.daemon;
  const auto http_port = view.port;
  const std::string url = "http://127.0.0.1:" + std::to_string(http_port) + "/view/";
  const std::string png = "/tmp/lidaremu-e2e-view-" + std::to_string(::getpid()) + ".png";

  // No input yet: the page connects and shows an empty scene (grid, axes, status text).
  const std::size_t empty = screenshot_coloured_pixels(url, png, 0);
  std::size_t live = 0;
  {
    const SceneStream stream(scene, daemon.hits_port());
    std::this_thread::sleep_for(300ms);
    live = screenshot_coloured_pixels(url, png, 5000);
  }
  INFO("coloured pixels: " << empty << " without input, " << live << " with the scene");
  CHECK(empty < 500);
  CHECK(live > 5000);
  // What the page loaded, and what the daemon counted while it watched.
  const std::string base = "http://127.0.0.1:" + std::to_string(http_port);
  const auto live_view_port = port_after(daemon, "live view ws://127.0.0.1:");
  CHECK(test::http_request("GET", base + "/view/config.json")
            .body.find("\"port\":" + std::to_string(live_view_port)) != std::string::npos);
  const auto three = test::http_request("GET", base + "/view/three.core.js");
  CHECK(three.status == 200);
  CHECK(three.body.find("REVISION") != std::string::npos);
  CHECK(test::http_request("GET", base + "/view/nothing-here.js").status == 404);
  CHECK(test::http_request("POST", base + "/view/", "x").status == 405);
  const std::string metrics = test::http_request("GET", base + "/metrics").body;
  const auto metric = [&](const std::string& name) {
    // A sample line (not the family's # HELP or # TYPE line).
    const auto at = metrics.find("\n" + name + " ");
    return at == std::string::npos ? -1L : std::stol(metrics.substr(at + name.size() + 2));
  };
  CHECK(metric("lidaremu_view_frames_published_total{sensor=\"vlp16-0\"}") > 0);
  CHECK(metric("lidaremu_view_packets_undecodable_total{sensor=\"vlp16-0\"}") == 0);
  CHECK(metric("lidaremu_foxglove_clients_accepted_total") >= 2);  // two page loads
  CHECK(metric("lidaremu_foxglove_bad_requests_total") == 0);
  std::filesystem::remove(png);
  std::filesystem::remove(png + ".log");
  CHECK(daemon.stop() == 0);
}
