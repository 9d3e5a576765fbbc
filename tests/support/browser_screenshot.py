#!/usr/bin/env python3
"""Loads a page in headless Chromium through ChromeDriver (W3C WebDriver over HTTP, standard
library only), waits until the live view says it drew points, and saves a screenshot.

    browser_screenshot.py URL OUT.png [--min-points N] [--timeout S]

Prints one JSON line: {"points": ..., "frames": ..., "status": ...}. Exit 0 when the page drew at
least --min-points points before the timeout (0: take the screenshot after 3 s regardless)."""
import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())["value"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("out")
    parser.add_argument("--min-points", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()
    driver = shutil.which("chromedriver")
    if not driver:
        sys.exit("chromedriver not found: scripts/setup.sh installs chromium-driver")
    port = free_port()
    profile = tempfile.mkdtemp(prefix="lidaremu-chromium-")
    process = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                call(base, "GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        # WebGL on the CPU (SwiftShader): no GPU needed.
        session = call(base, "POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": [
                "--headless=new", "--no-sandbox", "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader", "--window-size=800,600",
                f"--user-data-dir={profile}"]}}}})["sessionId"]
        at = f"/session/{session}"
        try:
            call(base, "POST", at + "/url", {"url": args.url})
            state = {}
            deadline = time.time() + args.timeout
            settle = time.time() + 3
            while time.time() < deadline:
                state = call(base, "POST", at + "/execute/sync", {"script": (
                    "const s = document.getElementById('status');"
                    "return {points: Number(s.dataset.points), frames: Number(s.dataset.frames),"
                    " status: s.textContent};"), "args": []})
                if args.min_points > 0 and state["points"] >= args.min_points:
                    time.sleep(0.5)  # a few more frames drawn
                    break
                if args.min_points == 0 and time.time() > settle:
                    break
                time.sleep(0.2)
            png = call(base, "GET", at + "/screenshot")
            with open(args.out, "wb") as f:
                f.write(base64.b64decode(png))
            print(json.dumps(state))
            return 0 if args.min_points == 0 or state.get("points", 0) >= args.min_points else 1
        finally:
            call(base, "DELETE", at)
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
