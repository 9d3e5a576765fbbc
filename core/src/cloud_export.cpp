#include "lidaremu/core/cloud_export.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "lidaremu/core/byte_io.hpp"

namespace lidaremu::core {
namespace {

// Every format here is little endian on disk, as on the machines that read them.
void put_bytes(std::ostream& out, std::span<const std::uint8_t> bytes) {
  out.write(reinterpret_cast<const char*>(bytes.data()),  // NOLINT: bytes to a byte stream
            static_cast<std::streamsize>(bytes.size()));
}

// x y z intensity ring object_id echo kind pulse_width: the PCD's and the PLY's record.
void put_point(std::ostream& out, const CloudPoint& p) {
  std::array<std::uint8_t, 28> record{};
  store_le<float>(record, 0, p.x);
  store_le<float>(record, 4, p.y);
  store_le<float>(record, 8, p.z);
  store_le<float>(record, 12, static_cast<float>(p.reflectivity));
  store_le<std::uint16_t>(record, 16, p.ring);
  store_le<std::uint32_t>(record, 18, p.object_id);
  record[22] = p.echo;
  record[23] = p.kind;
  store_le<float>(record, 24, p.pulse_width_ns);
  put_bytes(out, record);
}

}  // namespace

void write_pcd(std::ostream& out, const Cloud& cloud) {
  const auto n = cloud.points.size();
  out << "# .PCD v0.7 - lidaremu frame " << cloud.frame_number << "\n"
      << "VERSION 0.7\n"
      << "FIELDS x y z intensity ring object_id echo kind pulse_width\n"
      << "SIZE 4 4 4 4 2 4 1 1 4\n"
      << "TYPE F F F F U U U U F\n"
      << "COUNT 1 1 1 1 1 1 1 1 1\n"
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
      << "property uchar echo\nproperty uchar kind\nproperty float pulse_width\n"
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

const char* cloud_format_extension(CloudFormat format) {
  switch (format) {
    case CloudFormat::kPcd:
      return "pcd";
    case CloudFormat::kPly:
      return "ply";
    case CloudFormat::kKittiBin:
      return "bin";
  }
  return "?";
}

std::optional<CloudFormat> cloud_format_for(const std::string& path) {
  const auto dot = path.rfind('.');
  if (dot == std::string::npos) return std::nullopt;
  for (const auto format : {CloudFormat::kPcd, CloudFormat::kPly, CloudFormat::kKittiBin}) {
    if (path.compare(dot + 1, std::string::npos, cloud_format_extension(format)) == 0)
      return format;
  }
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

Cloud read_pcd(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const auto fail = [&](const std::string& why) { throw std::runtime_error(path + ": " + why); };
  std::vector<std::string> names;
  std::vector<std::size_t> sizes;
  std::vector<char> types;
  std::size_t points = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "FIELDS") {
      for (std::string w; words >> w;) names.push_back(w);
    } else if (key == "SIZE") {
      for (std::size_t v = 0; words >> v;) sizes.push_back(v);
    } else if (key == "TYPE") {
      for (char t = 0; words >> t;) types.push_back(t);
    } else if (key == "COUNT") {
      for (int c = 0; words >> c;) {
        if (c != 1) fail("COUNT other than 1 is not supported");
      }
    } else if (key == "POINTS") {
      words >> points;
    } else if (key == "DATA") {
      std::string kind;
      words >> kind;
      if (kind != "binary") fail("DATA " + kind + " is not supported (binary only)");
      break;
    }
  }
  if (names.empty() || names.size() != sizes.size() || names.size() != types.size()) {
    fail("FIELDS, SIZE and TYPE disagree");
  }
  if (points > 100'000'000) fail("more than 1e8 points");
  std::size_t stride = 0;
  std::map<std::string, std::pair<std::size_t, std::size_t>> field;  // name -> (offset, size)
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (sizes[i] != 1 && sizes[i] != 2 && sizes[i] != 4 && sizes[i] != 8) fail("bad SIZE");
    field[names[i]] = {stride, sizes[i]};
    stride += sizes[i];
  }
  for (const char* required : {"x", "y", "z"}) {
    if (!field.contains(required) || field[required].second != 4) {
      fail(std::string("no float field ") + required);
    }
  }
  std::vector<std::uint8_t> body(points * stride);
  in.read(reinterpret_cast<char*>(body.data()),  // NOLINT: file bytes into a byte buffer
          static_cast<std::streamsize>(body.size()));
  if (static_cast<std::size_t>(in.gcount()) != body.size()) fail("shorter than POINTS says");
  const auto unsigned_at = [&](const char* name, std::size_t base) -> std::uint32_t {
    const auto it = field.find(name);
    if (it == field.end()) return 0;
    const auto [offset, size] = it->second;
    if (size == 1) return body[base + offset];
    if (size == 2) return load_le<std::uint16_t>(body, base + offset);
    return load_le<std::uint32_t>(body, base + offset);
  };
  Cloud cloud;
  cloud.points.resize(points);
  for (std::size_t i = 0; i < points; ++i) {
    const std::size_t base = i * stride;
    CloudPoint& p = cloud.points[i];
    p.x = load_le<float>(body, base + field["x"].first);
    p.y = load_le<float>(body, base + field["y"].first);
    p.z = load_le<float>(body, base + field["z"].first);
    p.range_m = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z);
    if (const auto it = field.find("intensity"); it != field.end() && it->second.second == 4) {
      p.reflectivity = static_cast<std::uint16_t>(
          std::clamp(load_le<float>(body, base + it->second.first), 0.0f, 65535.0f));
    }
    p.ring = static_cast<std::uint16_t>(unsigned_at("ring", base));
    p.object_id = unsigned_at("object_id", base);
    p.echo = static_cast<std::uint8_t>(unsigned_at("echo", base));
    p.kind = static_cast<std::uint8_t>(unsigned_at("kind", base));
    if (const auto it = field.find("pulse_width"); it != field.end() && it->second.second == 4) {
      p.pulse_width_ns = load_le<float>(body, base + it->second.first);
    }
  }
  return cloud;
}

}  // namespace lidaremu::core
