#include "lidaremu/core/cloud_export.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <ostream>
#include <stdexcept>

#include "lidaremu/core/byte_io.hpp"

namespace lidaremu::core {
namespace {

// Every format here is little endian on disk, as on the machines that read them.
void put_bytes(std::ostream& out, std::span<const std::uint8_t> bytes) {
  out.write(reinterpret_cast<const char*>(bytes.data()),  // NOLINT: bytes to a byte stream
            static_cast<std::streamsize>(bytes.size()));
}

// x y z intensity ring object_id: the PCD's and the PLY's record.
void put_point(std::ostream& out, const CloudPoint& p) {
  std::array<std::uint8_t, 22> record{};
  store_le<float>(record, 0, p.x);
  store_le<float>(record, 4, p.y);
  store_le<float>(record, 8, p.z);
  store_le<float>(record, 12, static_cast<float>(p.reflectivity));
  store_le<std::uint16_t>(record, 16, p.ring);
  store_le<std::uint32_t>(record, 18, p.object_id);
  put_bytes(out, record);
}

}  // namespace

void write_pcd(std::ostream& out, const Cloud& cloud) {
  const auto n = cloud.points.size();
  out << "# .PCD v0.7 - lidaremu frame " << cloud.frame_number << "\n"
      << "VERSION 0.7\n"
      << "FIELDS x y z intensity ring object_id\n"
      << "SIZE 4 4 4 4 2 4\n"
      << "TYPE F F F F U U\n"
      << "COUNT 1 1 1 1 1 1\n"
      << "WIDTH " << n << "\nHEIGHT 1\n"
      << "VIEWPOINT 0 0 0 1 0 0 0\n"
      << "POINTS " << n << "\nDATA binary\n";
  for (const auto& p : cloud.points) put_point(out, p);
}

void write_ply(std::ostream& out, const Cloud& cloud) {
  out << "ply\nformat binary_little_endian 1.0\n"
      << "comment lidaremu frame " << cloud.frame_number << "\n"
      << "element vertex " << cloud.points.size() << "\n"
      << "property float x\nproperty float y\nproperty float z\n"
      << "property float intensity\nproperty ushort ring\nproperty uint object_id\n"
      << "end_header\n";
  for (const auto& p : cloud.points) put_point(out, p);
}

void write_kitti_bin(std::ostream& out, const Cloud& cloud) {
  for (const auto& p : cloud.points) {
    std::array<std::uint8_t, 16> record{};
    store_le<float>(record, 0, p.x);
    store_le<float>(record, 4, p.y);
    store_le<float>(record, 8, p.z);
    store_le<float>(record, 12,
                    static_cast<float>(std::min<std::uint16_t>(p.reflectivity, 255)) / 255.0f);
    put_bytes(out, record);
  }
}

std::optional<CloudFormat> cloud_format_for(const std::string& path) {
  const auto dot = path.rfind('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string ext = path.substr(dot);
  if (ext == ".pcd") return CloudFormat::kPcd;
  if (ext == ".ply") return CloudFormat::kPly;
  if (ext == ".bin") return CloudFormat::kKittiBin;
  return std::nullopt;
}

void write_cloud_file(const std::string& path, const Cloud& cloud) {
  const auto format = cloud_format_for(path);
  if (!format) {
    throw std::runtime_error(path +
                             ": unknown cloud format (the name must end in .pcd, .ply or "
                             ".bin)");
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  switch (*format) {
    case CloudFormat::kPcd:
      write_pcd(out, cloud);
      break;
    case CloudFormat::kPly:
      write_ply(out, cloud);
      break;
    case CloudFormat::kKittiBin:
      write_kitti_bin(out, cloud);
      break;
  }
  out.flush();
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace lidaremu::core
