#pragma once
// What the micro-benchmark binary prints instead of timings: the output digests of nine busy
// configurations (checked against tests/data/output_digests.txt by the output_digests tests) and
// every echo of a few frames as CSV (scripts/compare_returns.py).

namespace lidaremu::bench {

int print_digests();
// Compares the digests with a baseline file on the instruction set in use, or on every one this
// CPU runs (`every_simd_target`): 0 when all match, 1 when some differ, 2 when unreadable.
int check_digests(const char* baseline_path, bool every_simd_target);
int write_returns_csv(const char* path);

}  // namespace lidaremu::bench
