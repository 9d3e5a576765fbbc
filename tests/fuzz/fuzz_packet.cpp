// Fuzz target: one datagram through every spec decoder the consumer-side tools run on what the
// network hands them (lidaremu-inspect, the live view, the tests): Velodyne (VLP-16, HDL-64E),
// Ouster (OS1-64 LEGACY), every Hesai format and its GPS packet reader, every RoboSense model as
// DIFOP and, after a valid DIFOP, as MSOP, and Livox's point / IMU packets and command frames.
// None may read past the datagram or crash on it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "lidaremu/core/hesai.hpp"
#include "lidaremu/core/livox.hpp"
#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/robosense.hpp"
#include "lidaremu/core/velodyne.hpp"

namespace {
using namespace lidaremu::core;

struct Decoders {
  std::vector<velodyne::SpecDecoder> velodyne;
  std::optional<ouster::SpecDecoder> ouster;
  std::vector<hesai::SpecDecoder> hesai;
  std::vector<const SensorModel*> robosense;
  Decoders() {
    for (const char* name : {"vlp16", "hdl64e"}) velodyne.emplace_back(*find_sensor_model(name));
    const auto os1 = *make_ouster_scan(*find_sensor_model("os1-64"), 1024, 10).pattern;
    ouster.emplace(ouster::parse_metadata(ouster::metadata_json(os1, {}, {})));
    for (const SensorModel* m : all_sensor_models()) {
      if (m->family == SensorFamily::kHesai) {
        hesai.emplace_back(*m->hesai.format,
                           hesai::Calibration{m->elevation_deg, m->azimuth_offset_deg});
      }
      if (m->family == SensorFamily::kRoboSense) robosense.push_back(m);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Decoders decoders;
  const std::span<const std::uint8_t> packet(data, size);
  std::vector<velodyne::Point> velodyne_points;
  for (auto& d : decoders.velodyne) (void)d.decode(packet, velodyne_points);
  std::vector<ouster::Column> columns;
  (void)decoders.ouster->decode(packet, columns);
  std::vector<hesai::Point> hesai_points;
  hesai::PacketInfo info;
  for (auto& d : decoders.hesai) (void)d.decode(packet, hesai_points, &info);
  hesai::GpsInfo gps;
  (void)hesai::read_gps_packet(packet, gps);
  std::vector<robosense::Point> robosense_points;
  for (const SensorModel* m : decoders.robosense) {
    robosense::SpecDecoder d(*m);
    (void)d.on_difop(packet);
    // As MSOP after the unit's own DIFOP: every MSOP path runs.
    if (!d.has_difop()) (void)d.on_difop(robosense::difop_packet(*m, 600, 0x00, 0, {}));
    robosense::PacketInfo msop;
    (void)d.decode(packet, robosense_points, &msop);
  }
  std::vector<livox::Point> livox_points;
  livox::PacketInfo livox_info;
  (void)livox::decode_points(packet, livox_points, &livox_info);
  livox::ImuSample imu;
  (void)livox::decode_imu(packet, imu);
  livox::CommandView command;
  (void)livox::read_command(packet, command);
  return 0;
}
