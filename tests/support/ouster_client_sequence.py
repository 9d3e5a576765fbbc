#!/usr/bin/env python3
"""Talks to an emulated Ouster exactly as the Ouster SDK's client does (FORMATS.md, firmware 3.1
sequence, then the older cmd/ family and the TCP 7501 text protocol), and checks every reply and
the UDP stream that follows. Standard library only. Exit status 0 when everything held; the
failures are printed otherwise.

Usage: ouster_client_sequence.py HOST HTTP_PORT LIDAR_PORT IMU_PORT
"""
import json
import socket
import struct
import sys
import time
import urllib.error
import urllib.request

HOST, HTTP_PORT, LIDAR_PORT, IMU_PORT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
BASE = f"http://{HOST}:{HTTP_PORT}"
failures = []
log = []


def check(condition, what):
    log.append(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def http(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
            return response.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def receive_lidar(sock, seconds):
    packets, deadline = [], time.time() + seconds
    while time.time() < deadline and len(packets) < 64:
        try:
            data, source = sock.recvfrom(70000)
            packets.append((data, source[0]))
        except socket.timeout:
            pass
    return packets


lidar = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
lidar.bind(("127.0.0.1", LIDAR_PORT))
lidar.settimeout(0.2)
imu = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
imu.bind(("127.0.0.1", IMU_PORT))

# 1. sensor_info
status, info = http("GET", "/api/v1/sensor/metadata/sensor_info")
check(status == 200 and info["status"] == "RUNNING", "1 sensor_info: RUNNING")
check(info["prod_line"] == "OS-1-64", "1 sensor_info: prod_line OS-1-64")
version = info["image_rev"].split("-v")[-1].split("+")[0]
check(tuple(int(x) for x in version.split(".")) >= (3, 1, 0), f"1 image_rev {version} >= 3.1")
first_init_id = info["initialization_id"]
# 2. active config
status, config = http("GET", "/api/v1/sensor/config")
check(status == 200 and config["lidar_mode"] == "1024x10", "2 config: 1024x10 active")
# 3. udp_dest @auto, staged
status, _ = http("POST", "/api/v1/sensor/config?staging=true&reinit=false&persist=false",
                 {"udp_dest": "@auto"})
check(status == 200, "3 POST udp_dest @auto staged")
# 4. the staged config shows the requester
status, staged = http("GET", "/api/v1/sensor/config?staging=true")
check(status == 200 and staged["udp_dest"] == "127.0.0.1", "4 staged udp_dest is the requester")
status, active = http("GET", "/api/v1/sensor/config")
check(active["lidar_mode"] == "1024x10", "4 active config unchanged before reinit")
# 5. the full merged config
merged = dict(config)
merged.update({"udp_dest": staged["udp_dest"], "udp_port_lidar": LIDAR_PORT,
               "udp_port_imu": IMU_PORT, "lidar_mode": "2048x10",
               "udp_profile_lidar": "RNG19_RFL8_SIG16_NIR16"})
status, _ = http("POST", "/api/v1/sensor/config?staging=true&reinit=false&persist=false", merged)
check(status == 200, "5 POST merged config staged")
# 6. reinitialise
status, _ = http("POST", "/api/v1/sensor/config?staging=true&reinit=true&persist=false", {})
check(status == 200, "6 POST reinit")
# 7. wait while INITIALIZING
for _ in range(30):
    status, info = http("GET", "/api/v1/sensor/metadata/sensor_info")
    if info["status"] != "INITIALIZING":
        break
    time.sleep(1)
check(info["status"] == "RUNNING", "7 RUNNING after reinit")
check(info["initialization_id"] != first_init_id, "7 a new init_id")
# 8. user data
status, user = http("GET", "/api/v1/user/data")
check(status == 200 and isinstance(user, str), "8 user/data is a JSON string")
# 9. metadata
status, metadata = http("GET", "/api/v1/sensor/metadata")
check(status == 200 and sorted(metadata) == sorted(
    ["sensor_info", "beam_intrinsics", "imu_intrinsics", "lidar_intrinsics", "config_params",
     "lidar_data_format", "calibration_status"]), "9 metadata: the seven sections")
fmt = metadata["lidar_data_format"]
check(fmt["columns_per_frame"] == 2048 and fmt["udp_profile_lidar"] == "RNG19_RFL8_SIG16_NIR16",
      "9 metadata: 2048 columns, RNG19 profile")
check(metadata["config_params"]["udp_port_lidar"] == LIDAR_PORT, "9 metadata: our lidar port")
init_id = metadata["sensor_info"]["initialization_id"]
serial = int(metadata["sensor_info"]["prod_sn"])
# 9b. alerts (firmware 2.x and later): none active
status, alerts = http("GET", "/api/v1/sensor/alerts")
check(status == 200 and alerts["active"] == [] and alerts["log"] == [], "9b alerts: none")
# 10. zone monitor (firmware 3.2): 404 is what a 3.1 unit says
status, _ = http("GET", "/api/v1/zone_monitor/active/zip")
check(status == 404, "10 zone_monitor 404")

# The stream now: RNG19 packets for 64 channels, the new init_id and serial, from the sensor.
packets = receive_lidar(lidar, 8.0)
check(len(packets) >= 16, f"stream: {len(packets)} lidar packets after reinit")
expected_size = 32 + 16 * (12 + 64 * 12) + 32
check(all(len(p) == expected_size for p, _ in packets), f"stream: every packet {expected_size} B")
check(all(src == HOST for _, src in packets), f"stream: every packet from {HOST}")
if packets:
    p = packets[-1][0]
    packet_type, frame_id = struct.unpack_from("<HH", p, 0)
    header_init = int.from_bytes(p[4:7], "little")
    header_serial = int.from_bytes(p[7:12], "little")
    check(packet_type == 1, "stream: packet_type 1")
    check(header_init == init_id, "stream: header init_id = metadata init_id")
    check(header_serial == serial, "stream: header serial = metadata prod_sn")
    mids = [struct.unpack_from("<H", p, 32 + k * (12 + 64 * 12) + 8)[0] for k in range(16)]
    check(all(m < 2048 for m in mids) and mids[0] % 16 == 0, "stream: measurement ids of 2048")

# Older firmware: cmd/ family and system/firmware.
status, firmware = http("GET", "/api/v1/system/firmware")
check(status == 200 and "fw" in firmware, "old: system/firmware")
status, reply = http("GET", "/api/v1/sensor/cmd/set_udp_dest_auto")
check(status == 200 and reply == {}, "old: set_udp_dest_auto -> {}")
status, reply = http("GET", "/api/v1/sensor/cmd/set_config_param?args=lidar_mode%201024x10")
check(status == 200 and reply == "set_config_param", "old: set_config_param -> 'set_config_param'")
status, reply = http("GET", "/api/v1/sensor/cmd/reinitialize")
check(status == 200 and reply == {}, "old: reinitialize -> {}")
status, reply = http("GET", "/api/v1/sensor/cmd/get_lidar_data_format")
check(status == 200 and reply["columns_per_frame"] == 1024, "old: back at 1024 columns")

# TCP 7501 text protocol.
with socket.create_connection((HOST, 7501), timeout=10) as text:
    stream = text.makefile("rw", newline="\n")

    def ask(line):
        stream.write(line + "\n")
        stream.flush()
        return stream.readline().rstrip("\n")

    reply = json.loads(ask("get_sensor_info"))
    check(reply["prod_line"] == "OS-1-64", "tcp: get_sensor_info")
    check(ask("set_config_param udp_profile_lidar LEGACY") == "set_config_param",
          "tcp: set_config_param")
    check(ask("reinitialize") == "reinitialize", "tcp: reinitialize")
    check(json.loads(ask("get_config_param active"))["udp_profile_lidar"] == "LEGACY",
          "tcp: profile now LEGACY")
    check(ask("set_config_param lidar_mode 999x7").startswith("error:"), "tcp: bad mode refused")
    check(ask("no_such_command").startswith("error:"), "tcp: unknown command refused")

# Hostile requests get clear 4xx answers and the API keeps serving.
status, reply = http("POST", "/api/v1/sensor/config", {"lidar_mode": "999x7"})
check(status == 400 and "lidar_mode" in reply, "bad: lidar_mode refused with a reason")
status, reply = http("POST", "/api/v1/sensor/config", {"no_such_key": 1})
check(status == 400 and "unknown config parameter" in reply, "bad: unknown key refused")
with socket.create_connection((HOST, HTTP_PORT), timeout=10) as raw:
    raw.sendall(b"THIS IS NOT HTTP\r\n\r\n")
    check(raw.recv(100).startswith(b"HTTP/1.1 400"), "bad: garbage -> 400")
with socket.create_connection((HOST, HTTP_PORT), timeout=10) as raw:
    raw.sendall(b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
    check(raw.recv(100).startswith(b"HTTP/1.1 4"), "bad: 20 kB header refused")
status, info = http("GET", "/api/v1/sensor/metadata/sensor_info")
check(status == 200, "still serving after hostile requests")

print("\n".join(log))
if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print(f"all {len(log)} checks passed")
