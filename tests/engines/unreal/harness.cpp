// Runs clients/engines/unreal's ULidaremuLidarComponent as Unreal would (BeginPlay, a tick each
// 1/60 s, EndPlay) against a real lidaremud, in a scene traced analytically in Unreal's units and
// axes (centimetres, x forward, y right, z up): a road (z = 0, physical material "asphalt",
// mapped by the component's Materials), a wall 10 m ahead (x = 1000, none: the default) and a
// box to the right (y 500..700, x 400..600, up to z = 200, a surface type mapped by its
// SurfaceMaterials). The sensor sits 1.8 m up on a vehicle its traces ignore.
//   unreal_harness udp://127.0.0.1:PORT FRAMES
// Actor ids: road 21, wall 22, box 23 (the object ids the daemon's export carries).
#include <cstdlib>
#include <string>

#include "LidaremuLidarComponent.h"

namespace {

// The engine calls these; the harness stands in for it.
struct DrivenComponent : ULidaremuLidarComponent {
  using ULidaremuLidarComponent::BeginPlay;
  using ULidaremuLidarComponent::EndPlay;
  using ULidaremuLidarComponent::TickComponent;
};

// Where the segment start..end crosses the plane `axis` = `at` from the side `sign` faces.
bool crosses(const FVector& start, const FVector& end, int axis, double at, double sign,
             double& t) {
  const auto c = [axis](const FVector& v) { return axis == 0 ? v.X : axis == 1 ? v.Y : v.Z; };
  const double d = c(end) - c(start);
  if (d * sign >= 0) return false;
  t = (at - c(start)) / d;
  return t > 0 && t <= 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  UWorld world;
  AActor vehicle, road, wall, box;
  vehicle.unique_id_ = 20;
  road.unique_id_ = 21;
  wall.unique_id_ = 22;
  box.unique_id_ = 23;
  UPhysicalMaterial asphalt, painted_metal;
  painted_metal.SurfaceType = SurfaceType1;
  world.Scene = [&](FHitResult& hit, const FVector& start, const FVector& end) {
    double best = 2, t = 0;
    const auto at = [&](double s) { return start + (end - start) * s; };
    if (crosses(start, end, 2, 0, 1, t) && t < best) {
      best = t;
      hit = {at(t), {0, 0, 1}, &asphalt, &road};
    }
    if (crosses(start, end, 0, 1000, -1, t) && t < best) {
      best = t;
      hit = {at(t), {-1, 0, 0}, nullptr, &wall};
    }
    if (crosses(start, end, 1, 500, -1, t) && t < best) {
      const FVector p = at(t);
      if (p.X >= 400 && p.X <= 600 && p.Z >= 0 && p.Z <= 200) {
        best = t;
        hit = {p, {0, -1, 0}, &painted_metal, &box};
      }
    }
    return best <= 1;
  };
  DrivenComponent lidar;
  lidar.Daemon = argv[1];
  lidar.World = &world;
  lidar.Owner = &vehicle;
  lidar.ComponentToWorld.Location = {0, 0, 180};
  lidar.Materials.Add(&asphalt, 6);
  lidar.SurfaceMaterials.Add(SurfaceType1, 2);
  lidar.BeginPlay();
  if (!lidar.TickEnabled) return 1;
  const int frames = argc > 2 ? std::atoi(argv[2]) : 3;
  constexpr float kTick = 1.0f / 60;
  for (int i = 0; i < frames * 6 + 1; ++i) lidar.TickComponent(kTick, LEVELTICK_All, nullptr);
  lidar.EndPlay(EEndPlayReason::Quit);
  return 0;
}
