// The daemon under a hostile neighbour: web pages that try to change state, slow clients, storms
// of requests. Each case is an attack the audit of issue 14 tried, run against the real daemon.
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon_process.hpp"

using namespace lidaremu;
using namespace std::chrono_literals;

namespace {

// Port 80, as drivers expect, when the test may bind it; otherwise another one.
std::string api_port() { return ::geteuid() == 0 ? "80" : "18080"; }

}  // namespace

TEST_CASE("Web pages cannot change state; tools and allowed pages can", "[e2e][http][hostile]") {
  // The audit: with no token a page on any origin changed the weather (POST, text/plain, any
  // Origin answered 200; Host unchecked, so DNS rebinding worked too), and the emulated sensor
  // APIs took a plain GET or a form POST, e.g. sending the output stream elsewhere.
  const std::string sensor_ip = "127.0.0.9";
  test::DaemonProcess daemon({"--model", "os1-64", "--hits", "udp://127.0.0.1:0", "--physics",
                              "ideal", "--http", "127.0.0.1:0", "--sensor-ip", sensor_ip,
                              "--api-port", api_port(), "--http-allowed-origins",
                              "http://dashboard.example:3000", "--http-allowed-hosts", "lidaremu"});
  REQUIRE(daemon.wait_for_output("/api/v1/sensors)", 5s));
  const std::string base = test::control_url(daemon);
  const std::string port = base.substr(base.rfind(':') + 1);
  const std::string weather = base + "/api/v1/sensors/os1-64-0/weather";
  const std::string rain = R"({"rain_mm_per_h": 25})";
  const auto put = [&](const std::string& body, const std::vector<std::string>& headers) {
    return test::http_request("PUT", weather, body, "", headers);
  };
  // What a browser sends for a cross-site form or fetch, refused each way.
  CHECK(test::http_request("POST", weather, rain, "",
                           {"Content-Type: text/plain", "Origin: http://evil.example"})
            .status == 405);
  CHECK(put(rain, {"Content-Type: text/plain"}).status == 415);
  CHECK(put(rain, {"Content-Type: application/x-www-form-urlencoded"}).status == 415);
  const auto cross = put(rain, {"Origin: http://evil.example"});
  CHECK(cross.status == 403);
  CHECK_THAT(cross.body, Catch::Contains("http_allowed_origins"));
  CHECK(put(rain, {"Origin: null"}).status == 403);
  CHECK(put(rain, {"Sec-Fetch-Site: cross-site"}).status == 403);
  // DNS rebinding: the page's own name in Host, and its origin the same.
  const auto rebound =
      put(rain, {"Host: evil.example:" + port, "Origin: http://evil.example:" + port});
  CHECK(rebound.status == 403);
  CHECK_THAT(rebound.body, Catch::Contains("DNS-rebinding"));
  auto now = nlohmann::json::parse(test::http_request("GET", weather).body);
  CHECK(now["rain_mm_per_h"] == 0);
  // A tool (no browser headers), a page from the daemon's own origin, an allowed page, an
  // allowed host name: accepted.
  CHECK(put(R"({"rain_mm_per_h": 1})", {}).status == 200);
  CHECK(put(R"({"rain_mm_per_h": 2})",
            {"Origin: http://127.0.0.1:" + port, "Sec-Fetch-Site: same-origin"})
            .status == 200);
  CHECK(put(R"({"rain_mm_per_h": 3})",
            {"Origin: http://dashboard.example:3000", "Sec-Fetch-Site: cross-site"})
            .status == 200);
  CHECK(put(R"({"rain_mm_per_h": 4})", {"Host: lidaremu:" + port}).status == 200);
  CHECK(put(R"({"rain_mm_per_h": 5})", {"Content-Type: application/json; charset=utf-8"}).status ==
        200);
  now = nlohmann::json::parse(test::http_request("GET", weather).body);
  CHECK(now["rain_mm_per_h"] == 5);

  // The emulated Ouster: the SDK's writes are GETs (cmd/set_config_param) and POSTs; a browser's
  // are refused by what the browser says about them.
  const std::string api = "http://" + sensor_ip + ":" + api_port();
  const auto staged_dest = [&] {
    const auto r = test::http_request("GET", api + "/api/v1/sensor/config?staging=true");
    return nlohmann::json::parse(r.body)["udp_dest"].get<std::string>();
  };
  const std::string before = staged_dest();
  const std::string steer = api + "/api/v1/sensor/cmd/set_config_param?args=udp_dest+6.6.6.6";
  CHECK(test::http_request("GET", steer, "", "", {"Sec-Fetch-Site: cross-site"}).status == 403);
  CHECK(test::http_request("GET", steer, "", "", {"Host: evil.example"}).status == 403);
  CHECK(test::http_request("POST", api + "/api/v1/sensor/config?staging=true&reinit=false",
                           R"({"udp_dest": "6.6.6.6"})", "",
                           {"Content-Type: text/plain", "Origin: http://evil.example"})
            .status == 403);
  CHECK(test::http_request("GET", api + "/api/v1/sensor/cmd/reinitialize", "", "",
                           {"Sec-Fetch-Site: same-site"})
            .status == 403);
  CHECK(staged_dest() == before);
  // Reading stays open (a browser cannot read the answer cross-origin anyway).
  CHECK(test::http_request("GET", api + "/api/v1/sensor/metadata/sensor_info", "", "",
                           {"Sec-Fetch-Site: cross-site"})
            .status == 200);
  // TCP 7501 takes one command per line: a browser's text/plain POST would run its body's lines.
  // Its first line is HTTP: the connection closes before anything runs.
  const auto form =
      test::tcp_exchange(sensor_ip, 7501,
                         "POST / HTTP/1.1\r\nHost: " + sensor_ip +
                             ":7501\r\nContent-Type: text/plain\r\n\r\nset_config_param udp_dest "
                             "6.6.6.6\nreinitialize\n",
                         3s);
  CHECK(form.closed);
  CHECK(form.bytes.empty());
  CHECK(staged_dest() == before);
  // The SDK, as it sends them: accepted.
  CHECK(
      test::http_request("GET", api + "/api/v1/sensor/cmd/set_config_param?args=udp_dest+127.0.0.7")
          .status == 200);
  CHECK(staged_dest() == "127.0.0.7");
  const auto line =
      test::tcp_exchange(sensor_ip, 7501, "set_config_param udp_dest 127.0.0.8\n", 2s);
  CHECK(line.bytes == "set_config_param\n");
  CHECK(staged_dest() == "127.0.0.8");
  CHECK(daemon.stop() == 0);
}
