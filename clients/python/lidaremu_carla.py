"""CARLA bridge: CARLA's semantic lidar (sensor.lidar.ray_cast_semantic) into lidaremud.

CARLA traces the rays; each detection carries the hit point (sensor frame: x forward, y right,
z up, metres), the cosine of the incidence angle, the object's index and its semantic tag. The
bridge turns every detection into a hit row for the nearest beam of the emulated model (x forward,
y left, z up), a surface normal at that incidence, and a material from the tag table; a frame
goes to the daemon once the lidar has turned a full revolution.

    import carla, lidaremu_carla
    bridge = lidaremu_carla.Bridge(model="vlp16", destination="udp://127.0.0.1:9870")
    lidar = world.spawn_actor(bp_semantic_lidar_with(channels=16, rotation_frequency=10,
                              upper_fov=15, lower_fov=-15, points_per_second=...), ...)
    lidar.listen(lambda m: bridge.on_measurement(
        [(d.point.x, d.point.y, d.point.z, d.cos_inc_angle, d.object_idx, d.object_tag)
         for d in m], m.horizontal_angle, m.timestamp))

Match the CARLA lidar to the model (channels, vertical field of view, rotation frequency) so that
its rays fall on the emulated beams. Nothing here imports carla: the logic is tested without it.
"""
import math

import lidaremu_rig

# CARLA semantic tags (0.9.14 and later) to lidaremud materials (config/materials.toml).
ASPHALT, STRIPES, CONCRETE, OPAQUE_METAL, RETROREFLECTOR = 6, 7, 8, 2, 1
GLASS, RUBBER, WOOD, ROCK, GREEN, NON_GREEN = 4, 5, 9, 10, 11, 12
DEFAULT_TAG_MATERIALS = {
    1: ASPHALT,         # Roads
    2: CONCRETE,        # SideWalks
    3: CONCRETE,        # Building
    4: CONCRETE,        # Wall
    5: OPAQUE_METAL,    # Fence
    6: OPAQUE_METAL,    # Pole
    7: OPAQUE_METAL,    # TrafficLight
    8: RETROREFLECTOR,  # TrafficSign
    9: GREEN,           # Vegetation
    10: NON_GREEN,      # Terrain
    12: RUBBER,         # Pedestrian (clothing: a dark diffuse surface)
    13: RUBBER,         # Rider
    14: OPAQUE_METAL,   # Car
    15: OPAQUE_METAL,   # Truck
    16: OPAQUE_METAL,   # Bus
    17: OPAQUE_METAL,   # Train
    18: OPAQUE_METAL,   # Motorcycle
    19: OPAQUE_METAL,   # Bicycle
    20: CONCRETE,       # Static
    21: OPAQUE_METAL,   # Dynamic
    22: CONCRETE,       # Other
    23: GLASS,          # Water: specular, little comes back
    24: STRIPES,        # RoadLine
    25: ROCK,           # Ground
    26: CONCRETE,       # Bridge
    27: OPAQUE_METAL,   # RailTrack
    28: OPAQUE_METAL,   # GuardRail
}
UNKNOWN_MATERIAL = CONCRETE  # tags missing from the table (0 Unlabeled, 11 Sky, new tags)


def carla_to_sensor(x, y, z):
    """CARLA's sensor frame (left-handed, y right) to the drivers' (right-handed, y left)."""
    return (x, -y, z)


def normal_for(point, cos_incidence):
    """A unit surface normal whose angle to the ray back to the sensor is acos(cos_incidence).

    CARLA reports the incidence, not the normal; the physics needs only that angle, so the normal
    is tilted from the reversed ray toward the vertical plane that contains the ray."""
    r = math.sqrt(sum(c * c for c in point))
    back = tuple(-c / r for c in point)
    c = max(0.0, min(1.0, abs(cos_incidence)))
    s = math.sqrt(1.0 - c * c)
    # A unit vector perpendicular to the ray: up, made orthogonal to it (or sideways if the ray
    # is vertical).
    up = (0.0, 0.0, 1.0) if abs(back[2]) < 0.99 else (1.0, 0.0, 0.0)
    dot = sum(u * b for u, b in zip(up, back))
    side = tuple(u - dot * b for u, b in zip(up, back))
    n = math.sqrt(sum(v * v for v in side))
    side = tuple(v / n for v in side)
    return tuple(c * b + s * v for b, v in zip(back, side))


class Bridge:
    def __init__(self, model="vlp16", destination="udp://127.0.0.1:9870", rpm=0, mode="",
                 sensor_id=0, tag_materials=None):
        self.rig = lidaremu_rig.Rig(model=model, engine="ros", destination=destination, rpm=rpm,
                                    mode=mode, sensor_id=sensor_id)
        self.tag_materials = dict(DEFAULT_TAG_MATERIALS if tag_materials is None else tag_materials)
        self._last_angle = None
        self._frame_start_s = None
        self.frames_sent = 0
        self.detections = 0

    def add_detections(self, detections):
        """Detections as (x, y, z, cos_inc_angle, object_idx, object_tag), CARLA's frame."""
        for x, y, z, cos_inc, object_idx, tag in detections:
            point = carla_to_sensor(x, y, z)
            if not all(math.isfinite(v) for v in point) or point == (0.0, 0.0, 0.0):
                continue
            column, channel = self.rig.nearest_beam(point)
            material = self.tag_materials.get(tag, UNKNOWN_MATERIAL)
            self.rig.set_hit(column, channel, point, normal_for(point, cos_inc), material,
                             object_idx)
            self.detections += 1

    def send_frame(self, sim_time_s=None):
        time_ns = 0 if sim_time_s is None else int(round(sim_time_s * 1e9))
        self.rig.send(0, self.rig.columns, time_ns)
        self.rig.next_frame()
        self.frames_sent += 1

    def on_measurement(self, detections, horizontal_angle, timestamp_s):
        """A CARLA lidar callback's content. The frame is sent when the lidar's angle wraps."""
        if self._last_angle is not None and horizontal_angle < self._last_angle:
            self.send_frame(self._frame_start_s)
            self._frame_start_s = None
        if self._frame_start_s is None:
            self._frame_start_s = timestamp_s
        self._last_angle = horizontal_angle
        self.add_detections(detections)

    def close(self):
        self.rig.close()
