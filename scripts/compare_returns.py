#!/usr/bin/env python3
"""Compares the echoes of two builds (lidaremu-microbench --returns-csv) quantity by quantity.

For each scene: echoes per frame, and the distributions of range, reflectivity and rain-drop
range, each with a two-sample Kolmogorov-Smirnov test; the counts of each kind of echo (targets,
rain drops, noise) per frame. Run before and after a change that re-baselines the output digests:

    build/tests/lidaremu-microbench --returns-csv before.csv    # on the old build
    build/tests/lidaremu-microbench --returns-csv after.csv     # on the new one
    scripts/compare_returns.py before.csv after.csv

Plain Python (no SciPy): the KS p-value is the asymptotic Kolmogorov distribution with
Stephens' small-sample correction.
"""
import csv
import math
import sys
from collections import defaultdict

KINDS = {1: "target", 2: "ghost", 3: "rain drop", 4: "bloom", 5: "noise", 6: "fog"}


def load(path):
    scenes = defaultdict(lambda: defaultdict(list))
    frames = defaultdict(set)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            s = scenes[row["scene"]]
            frames[row["scene"]].add(int(row["frame"]))
            kind = int(row["kind"])
            s["range"].append(float(row["range_m"]))
            s["reflectivity"].append(int(row["reflectivity"]))
            s["kind"].append(kind)
            if kind == 3:
                s["rain drop range"].append(float(row["range_m"]))
    return scenes, frames


def ks_two_sample(a, b):
    """Kolmogorov-Smirnov distance and asymptotic p-value of two samples."""
    if not a or not b:
        return float("nan"), float("nan")
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] == x:
            i += 1
        while j < len(b) and b[j] == x:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    ne = len(a) * len(b) / (len(a) + len(b))
    lam = (math.sqrt(ne) + 0.12 + 0.11 / math.sqrt(ne)) * d
    if lam < 0.3:  # the series does not converge there; Q(0.3) = 0.99999
        return d, 1.0
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return d, min(max(p, 0.0), 1.0)


def mean(v):
    return sum(v) / len(v) if v else float("nan")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare_returns.py BEFORE.csv AFTER.csv")
    before, before_frames = load(sys.argv[1])
    after, after_frames = load(sys.argv[2])
    for scene in sorted(set(before) | set(after)):
        b, a = before[scene], after[scene]
        nb, na = len(before_frames[scene]) or 1, len(after_frames[scene]) or 1
        print(f"== {scene} ({nb} frames before, {na} after)")
        print(f"  echoes per frame: {len(b['range']) / nb:.1f} -> {len(a['range']) / na:.1f}")
        for kind, name in KINDS.items():
            cb = sum(1 for k in b["kind"] if k == kind) / nb
            ca = sum(1 for k in a["kind"] if k == kind) / na
            if cb or ca:
                # Counts per frame as Poisson: the difference in standard errors.
                z = (ca - cb) / math.sqrt((ca / na + cb / nb) or 1)
                print(f"  {name} echoes per frame: {cb:.1f} -> {ca:.1f} ({z:+.1f} sigma)")
        for quantity in ("range", "reflectivity", "rain drop range"):
            d, p = ks_two_sample(b[quantity], a[quantity])
            print(f"  {quantity}: mean {mean(b[quantity]):.4f} -> {mean(a[quantity]):.4f}, "
                  f"KS D = {d:.4f}, p = {p:.3g} (n = {len(b[quantity])}, {len(a[quantity])})")


if __name__ == "__main__":
    main()
