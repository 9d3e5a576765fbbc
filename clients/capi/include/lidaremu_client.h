/* lidaremu client, C ABI (liblidaremu_client.so): for engines with a foreign-function
 * interface (Unity's P/Invoke, Python's ctypes, Godot GDExtension, C, Rust, ...).
 *
 * A rig is one emulated sensor as the engine sees it: where each beam points in the engine's own
 * frame and units, what the engine hit on it (converted to the sensor frame drivers report in),
 * and the UDP batches that carry a frame to lidaremud. An engine tick:
 *
 *   lidaremu_rig_set_pose(rig, position, orientation);            where the sensor is now
 *   lidaremu_rig_tick(rig, dt);                                   the time this tick covers
 *   while (lidaremu_rig_next_slice(rig, &first, &count) == 1) {   the part of the turn it swept
 *     for each column c in [first, first + count), channel k:
 *       lidaremu_rig_ray(rig, c, k, start, direction);            trace this in the engine
 *       lidaremu_rig_set_hit(rig, c, k, point, normal, material, object)
 *     lidaremu_rig_send_slice(rig);                               to the daemon; next frame
 *   }                                                             when the turn is complete
 *
 * Or whole frames: trace every column, lidaremu_rig_send(rig, 0, columns, time), then
 * lidaremu_rig_next_frame(rig).
 *
 * Functions return 0 on success and a negative LIDAREMU_E_* code otherwise;
 * lidaremu_rig_last_error() says why. A rig is not thread-safe: one thread at a time. */
#ifndef LIDAREMU_CLIENT_H
#define LIDAREMU_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIDAREMU_OK 0
#define LIDAREMU_E_ARGUMENT (-1) /* a null pointer, an index out of range, a non-finite value */
#define LIDAREMU_E_SEND (-2)     /* the kernel refused a datagram (see last_error) */
#define LIDAREMU_E_CREATE (-3)   /* unknown model, mode, engine or destination */

typedef struct lidaremu_rig lidaremu_rig;

/* The library's version, "MAJOR.MINOR.PATCH". */
const char* lidaremu_version(void);

/* model: a lidaremud --model name ("vlp16", "os1-64", ...); rpm: Velodyne rotation (0: the
 * model's default); mode: Ouster "1024x10" (NULL or "": default), or a Livox model's scan
 * table (a CSV file, or "test-pattern": as the daemon's --scan-pattern); engine: "ros" (metres, x
 * forward, z up), "unreal" (centimetres, left-handed, z up), "unity" (metres, left-handed, y
 * up) or "godot" (metres, right-handed, y up, -z forward); destination: the daemon's hit port,
 * "udp://HOST:PORT" or "HOST:PORT"; sensor_id: as the daemon's --sensor-id. On failure returns NULL
 * and writes the reason into error (if given). */
lidaremu_rig* lidaremu_rig_create(const char* model, int rpm, const char* mode, const char* engine,
                                  const char* destination, uint16_t sensor_id, char* error,
                                  size_t error_size);
void lidaremu_rig_destroy(lidaremu_rig* rig);
/* The message of the last failed call on this rig ("" if none). */
const char* lidaremu_rig_last_error(const lidaremu_rig* rig);

uint32_t lidaremu_rig_columns(const lidaremu_rig* rig);    /* columns (firings) per frame */
uint16_t lidaremu_rig_channels(const lidaremu_rig* rig);   /* beams per column */
double lidaremu_rig_frame_period(const lidaremu_rig* rig); /* seconds per frame */
uint32_t lidaremu_rig_frame(const lidaremu_rig* rig);      /* the current frame number */

/* The sensor's pose in the engine's world: position in engine units, orientation a unit
 * quaternion (x, y, z, w) in the engine's axes. Applies to the rays and hits that follow. */
int lidaremu_rig_set_pose(lidaremu_rig* rig, const double position[3],
                          const double orientation_xyzw[4]);
/* A beam's ray in the engine's world: start (engine units) and unit direction. */
int lidaremu_rig_ray(const lidaremu_rig* rig, uint32_t column, uint16_t channel, double start[3],
                     double direction[3]);
/* What the engine hit on that beam, in its world, units and axes; material: an id of
 * config/materials.toml; object_id: ground truth carried to the live view and exports. */
int lidaremu_rig_set_hit(lidaremu_rig* rig, uint32_t column, uint16_t channel,
                         const double point[3], const double normal[3], uint16_t material,
                         uint32_t object_id);
int lidaremu_rig_set_miss(lidaremu_rig* rig, uint32_t column, uint16_t channel);
/* The columns that fire in [from_s, to_s) of the frame (seconds since its column 0). */
int lidaremu_rig_columns_due(const lidaremu_rig* rig, double from_s, double to_s, uint32_t* first,
                             uint32_t* count);
/* Sends `count` columns from `first` of the current frame as HitBatch datagrams.
 * frame_sim_time_ns: the simulation time of the frame's column 0 (0: none). */
int lidaremu_rig_send(lidaremu_rig* rig, uint32_t first, uint32_t count,
                      uint64_t frame_sim_time_ns);
/* Starts the next frame: every beam a miss again. */
int lidaremu_rig_next_frame(lidaremu_rig* rig);
/* Time-sliced scanning. tick: the engine's step (seconds). next_slice: the columns to trace
 * next; returns 1 with a slice, 0 once the tick is used up (a tick that crosses the frame's end
 * gives the frame's last columns, then the next frame's first). send_slice: sends the slice
 * (simulation time from 1 s, a frame period a frame) and, when it ends the frame, starts the
 * next one. */
int lidaremu_rig_tick(lidaremu_rig* rig, double dt_s);
int lidaremu_rig_next_slice(lidaremu_rig* rig, uint32_t* first, uint32_t* count);
int lidaremu_rig_send_slice(lidaremu_rig* rig);
/* The beam nearest a point in the sensor frame (ROS convention: metres, x forward, y left, z
 * up), for engines whose lidar reports points (CARLA's semantic lidar). */
int lidaremu_rig_nearest_beam(const lidaremu_rig* rig, const double point_in_sensor[3],
                              uint32_t* column, uint16_t* channel);
/* Weather from the next batch on: rain (mm/h), visibility (m), sun (W/m^2); negative values
 * leave that one unchanged. */
int lidaremu_rig_set_weather(lidaremu_rig* rig, double rain_mm_per_h, double visibility_m,
                             double sun_w_per_m2);

#ifdef __cplusplus
}
#endif

#endif /* LIDAREMU_CLIENT_H */
