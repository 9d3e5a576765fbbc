// The C ABI over the C++ client library: exceptions and invalid arguments become return codes
// and a per-rig message; nothing throws across the boundary.
#include "lidaremu_client.h"

#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "lidaremu/clients/hit_client.hpp"
#include "lidaremu/clients/sensor_rig.hpp"

struct lidaremu_rig {
  lidaremu::clients::SensorRig rig;
  lidaremu::clients::UdpSender sender;
  std::uint16_t sensor_id;
  mutable std::string last_error;  // also set by the const queries that fail
};

namespace {

int fail(const lidaremu_rig* rig, int code, const std::string& message) {
  if (rig) rig->last_error = message;
  return code;
}

std::array<double, 3> three(const double* v) { return {v[0], v[1], v[2]}; }

int send_all(lidaremu_rig* rig, const std::vector<std::vector<std::uint8_t>>& datagrams) {
  int refused = 0;
  for (const auto& datagram : datagrams) {
    if (!rig->sender.send(datagram)) ++refused;
  }
  if (refused > 0) {
    return fail(rig, LIDAREMU_E_SEND,
                "send: " + std::to_string(refused) +
                    " datagram(s) refused by the kernel (is lidaremud listening there?)");
  }
  return LIDAREMU_OK;
}

bool in_range(const lidaremu_rig* rig, std::uint32_t column, std::uint16_t channel) {
  return column < rig->rig.columns() && channel < rig->rig.channels();
}

}  // namespace

extern "C" {

const char* lidaremu_version(void) { return "0.1.0"; }

lidaremu_rig* lidaremu_rig_create(const char* model, int rpm, const char* mode, const char* engine,
                                  const char* destination, uint16_t sensor_id, char* error,
                                  size_t error_size) {
  try {
    if (!model || !engine || !destination)
      throw std::invalid_argument("model, engine and destination are required");
    return new lidaremu_rig{{model, rpm, mode ? mode : "", engine},
                            lidaremu::clients::UdpSender(destination),
                            sensor_id,
                            {}};
  } catch (const std::exception& e) {
    if (error && error_size > 0) {
      std::strncpy(error, e.what(), error_size - 1);
      error[error_size - 1] = '\0';
    }
    return nullptr;
  }
}

void lidaremu_rig_destroy(lidaremu_rig* rig) { delete rig; }

const char* lidaremu_rig_last_error(const lidaremu_rig* rig) {
  return rig ? rig->last_error.c_str() : "no rig";
}

uint32_t lidaremu_rig_columns(const lidaremu_rig* rig) { return rig ? rig->rig.columns() : 0; }
uint16_t lidaremu_rig_channels(const lidaremu_rig* rig) { return rig ? rig->rig.channels() : 0; }
double lidaremu_rig_frame_period(const lidaremu_rig* rig) {
  return rig ? rig->rig.pattern().frame_period_s : 0.0;
}
uint32_t lidaremu_rig_frame(const lidaremu_rig* rig) { return rig ? rig->rig.frame() : 0; }

int lidaremu_rig_set_pose(lidaremu_rig* rig, const double position[3],
                          const double orientation_xyzw[4]) {
  if (!rig || !position || !orientation_xyzw) return LIDAREMU_E_ARGUMENT;
  const double length = std::sqrt(
      orientation_xyzw[0] * orientation_xyzw[0] + orientation_xyzw[1] * orientation_xyzw[1] +
      orientation_xyzw[2] * orientation_xyzw[2] + orientation_xyzw[3] * orientation_xyzw[3]);
  if (!std::isfinite(length) || length < 1e-6 ||
      !std::isfinite(position[0] + position[1] + position[2])) {
    return fail(rig, LIDAREMU_E_ARGUMENT, "set_pose: non-finite position or zero quaternion");
  }
  rig->rig.set_pose(three(position), {orientation_xyzw[0], orientation_xyzw[1], orientation_xyzw[2],
                                      orientation_xyzw[3]});
  return LIDAREMU_OK;
}

int lidaremu_rig_ray(const lidaremu_rig* rig, uint32_t column, uint16_t channel, double start[3],
                     double direction[3]) {
  if (!rig || !start || !direction) return LIDAREMU_E_ARGUMENT;
  if (!in_range(rig, column, channel)) {
    return fail(rig, LIDAREMU_E_ARGUMENT, "ray: column or channel out of range");
  }
  const auto ray = rig->rig.ray(column, channel);
  std::copy(ray.start.begin(), ray.start.end(), start);
  std::copy(ray.direction.begin(), ray.direction.end(), direction);
  return LIDAREMU_OK;
}

int lidaremu_rig_set_hit(lidaremu_rig* rig, uint32_t column, uint16_t channel,
                         const double point[3], const double normal[3], uint16_t material,
                         uint32_t object_id) {
  if (!rig || !point || !normal) return LIDAREMU_E_ARGUMENT;
  if (!rig->rig.set_hit(column, channel, three(point), three(normal), material, object_id)) {
    return fail(rig, LIDAREMU_E_ARGUMENT,
                "set_hit: column or channel out of range, or a non-finite point or zero normal");
  }
  return LIDAREMU_OK;
}

int lidaremu_rig_set_miss(lidaremu_rig* rig, uint32_t column, uint16_t channel) {
  if (!rig) return LIDAREMU_E_ARGUMENT;
  if (!rig->rig.set_miss(column, channel)) {
    return fail(rig, LIDAREMU_E_ARGUMENT, "set_miss: column or channel out of range");
  }
  return LIDAREMU_OK;
}

int lidaremu_rig_columns_due(const lidaremu_rig* rig, double from_s, double to_s, uint32_t* first,
                             uint32_t* count) {
  if (!rig || !first || !count || !std::isfinite(from_s) || !std::isfinite(to_s)) {
    return LIDAREMU_E_ARGUMENT;
  }
  const auto [f, n] = rig->rig.columns_due(from_s, to_s);
  *first = f;
  *count = n;
  return LIDAREMU_OK;
}

int lidaremu_rig_send(lidaremu_rig* rig, uint32_t first, uint32_t count,
                      uint64_t frame_sim_time_ns) {
  if (!rig) return LIDAREMU_E_ARGUMENT;
  if (first >= rig->rig.columns())
    return fail(rig, LIDAREMU_E_ARGUMENT, "send: first column out of range");
  try {
    return send_all(rig, rig->rig.batches(first, count, frame_sim_time_ns, rig->sensor_id));
  } catch (const std::exception& e) {
    return fail(rig, LIDAREMU_E_SEND, std::string("send: ") + e.what());
  }
}

int lidaremu_rig_tick(lidaremu_rig* rig, double dt_s) {
  if (!rig || !std::isfinite(dt_s) || dt_s < 0) return LIDAREMU_E_ARGUMENT;
  rig->rig.tick(dt_s);
  return LIDAREMU_OK;
}

int lidaremu_rig_next_slice(lidaremu_rig* rig, uint32_t* first, uint32_t* count) {
  if (!rig || !first || !count) return LIDAREMU_E_ARGUMENT;
  return rig->rig.next_slice(*first, *count) ? 1 : 0;
}

int lidaremu_rig_send_slice(lidaremu_rig* rig) {
  if (!rig) return LIDAREMU_E_ARGUMENT;
  try {
    return send_all(rig, rig->rig.finish_slice(rig->sensor_id));
  } catch (const std::exception& e) {
    return fail(rig, LIDAREMU_E_SEND, std::string("send_slice: ") + e.what());
  }
}

int lidaremu_rig_next_frame(lidaremu_rig* rig) {
  if (!rig) return LIDAREMU_E_ARGUMENT;
  rig->rig.next_frame();
  return LIDAREMU_OK;
}

int lidaremu_rig_nearest_beam(const lidaremu_rig* rig, const double point_in_sensor[3],
                              uint32_t* column, uint16_t* channel) {
  if (!rig || !point_in_sensor || !column || !channel) return LIDAREMU_E_ARGUMENT;
  const auto p = three(point_in_sensor);
  if (!std::isfinite(p[0] + p[1] + p[2])) {
    return fail(rig, LIDAREMU_E_ARGUMENT, "nearest_beam: non-finite point");
  }
  const auto [c, k] = rig->rig.nearest_beam(p);
  *column = c;
  *channel = k;
  return LIDAREMU_OK;
}

int lidaremu_rig_set_weather(lidaremu_rig* rig, double rain_mm_per_h, double visibility_m,
                             double sun_w_per_m2) {
  if (!rig) return LIDAREMU_E_ARGUMENT;
  lidaremu::clients::ControlMessage m;
  m.sensor_id = rig->sensor_id;
  m.rain_mm_per_h = static_cast<float>(rain_mm_per_h);
  m.fog_visibility_m = static_cast<float>(visibility_m);
  m.sun_irradiance_w_per_m2 = static_cast<float>(sun_w_per_m2);
  if (!rig->sender.send(lidaremu::clients::build_control(m))) {
    return fail(rig, LIDAREMU_E_SEND, "set_weather: the kernel refused the datagram");
  }
  return LIDAREMU_OK;
}

}  // extern "C"
