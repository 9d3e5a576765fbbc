#!/usr/bin/env python3
"""Plays a CARLA semantic lidar into the CARLA bridge, without CARLA: 16 channels from -15° to
+15°, 10 Hz, 1,808 azimuths a turn reported in 16 slices as CARLA's callbacks do, in CARLA's sensor frame
(x forward, y RIGHT, z up). The world: a building wall 10 m ahead (tag 3, object 77), the road
1.8 m below (tag 1, object 5), a car 5 m to the right (tag 14, object 99).

    carla_feed.py udp://127.0.0.1:PORT TURNS
"""
import math
import sys
import time

import lidaremu_carla

WALL, ROAD, CAR = (3, 77), (1, 5), (14, 99)


def detect(d):
    """The nearest surface along direction d from the sensor: (point, cos, object, tag) or None."""
    best = None
    if d[0] > 1e-9:
        t = 10.0 / d[0]
        best = (t, (-1.0, 0.0, 0.0), WALL)
    if d[2] < -1e-9:
        t = -1.8 / d[2]
        if best is None or t < best[0]:
            best = (t, (0.0, 0.0, 1.0), ROAD)
    if d[1] > 1e-9:  # the car's side, the plane y = +5 (right), 2..6 m ahead, up to 1.5 m high
        t = 5.0 / d[1]
        x, z = t * d[0], t * d[2] + 1.8
        if 2.0 <= x <= 6.0 and 0.0 <= z <= 1.5 and (best is None or t < best[0]):
            best = (t, (0.0, -1.0, 0.0), CAR)
    if best is None or best[0] > 100:
        return None
    t, n, (tag, obj) = best
    cos_inc = abs(sum(a * b for a, b in zip(d, n)))
    return (t * d[0], t * d[1], t * d[2], cos_inc, obj, tag)


def main():
    destination, turns = sys.argv[1], int(sys.argv[2])
    bridge = lidaremu_carla.Bridge(model="vlp16", destination=destination)
    slices, per_slice = 16, 113  # 1,808 azimuths a turn: the VLP-16's columns at 10 Hz
    elevations = [math.radians(-15 + 2 * k) for k in range(16)]
    now = 1.0
    for _ in range(turns):
        for s in range(slices):
            detections = []
            for i in range(per_slice):
                a = 2 * math.pi * (s * per_slice + i) / (slices * per_slice)
                for e in elevations:
                    d = (math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e))
                    hit = detect(d)
                    if hit:
                        detections.append(hit)
            bridge.on_measurement(detections, math.degrees(2 * math.pi * s / slices), now)
            now += 0.1 / slices
            time.sleep(0.1 / slices)
    bridge.on_measurement([], 0.0, now)  # the last turn completes
    print("carla_feed.py: %d frames, %d detections" % (bridge.frames_sent, bridge.detections))
    bridge.close()


if __name__ == "__main__":
    main()
