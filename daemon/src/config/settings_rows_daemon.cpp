// The settings schema's [daemon] rows: the whole daemon's settings, as data (settings_schema.hpp
// says what each column means); the sensors' are in settings_rows.cpp.
#include "lidaremu/daemon/config/settings_schema.hpp"

namespace lidaremu::daemon {
namespace {

using D = DaemonSettings;
constexpr auto kDaemon = SettingScope::kDaemon;

const SettingRow kDaemonRows[] = {
    // [daemon]: the whole daemon; read at start.
    {.key = "materials",
     .flag = "--materials",
     .metavar = "FILE",
     .scope = kDaemon,
     .target = &D::materials,
     .change = kAtStart,
     .default_text = "the table the daemon ships (`config/materials.toml`)",
     .help = "material table (TOML)",
     .doc = "the material table: ids the engine's rows carry, their reflectance and gloss "
            "([config.md](config.md))",
     .example = "config/materials.toml"},
    {.key = "threads",
     .flag = "--threads",
     .metavar = "N",
     .scope = kDaemon,
     .target = &D::threads,
     .range = SettingRange{0, 1024},
     .change = kAtStart,
     .default_text = "0 (all cores)",
     .help = "physics worker threads (0: all cores)",
     .doc = "TBB worker limit for the physics",
     .example = "2"},
    {.key = "simd_target",
     .flag = "--simd-target",
     .metavar = "T",
     .scope = kDaemon,
     .target = &D::simd_target,
     .change = kAtStart,
     .help = "instruction set of the physics kernel: best, or one this CPU runs (AVX3, AVX2, "
             "SSE4, SSSE3, SCALAR); the output bytes are the same on each",
     .doc = "instruction set of the physics kernel: `best`, or one this build and CPU run "
            "(`AVX3`, `AVX2`, `SSE4`, `SSSE3`, `SCALAR` on x86-64; printed at start); the output "
            "bytes are the same on each, so this is for measuring and for checking that",
     .example = "SCALAR"},
    {.key = "log_level",
     .flag = "--log-level",
     .metavar = "L",
     .scope = kDaemon,
     .target = &D::log_level,
     .choices = "trace|debug|info|warn|error|critical|off",
     .change = kAtStart,
     .help = "how much the daemon logs",
     .example = "warn"},
    {.key = "duration_s",
     .flag = "--duration",
     .metavar = "S",
     .scope = kDaemon,
     .target = &D::duration_s,
     .unit = "s",
     .range = SettingRange{0, 3.2e8},
     .change = kAtStart,
     .default_text = "0 (until SIGTERM)",
     .help = "stop by itself after this many seconds (0: run until SIGTERM)",
     .example = "0.3"},
    {.key = "stats_interval_s",
     .flag = "--stats-interval",
     .metavar = "S",
     .scope = kDaemon,
     .target = &D::stats_interval_s,
     .unit = "s",
     .change = kAtStart,
     .default_text = "0 (only at exit)",
     .help = "log a counter summary every this many seconds (0, or 0.1..86400)",
     .example = "5"},
    {.key = "memory_limit_mib",
     .flag = "--memory-limit",
     .metavar = "MIB",
     .scope = kDaemon,
     .target = &D::memory_limit_mib,
     .unit = "MiB",
     .range = SettingRange{0, 1e9},
     .change = kOnReload,
     .default_text = "0 (the cgroup's limit, else half the RAM)",
     .help = "refuse a configuration whose sensors' estimated memory is over this",
     .doc = "a configuration (at start, or a reload) whose estimated memory is over this is "
            "refused with every sensor's estimate (docs/performance.md: what a machine needs); 0: "
            "the cgroup's memory limit, else half the RAM",
     .example = "4096"},
    {.key = "pcap",
     .flag = "--pcap",
     .metavar = "FILE",
     .scope = kDaemon,
     .target = &D::pcap,
     .change = kAtStart,
     .help = "also write every emitted packet to this pcap file",
     .doc = "also write every emitted packet to a pcap (Ethernet, IPv4, UDP with checksums; IPv4 "
            "fragments at a 1500-byte MTU as on a real network), for tcpdump, Wireshark, "
            "VeloView, the Ouster SDK",
     .example = "/tmp/lidaremu-schema-test.pcap"},
    {.key = "record",
     .flag = "--record",
     .metavar = "FILE",
     .scope = kDaemon,
     .target = &D::record,
     .change = kAtStart,
     .help = "record every datagram received, with its arrival time, to this pcap file",
     .doc = "record every datagram received (good or bad), with its sender, input port and "
            "arrival time, as a pcap; `lidaremu-send --replay FILE` plays it back",
     .example = "/tmp/lidaremu-schema-test-record.pcap"},
    {.key = "http",
     .flag = "--http",
     .metavar = "HOST:PORT|off",
     .scope = kDaemon,
     .target = &D::http,
     .change = kAtStart,
     .help = "the daemon's HTTP endpoint (/healthz, /metrics, JSON API), HOST:PORT or off (port "
             "0: any free port, printed at start)",
     .doc = "the daemon's own HTTP endpoint: `/healthz`, `/metrics`, the JSON API "
            "([http.md](http.md)); port 0 picks a free port (printed at start). If the default "
            "cannot be bound the daemon warns and runs without it; an explicit address that "
            "cannot be bound is fatal",
     .example = "127.0.0.1:0",
     .given = &D::http_explicit},
    {.key = "http_token",
     .flag = "--http-token",
     .metavar = "TOKEN",
     .scope = kDaemon,
     .target = &D::http_token,
     .change = kAtStart,
     .help = "token that requests changing state must send (Authorization: Bearer TOKEN)",
     .doc = "requests that change state (`PUT .../weather`) must send `Authorization: Bearer "
            "TOKEN`",
     .example = "s3cret"},
    {.key = "http_allowed_hosts",
     .flag = "--http-allowed-hosts",
     .metavar = "A,B",
     .scope = kDaemon,
     .target = &D::http_allowed_hosts,
     .change = kAtStart,
     .help = "host names (besides addresses, localhost and this machine's name) under which "
             "clients may change state, on --http and the emulated sensor APIs",
     .doc = "host names (besides addresses, `localhost` and this machine's name) clients may use "
            "in `Host` when they change state, here and on the emulated sensor APIs (e.g. a "
            "compose service name)",
     .example = "lidaremu"},
    {.key = "allow_destinations",
     .flag = "--allow-destinations",
     .metavar = "CIDR,...",
     .scope = kDaemon,
     .target = &D::allow_destinations,
     .change = kAtStart,
     .default_text = "loopback and the asker",
     .help = "where the emulated units' APIs may point a stream besides a loopback address and "
             "the client asking (IPv4 ranges)",
     .doc = "where a client of an emulated unit's API (PTC 0x20, Ouster `udp_dest`, Velodyne "
            "`/cgi/setting/host`, Livox SDK2's host ends) may point the unit's streams besides a "
            "loopback address and the client's own address: IPv4 ranges (`10.0.0.0/8`) or "
            "addresses; anything else is refused with the protocol's own error and counted "
            "(`lidaremu_destination_changes_total`)",
     .example = "192.168.1.0/24"},
    {.key = "http_allowed_origins",
     .flag = "--http-allowed-origins",
     .metavar = "URL,...",
     .scope = kDaemon,
     .target = &D::http_allowed_origins,
     .change = kAtStart,
     .help = "web pages (http://HOST:PORT) allowed to change state from a browser",
     .doc = "web pages (`http://HOST:PORT`) allowed to change state from a browser; any other "
            "page is refused ([hostile input](hostile-input.md))",
     .example = "http://dash.example:8080"},
    {.key = "foxglove",
     .flag = "--foxglove",
     .metavar = "HOST:PORT|off",
     .scope = kDaemon,
     .target = &D::foxglove,
     .change = kAtStart,
     .help = "live view: decoded clouds on a Foxglove WebSocket, HOST:PORT or off (port 0: any "
             "free port, printed)",
     .doc = "the live view: decoded clouds as `foxglove.PointCloud` on a Foxglove WebSocket "
            "([live-view.md](live-view.md)); port 0 picks a free port (printed). A default "
            "address that cannot be bound only warns; an explicit one is fatal",
     .example = "off",
     .given = &D::foxglove_explicit},
    {.key = "export_dir",
     .flag = "--export",
     .metavar = "DIR",
     .scope = kDaemon,
     .target = &D::export_dir,
     .change = kAtStart,
     .help = "write decoded frames (with ground-truth object ids) to this directory",
     .doc = "write decoded frames, with ground-truth object ids, to DIR (created) as "
            "`SENSOR-FRAME.pcd` etc.",
     .example = "/tmp/lidaremu-schema-test-export"},
    {.key = "export_formats",
     .flag = "--export-formats",
     .metavar = "LIST",
     .scope = kDaemon,
     .target = &D::export_formats,
     .change = kAtStart,
     .help = "comma-separated: pcd, ply, bin (KITTI)",
     .example = "pcd,bin"},
    {.key = "export_every",
     .flag = "--export-every",
     .metavar = "N",
     .scope = kDaemon,
     .target = &D::export_every,
     .unit = "frames",
     .range = SettingRange{1, 1e6},
     .change = kAtStart,
     .help = "export every N-th whole frame",
     .example = "2"},
    {.key = "export_frames",
     .flag = "--export-frames",
     .metavar = "N",
     .scope = kDaemon,
     .target = &D::export_frames,
     .unit = "frames",
     .range = SettingRange{1, 1e5},
     .change = kAtStart,
     .help = "frames to export per sensor, then stop",
     .example = "3"},

};

}  // namespace

std::span<const SettingRow> daemon_rows() { return kDaemonRows; }

}  // namespace lidaremu::daemon
