#!/usr/bin/env python3
"""A hostile neighbour for the soak: slowloris connections on the control port, a loop of
Ouster reinitialize requests on one emulated sensor, clients that pipeline requests on its TCP
7501 and HTTP ports and never read the answers, and a /healthz probe timing every answer.
Runs for SECONDS, then prints the probe's p50/p99/max in milliseconds and the counts.

Usage: hostile_neighbour.py SECONDS CONTROL_HOST:PORT SENSOR_HOST:PORT [SLOW_CONNECTIONS]
"""
import socket
import sys
import threading
import time
import urllib.request

seconds = float(sys.argv[1])
control_host, control_port = sys.argv[2].rsplit(":", 1)
sensor_host, sensor_port = sys.argv[3].rsplit(":", 1)
slow_count = int(sys.argv[4]) if len(sys.argv) > 4 else 40
deadline = time.time() + seconds
counts = {"reinitialize": 0, "reinitialize_failed": 0, "slow_reconnects": 0,
          "non_reader_reconnects": 0}


def keep_open(count, open_one, poke, counter):
    """Holds `count` connections open for the whole run: `poke` each once a second (it raises
    once the daemon has closed that one), and opens new ones for those it closed."""
    conns = []
    while time.time() < deadline:
        while len(conns) < count:
            try:
                conns.append(open_one())
                counts[counter] += 1
            except OSError:
                break
        alive = []
        for c in conns:
            try:
                poke(c)
                alive.append(c)
            except BlockingIOError:  # its send buffer full: still open
                alive.append(c)
            except OSError:
                c.close()
        conns = alive
        time.sleep(1.0)
    for c in conns:
        c.close()


def slowloris():
    """A header byte a second, never finishing the request."""
    def open_one():
        c = socket.create_connection((control_host, int(control_port)), timeout=2)
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        return c
    keep_open(slow_count, open_one, lambda c: c.sendall(b"X"), "slow_reconnects")


def non_readers(port, request, count=8):
    """Connections with a tiny receive window that pipeline requests and never read: the unit
    closes them at its write deadline (5 s), and they come back."""
    def open_one():
        c = socket.socket()
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        c.settimeout(2)
        c.connect((sensor_host, port))
        c.setblocking(False)
        try:
            c.send(request * 2000)
        except OSError:
            pass
        return c
    keep_open(count, open_one, lambda c: c.send(request), "non_reader_reconnects")


def reinitialize():
    url = f"http://{sensor_host}:{sensor_port}/api/v1/sensor/cmd/reinitialize"
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                r.read()
            counts["reinitialize"] += 1
        except OSError:
            counts["reinitialize_failed"] += 1
        time.sleep(0.05)


threads = [threading.Thread(target=slowloris), threading.Thread(target=reinitialize),
           threading.Thread(target=non_readers, args=(7501, b"get_beam_intrinsics\n")),
           threading.Thread(target=non_readers,
                            args=(int(sensor_port),
                                  b"GET /api/v1/sensor/metadata HTTP/1.1\r\nHost: x\r\n\r\n"))]
for t in threads:
    t.start()
latencies, failures = [], 0
while time.time() < deadline:
    start = time.time()
    try:
        with urllib.request.urlopen(f"http://{control_host}:{control_port}/healthz", timeout=5) as r:
            r.read()
        latencies.append((time.time() - start) * 1e3)
    except OSError:
        failures += 1
    time.sleep(0.2)
for t in threads:
    t.join()
latencies.sort()
pick = lambda q: latencies[min(len(latencies) - 1, int(q * (len(latencies) - 1)))] if latencies else -1
print(f"hostile: /healthz {len(latencies)} answered, {failures} failed; "
      f"p50 {pick(0.5):.2f} ms, p99 {pick(0.99):.2f} ms, max {pick(1.0):.2f} ms")
print(f"hostile: {counts['reinitialize']} reinitialize answered, {counts['reinitialize_failed']} "
      f"failed; {counts['slow_reconnects']} slow connections opened, "
      f"{counts['non_reader_reconnects']} non-reading ones")
print(f"hostile_p99_ms={pick(0.99):.3f} hostile_failures={failures}")
