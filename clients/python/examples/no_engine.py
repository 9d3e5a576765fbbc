"""No engine at all: any lidaremud model in a small analytic world (a road, a wall ahead, a box
to the right), ray-cast in Python with the beams, frames and batching of liblidaremu_client.so,
in a 60 Hz game loop that traces the part of the rotation each tick sweeps.

    python3 clients/python/examples/no_engine.py --model os1-64 --frames 20

--engine unity casts in Unity's frame (y up, z forward) to show that only the axes change.
"""
import argparse
import time

import lidaremu_rig

ASPHALT, CONCRETE, OPAQUE_METAL = 6, 8, 2
ROAD_ID, WALL_ID, BOX_ID = 1, 2, 3


def to_engine(v, engine):
    """A ROS-convention vector (x forward, y left, z up) in the engine's axes."""
    x, y, z = v
    return (-y, z, x) if engine == "unity" else (x, y, z)


def from_engine(v, engine):
    if engine == "unity":
        ex, ey, ez = v
        return (ez, -ex, ey)
    return v


def cast(start, direction, height):
    """Nearest hit of the world (ROS axes, sensor `height` m above the road): (t, normal, mat, id)."""
    best = None
    sx, sy, sz = start
    dx, dy, dz = direction
    if dz < -1e-9:  # the road, z = 0
        t = -sz / dz
        best = (t, (0.0, 0.0, 1.0), ASPHALT, ROAD_ID)
    if dx > 1e-9:  # a wall 15 m ahead
        t = (15.0 - sx) / dx
        if t > 0 and (best is None or t < best[0]):
            best = (t, (-1.0, 0.0, 0.0), CONCRETE, WALL_ID)
    # A 2 m box 6 m to the right (y from -7 to -5), x from 4 to 6, z up to 2 m.
    tmin, tmax, normal = 0.0, 1e9, None
    for axis, lo, hi in ((0, 4.0, 6.0), (1, -7.0, -5.0), (2, 0.0, 2.0)):
        s, d = start[axis], direction[axis]
        if abs(d) < 1e-12:
            if s < lo or s > hi:
                tmin = 1e9
            continue
        t1, t2 = (lo - s) / d, (hi - s) / d
        n = [0.0, 0.0, 0.0]
        n[axis] = -1.0 if d > 0 else 1.0
        if min(t1, t2) > tmin:
            tmin, normal = min(t1, t2), tuple(n)
        tmax = min(tmax, max(t1, t2))
    if normal and tmin <= tmax and (best is None or tmin < best[0]):
        best = (tmin, normal, OPAQUE_METAL, BOX_ID)
    return best if best and best[0] < 100 else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", default="udp://127.0.0.1:9870")
    parser.add_argument("--model", default="vlp16")
    parser.add_argument("--engine", default="ros", choices=["ros", "unity"])
    parser.add_argument("--frames", type=int, default=10)
    parser.add_argument("--height", type=float, default=1.8)
    parser.add_argument("--tick-hz", type=float, default=60.0)
    args = parser.parse_args()
    with lidaremu_rig.Rig(model=args.model, engine=args.engine, destination=args.hits) as rig:
        rig.set_pose(to_engine((0.0, 0.0, args.height), args.engine))
        hits = 0
        dt = 1.0 / args.tick_hz
        begun = time.monotonic()
        ticks = 0
        while rig.frame < args.frames:
            rig.tick(dt)
            for first, count in rig.slices():
                for column in range(first, first + count):
                    for channel in range(rig.channels):
                        start, direction = rig.ray(column, channel)
                        s = from_engine(start, args.engine)
                        d = from_engine(direction, args.engine)
                        hit = cast(s, d, args.height)
                        if hit:
                            t, normal, material, object_id = hit
                            point = tuple(s[k] + t * d[k] for k in range(3))
                            rig.set_hit(column, channel, to_engine(point, args.engine),
                                        to_engine(normal, args.engine), material, object_id)
                            hits += 1
                rig.send_slice()
            ticks += 1
            time.sleep(max(0.0, begun + ticks * dt - time.monotonic()))
    print("no_engine.py: %s in %s axes, %d frames, %d hits (liblidaremu_client %s)"
          % (args.model, args.engine, args.frames, hits, lidaremu_rig.version()))


if __name__ == "__main__":
    main()
