#!/usr/bin/env python3
"""Replays, request for request, how each older generation of Ouster clients configures a unit
and reads its metadata, then checks the lidar stream that follows. Standard library only.
Exit status 0 when every check held; the failures are printed otherwise. (The firmware 3.1
sequence of SDK 0.15 and later is ouster_client_sequence.py.)

Usage: ouster_sdk_generations.py GENERATION HOST HTTP_PORT LIDAR_PORT IMU_PORT
GENERATION:
  http-0.10  ouster-sdk 0.10-0.14 (and ouster-ros branches vendoring it) over HTTP, firmware
             2.4 and later: the cmd/ family, the whole config as `set_config_param .`
  tcp-0.10   the same SDKs' TCP 7501 client (SensorTcpImp), used for firmware before 2.1:
             every token followed by a space, replies checked word for word
  tcp-1.x    ouster_example's os1 client (firmware 1.x): one key per set_config_param,
             udp_ip for the destination
"""
import json
import socket
import struct
import sys
import time
import urllib.parse
import urllib.request

GENERATION, HOST = sys.argv[1], sys.argv[2]
HTTP_PORT, LIDAR_PORT, IMU_PORT = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
failures, log = [], []


def check(condition, what):
    log.append(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def get(path):
    """The SDK's CurlClient: GET only, 2xx or an error; the body as text."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{HTTP_PORT}/{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Tcp7501:
    def __init__(self):
        self.sock = socket.create_connection((HOST, 7501), timeout=10)

    def cmd(self, *tokens):
        self.sock.sendall(("".join(t + " " for t in tokens) + "\n").encode())
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            reply += chunk
        return reply.decode().rstrip(" \r\n\t")

    def json(self, *tokens):
        try:
            return json.loads(self.cmd(*tokens))
        except json.JSONDecodeError:
            return None


lidar = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
lidar.bind(("127.0.0.1", LIDAR_PORT))
lidar.settimeout(0.2)
imu = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
imu.bind(("127.0.0.1", IMU_PORT))
requested = {"lidar_mode": "1024x10", "timestamp_mode": "TIME_FROM_INTERNAL_OSC",
             "udp_port_lidar": LIDAR_PORT, "udp_port_imu": IMU_PORT, "operating_mode": "NORMAL"}

if GENERATION == "http-0.10":
    # SensorHttp::create asks the firmware version first.
    status, body = get("api/v1/system/firmware")
    check(status == 200 and "fw" in json.loads(body), "firmware version")
    # set_config(): the active config, @auto destination, the staged one, the merged blob.
    status, body = get("api/v1/sensor/cmd/get_config_param?args=active")
    active = json.loads(body)
    check(status == 200 and active["lidar_mode"] == "1024x10", "get_config_param active")
    status, body = get("api/v1/sensor/cmd/set_udp_dest_auto")
    check(status == 200 and body == "{}", f"set_udp_dest_auto answers exactly {{}} ({body!r})")
    status, body = get("api/v1/sensor/cmd/get_config_param?args=staged")
    staged = json.loads(body)
    check(status == 200 and staged["udp_dest"] == "127.0.0.1", "staged udp_dest is the requester")
    blob = {**active, **requested, "udp_dest": staged["udp_dest"], "lidar_mode": "2048x10"}
    blob["a_key_from_newer_firmware"] = 1  # the SDK relies on firmware ignoring these
    escaped = urllib.parse.quote(json.dumps(blob, separators=(",", ":")), safe="")
    status, body = get("api/v1/sensor/cmd/set_config_param?args=.+" + escaped)
    check(status == 200 and body == '"set_config_param"',
          f"set_config_param . answers exactly \"set_config_param\" ({body!r})")
    status, body = get("api/v1/sensor/cmd/reinitialize")
    check(status == 200 and body == "{}", f"reinitialize answers exactly {{}} ({body!r})")
    status, body = get("api/v1/sensor/cmd/save_config_params")
    check(status == 200 and body == "{}", f"save_config_params answers exactly {{}} ({body!r})")
    # collect_metadata(): sensor_info until RUNNING, then the whole metadata.
    for _ in range(30):
        status, body = get("api/v1/sensor/metadata/sensor_info")
        if json.loads(body)["status"] != "INITIALIZING":
            break
        time.sleep(1)
    check(json.loads(body)["status"] == "RUNNING", "RUNNING")
    status, body = get("api/v1/sensor/metadata")
    metadata = json.loads(body)
    check(status == 200 and metadata["config_params"]["lidar_mode"] == "2048x10",
          "metadata shows the blob's lidar_mode")
    columns = 2048
elif GENERATION == "tcp-0.10":
    tcp = Tcp7501()
    active = tcp.json("get_config_param", "active")
    check(active is not None and active["lidar_mode"] == "1024x10", "get_config_param active")
    check(tcp.cmd("set_udp_dest_auto") == "set_udp_dest_auto", "set_udp_dest_auto echoed")
    staged = tcp.json("get_config_param", "staged")
    check(staged is not None and staged["udp_dest"] == "127.0.0.1", "staged udp_dest")
    blob = {**active, **requested, "udp_dest": staged["udp_dest"], "lidar_mode": "512x20"}
    check(tcp.cmd("set_config_param", ".", json.dumps(blob)) == "set_config_param",
          "set_config_param . echoed")
    check(tcp.cmd("reinitialize") == "reinitialize", "reinitialize echoed")
    check(tcp.cmd("write_config_txt") == "write_config_txt", "write_config_txt echoed")
    # collect_metadata(): get_sensor_info once a second while INITIALIZING.
    for _ in range(30):
        info = tcp.json("get_sensor_info")
        if info is None or info["status"] != "INITIALIZING":
            break
        time.sleep(1)
    check(info is not None and info["status"] == "RUNNING", "get_sensor_info RUNNING")
    for section in ("get_beam_intrinsics", "get_imu_intrinsics", "get_lidar_intrinsics",
                    "get_lidar_data_format", "get_calibration_status"):
        check(isinstance(tcp.json(section), dict), section + " is JSON")
    config = tcp.json("get_config_param", "active")
    check(config is not None and config["lidar_mode"] == "512x20", "active lidar_mode 512x20")
    columns = 512
elif GENERATION == "tcp-1.x":
    tcp = Tcp7501()
    for key, value in (("udp_ip", "127.0.0.1"), ("udp_dest", "127.0.0.1"),
                       ("udp_port_lidar", str(LIDAR_PORT)), ("udp_port_imu", str(IMU_PORT)),
                       ("lidar_mode", "1024x20"), ("timestamp_mode", "TIME_FROM_INTERNAL_OSC")):
        check(tcp.cmd("set_config_param", key, value) == "set_config_param",
              f"set_config_param {key} echoed")
    check(tcp.cmd("reinitialize") == "reinitialize", "reinitialize echoed")
    info = tcp.json("get_sensor_info")
    check(info is not None and info["prod_line"] == "OS-1-64", "get_sensor_info")
    beams = tcp.json("get_beam_intrinsics")
    check(beams is not None and len(beams["beam_altitude_angles"]) == 64, "64 beam altitudes")
    check(isinstance(tcp.json("get_imu_intrinsics"), dict), "get_imu_intrinsics")
    check(isinstance(tcp.json("get_lidar_intrinsics"), dict), "get_lidar_intrinsics")
    alerts = tcp.json("get_alerts")
    check(alerts is not None and alerts["active"] == [], "get_alerts: none active")
    columns = 1024
else:
    sys.exit(f"unknown generation {GENERATION}")

# The stream the new settings give: LEGACY packets of 16 columns of 64 channels, from the unit,
# their measurement ids within the new mode's columns.
# The new configuration's stream starts with the engine's next frame: skip a second of it,
# then take two frames' worth (the old one stopped at the command: test_sensor_apis checks it).
time.sleep(1.0)
lidar.setblocking(False)
try:
    while lidar.recv(70000):
        pass
except BlockingIOError:
    pass
lidar.settimeout(0.2)
packets, deadline = [], time.time() + 8
while time.time() < deadline and len(packets) < 2 * columns // 16:
    try:
        data, source = lidar.recvfrom(70000)
        packets.append((data, source[0]))
    except socket.timeout:
        pass
check(len(packets) >= 16, f"stream: {len(packets)} lidar packets")
check(all(len(p) == 16 * (16 + 64 * 12 + 4) for p, _ in packets), "stream: LEGACY 12608 B")
check(all(src == HOST for _, src in packets), f"stream: from {HOST}")
mids = [struct.unpack_from("<H", p, 8 + k * 788)[0] for p, _ in packets for k in range(16)]
check(bool(mids) and max(mids) < columns and max(mids) >= columns - 16,
      f"stream: measurement ids span {columns} columns")

print("\n".join(log))
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
