#pragma once
// Decoded clouds as files other tools open: PCD (PCL, CloudCompare, Foxglove), PLY (MeshLab,
// Blender) and KITTI's velodyne .bin (the benchmark's loaders).
#include <iosfwd>
#include <optional>
#include <string>

#include "lidaremu/core/cloud.hpp"

namespace lidaremu::core {

enum class CloudFormat : std::uint8_t { kPcd, kPly, kKittiBin };

// PCD v0.7, binary: x y z intensity (reflectivity) ring object_id (the ground truth).
void write_pcd(std::ostream& out, const Cloud& cloud);
// PLY 1.0, binary little endian: one vertex per point with the same properties as the PCD.
void write_ply(std::ostream& out, const Cloud& cloud);
// KITTI: float32 x, y, z, reflectance in [0, 1] (reflectivity / 255), nothing else.
void write_kitti_bin(std::ostream& out, const Cloud& cloud);

// The file name extension of a format, without the dot: "pcd", "ply", "bin".
const char* cloud_format_extension(CloudFormat format);
// From a file name's extension (.pcd, .ply, .bin); nullopt for anything else.
std::optional<CloudFormat> cloud_format_for(const std::string& path);
// Writes `cloud` to `path` in the format its extension names; throws std::runtime_error with
// the path and the reason when it cannot.
void write_cloud_file(const std::string& path, const Cloud& cloud);
// Reads a binary PCD (v0.7) with float x y z fields and, when present, intensity, ring and
// object_id, in any order and among other fields; throws std::runtime_error naming the file and
// what is wrong.
Cloud read_pcd(const std::string& path);

}  // namespace lidaremu::core
