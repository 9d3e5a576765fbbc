#include "lidaremu/clients/hit_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "lidaremu/protocol/control_generated.h"
#include "lidaremu/protocol/hit_batch_generated.h"

namespace lidaremu::clients {

std::vector<std::uint8_t> build_hit_batch(const BatchHeader& h, std::span<const float> rows,
                                          std::span<const std::uint32_t> object_ids) {
  flatbuffers::FlatBufferBuilder fbb(rows.size() * sizeof(float) + 256);
  const auto rows_vec = fbb.CreateVector(rows.data(), rows.size());
  flatbuffers::Offset<flatbuffers::Vector<std::uint32_t>> ids_vec;
  if (!object_ids.empty()) ids_vec = fbb.CreateVector(object_ids.data(), object_ids.size());
  wire::HitBatchBuilder b(fbb);
  b.add_sensor_id(h.sensor_id);
  b.add_frame(h.frame);
  b.add_first_column(h.first_column);
  b.add_column_count(h.column_count);
  b.add_rays_per_beam(h.rays_per_beam);
  b.add_segments_per_path(h.segments_per_path);
  b.add_layout(h.floats_per_row == 8 ? wire::RowLayout::Path8 : wire::RowLayout::Hit7);
  b.add_sim_time_ns(h.sim_time_ns);
  if (h.world_frame) {
    const wire::Pose pose({h.position[0], h.position[1], h.position[2]},
                          {h.orientation_xyzw[0], h.orientation_xyzw[1], h.orientation_xyzw[2],
                           h.orientation_xyzw[3]});
    b.add_world_frame(true);
    b.add_sensor_pose(&pose);
  }
  if (!object_ids.empty()) b.add_object_ids(ids_vec);
  b.add_rows(rows_vec);
  wire::FinishHitBatchBuffer(fbb, b.Finish());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<std::vector<std::uint8_t>> build_frame_batches(
    const BatchHeader& frame_header, std::uint16_t channels, std::span<const float> rows,
    std::uint64_t column_period_ns, std::size_t max_bytes,
    std::span<const std::uint32_t> object_ids) {
  constexpr std::size_t kHeaderAllowance = 160;
  const std::size_t rows_per_column =
      std::size_t{channels} * frame_header.rays_per_beam * frame_header.segments_per_path;
  const std::size_t floats_per_column = rows_per_column * frame_header.floats_per_row;
  const std::size_t ids_per_column = object_ids.empty() ? 0 : rows_per_column;
  const std::size_t bytes_per_column = (floats_per_column + ids_per_column) * sizeof(float);
  if (max_bytes <= kHeaderAllowance + bytes_per_column) {
    throw std::invalid_argument("one column does not fit in a datagram of " +
                                std::to_string(max_bytes) + " bytes");
  }
  const std::size_t columns_per_batch = (max_bytes - kHeaderAllowance) / bytes_per_column;
  std::vector<std::vector<std::uint8_t>> out;
  for (std::uint32_t done = 0; done < frame_header.column_count;) {
    BatchHeader h = frame_header;
    h.first_column = frame_header.first_column + done;
    h.column_count = static_cast<std::uint32_t>(
        std::min<std::size_t>(columns_per_batch, frame_header.column_count - done));
    h.sim_time_ns =
        frame_header.sim_time_ns ? frame_header.sim_time_ns + done * column_period_ns : 0;
    out.push_back(build_hit_batch(
        h, rows.subspan(done * floats_per_column, h.column_count * floats_per_column),
        object_ids.empty()
            ? object_ids
            : object_ids.subspan(done * ids_per_column, h.column_count * ids_per_column)));
    done += h.column_count;
  }
  return out;
}

bool restamp_hit_batch(std::span<std::uint8_t> datagram, std::uint32_t frame,
                       std::uint64_t sim_time_ns) {
  flatbuffers::Verifier verifier(datagram.data(), datagram.size());
  if (!wire::VerifyHitBatchBuffer(verifier)) return false;
  auto* batch = wire::GetMutableHitBatch(datagram.data());
  return batch->mutate_frame(frame) && batch->mutate_sim_time_ns(sim_time_ns);
}

std::vector<std::uint8_t> build_control(const ControlMessage& m) {
  flatbuffers::FlatBufferBuilder fbb(128);
  const auto weather =
      wire::CreateWeather(fbb, m.rain_mm_per_h, m.fog_visibility_m, m.sun_irradiance_w_per_m2);
  wire::ControlBuilder b(fbb);
  b.add_sensor_id(m.sensor_id);
  b.add_weather(weather);
  const wire::Pose pose(
      {float(m.pose_position.x()), float(m.pose_position.y()), float(m.pose_position.z())},
      {float(m.pose_orientation.x()), float(m.pose_orientation.y()), float(m.pose_orientation.z()),
       float(m.pose_orientation.w())});
  if (m.has_pose) b.add_sensor_pose(&pose);
  b.add_run_state(m.pause    ? wire::RunState::Pause
                  : m.resume ? wire::RunState::Resume
                             : wire::RunState::Unchanged);
  wire::FinishControlBuffer(fbb, b.Finish());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

UdpSender::UdpSender(const std::string& destination) {
  std::string rest = destination;
  if (rest.rfind("udp://", 0) == 0) rest = rest.substr(6);
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos)
    throw std::runtime_error("'" + destination + "' is not udp://HOST:PORT");
  sockaddr_in to{};
  to.sin_family = AF_INET;
  const std::string host =
      rest.substr(0, colon) == "localhost" ? "127.0.0.1" : rest.substr(0, colon);
  const int port = std::atoi(rest.c_str() + colon + 1);
  if (inet_pton(AF_INET, host.c_str(), &to.sin_addr) != 1 || port <= 0 || port > 65535) {
    throw std::runtime_error("'" + destination + "' is not udp://IPV4:PORT");
  }
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API takes sockaddr*
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    throw std::runtime_error("cannot open a UDP socket to " + destination);
  }
  const int buffer = 4 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
}

UdpSender::~UdpSender() {
  if (fd_ >= 0) ::close(fd_);
}

bool UdpSender::send(std::span<const std::uint8_t> datagram) {
  return ::send(fd_, datagram.data(), datagram.size(), 0) == static_cast<ssize_t>(datagram.size());
}

}  // namespace lidaremu::clients
