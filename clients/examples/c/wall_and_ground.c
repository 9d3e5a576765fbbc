/* A C "engine" for liblidaremu_client.so: a road (the ground, 1.8 m below the sensor) and a
 * concrete wall 10 m ahead, ray-cast analytically in Unreal's conventions (centimetres,
 * left-handed, z up), frame after frame at the sensor's own rate.
 *
 *   wall_and_ground udp://127.0.0.1:9870 [frames] [model]
 *
 * Everything engine-specific is the two intersections in cast(); beams, units, axes, timing
 * and batching come from the library. */
#define _POSIX_C_SOURCE 199309L /* nanosleep */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lidaremu_client.h"

enum { kAsphalt = 6, kConcrete = 8, kWallId = 1, kGroundId = 2 };
static const double kSensorHeightCm = 180.0;
static const double kWallXCm = 1000.0;

/* The nearest of the wall (plane x = 1000 cm) and the ground (z = 0) along a ray. */
static int cast(const double start[3], const double dir[3], double hit[3], double normal[3],
                uint16_t* material, uint32_t* object) {
  double best = 1e30;
  if (dir[0] > 1e-9) {
    const double t = (kWallXCm - start[0]) / dir[0];
    if (t > 0 && t < best) {
      best = t;
      normal[0] = -1, normal[1] = 0, normal[2] = 0;
      *material = kConcrete, *object = kWallId;
    }
  }
  if (dir[2] < -1e-9) {
    const double t = -start[2] / dir[2];
    if (t > 0 && t < best) {
      best = t;
      normal[0] = 0, normal[1] = 0, normal[2] = 1;
      *material = kAsphalt, *object = kGroundId;
    }
  }
  if (best > 1e29 || best > 10000.0) return 0; /* nothing within 100 m */
  for (int k = 0; k < 3; ++k) hit[k] = start[k] + best * dir[k];
  return 1;
}

static void sleep_seconds(double s) {
  struct timespec t = {(time_t)s, (long)((s - floor(s)) * 1e9)};
  nanosleep(&t, NULL);
}

int main(int argc, char** argv) {
  const char* destination = argc > 1 ? argv[1] : "udp://127.0.0.1:9870";
  const int frames = argc > 2 ? atoi(argv[2]) : 20;
  const char* model = argc > 3 ? argv[3] : "vlp16";
  char error[256];
  lidaremu_rig* rig =
      lidaremu_rig_create(model, 0, NULL, "unreal", destination, 0, error, sizeof error);
  if (!rig) {
    fprintf(stderr, "wall_and_ground: %s\n", error);
    return 2;
  }
  const double position[3] = {0, 0, kSensorHeightCm};
  const double orientation[4] = {0, 0, 0, 1};
  lidaremu_rig_set_pose(rig, position, orientation);
  const uint32_t columns = lidaremu_rig_columns(rig);
  const uint16_t channels = lidaremu_rig_channels(rig);
  const double period = lidaremu_rig_frame_period(rig);
  long hits = 0;
  for (int f = 0; f < frames; ++f) {
    for (uint32_t c = 0; c < columns; ++c) {
      for (uint16_t k = 0; k < channels; ++k) {
        double start[3], dir[3], hit[3], normal[3];
        uint16_t material = 0;
        uint32_t object = 0;
        lidaremu_rig_ray(rig, c, k, start, dir);
        if (cast(start, dir, hit, normal, &material, &object)) {
          lidaremu_rig_set_hit(rig, c, k, hit, normal, material, object);
          ++hits;
        }
      }
    }
    /* Simulation time starts at 1 s: 0 means "none" on the wire. */
    const uint64_t sim_time_ns = (uint64_t)((1.0 + f * period) * 1e9);
    if (lidaremu_rig_send(rig, 0, columns, sim_time_ns) != LIDAREMU_OK) {
      fprintf(stderr, "wall_and_ground: %s\n", lidaremu_rig_last_error(rig));
    }
    lidaremu_rig_next_frame(rig);
    sleep_seconds(period);
  }
  printf("wall_and_ground: %s, %d frames of %u x %u beams, %ld hits sent (library %s)\n", model,
         frames, columns, channels, hits, lidaremu_version());
  lidaremu_rig_destroy(rig);
  return 0;
}
