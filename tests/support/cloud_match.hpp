#pragma once
// Comparing a decoded cloud with a driver's ground-truth cloud: the PCD reader and nearest-point
// distances the real-capture tests share.
#include <string>
#include <vector>

namespace lidaremu::test {

struct XYZ {
  float x, y, z;
};

// Binary PCD with x y z as the first three float fields (the nebula ground-truth files).
std::vector<XYZ> read_pcd_xyz(const std::string& path);
// For each point of `from`, the distance to the nearest point of `to` within the neighbouring
// cells of a voxel hash of `cell` metres (1e9 when none: the search reaches at least `cell`). Dense
// clouds (several scans of one scene) search faster in smaller cells.
std::vector<double> nearest_distances(const std::vector<XYZ>& from, const std::vector<XYZ>& to,
                                      double cell = 0.1);
double median(std::vector<double> v);

}  // namespace lidaremu::test
