"""No engine at all: a VLP-16 in front of a concrete wall, sent to lidaremud from Python.

    PYTHONPATH=build/python:clients/python /usr/bin/python3 clients/python/examples/wall.py --port 9870
"""
import argparse
import time

import lidaremu_client as lc

CONCRETE = 8


def wall_frame(distance_m, rpm):
    """Rows for one VLP-16 frame: a wall x = distance ahead (normal facing the sensor)."""
    rows = []
    for column in range(lc.vlp16_columns_per_frame(rpm)):
        for laser in range(16):
            dx, dy, dz = lc.vlp16_direction(column, laser, rpm)
            if dx > 0.2:  # the wall only covers what lies ahead
                t = distance_m / dx
                rows += [t * dx, t * dy, t * dz, -1.0, 0.0, 0.0, CONCRETE]
            else:
                rows += [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9870)
    parser.add_argument("--frames", type=int, default=2)
    parser.add_argument("--distance", type=float, default=10.0)
    args = parser.parse_args()
    client = lc.Client(args.host, args.port, channels=16)
    rows = wall_frame(args.distance, 600)
    for frame in range(args.frames):
        client.send_frame(frame, rows, sim_time_ns=int((1 + frame * 0.1) * 1e9))
        time.sleep(0.05)
    client.close()
    print("wall.py: sent %d frames of a wall at %.1f m" % (args.frames, args.distance))


if __name__ == "__main__":
    main()
