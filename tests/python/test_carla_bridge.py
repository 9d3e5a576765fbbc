"""The CARLA bridge's own logic, without CARLA or a daemon: frames, normals, the tag table."""
import math
import unittest

import lidaremu_carla
import lidaremu_rig


class CarlaBridgeLogic(unittest.TestCase):
    def test_carla_y_points_right_and_the_drivers_y_left(self):
        self.assertEqual(lidaremu_carla.carla_to_sensor(1.0, 2.0, 3.0), (1.0, -2.0, 3.0))

    def test_the_normal_makes_the_reported_incidence_with_the_ray(self):
        for point in [(10.0, 0.0, -1.8), (3.0, -4.0, 0.5), (0.1, 0.0, -9.0), (-5.0, 5.0, 2.0)]:
            for cos_inc in [1.0, 0.9, 0.5, 0.1, 0.0]:
                n = lidaremu_carla.normal_for(point, cos_inc)
                r = math.sqrt(sum(c * c for c in point))
                back = [-c / r for c in point]
                self.assertAlmostEqual(sum(c * c for c in n), 1.0, places=9)
                self.assertAlmostEqual(sum(a * b for a, b in zip(n, back)), cos_inc, places=9)

    def test_every_tag_maps_to_a_material_of_the_table(self):
        with open(lidaremu_rig._HERE + "/../../config/materials.toml") as f:
            ids = {int(line.split("=")[1]) for line in f if line.startswith("id =")}
        for tag, material in lidaremu_carla.DEFAULT_TAG_MATERIALS.items():
            self.assertIn(material, ids, "tag %d" % tag)
        self.assertIn(lidaremu_carla.UNKNOWN_MATERIAL, ids)
        self.assertEqual(lidaremu_carla.DEFAULT_TAG_MATERIALS[8], 1)  # signs: retroreflective

    def test_detections_land_on_the_nearest_beam(self):
        bridge = lidaremu_carla.Bridge(model="vlp16", destination="udp://127.0.0.1:9")
        start, direction = bridge.rig.ray(452, 7)  # a quarter turn: the sensor's left
        point = [10 * d for d in direction]
        carla = (point[0], -point[1], point[2], 1.0, 42, 3)  # CARLA's y: right
        self.assertEqual(bridge.rig.nearest_beam(point), (452, 7))
        bridge.add_detections([carla, (float("nan"), 0.0, 0.0, 1.0, 1, 1), (0.0, 0.0, 0.0, 1, 1, 1)])
        self.assertEqual(bridge.detections, 1)  # the non-finite and the zero point are skipped
        bridge.close()

    def test_hostile_values_are_refused_with_the_reason(self):
        with lidaremu_rig.Rig(model="vlp16", destination="udp://127.0.0.1:9") as rig:
            with self.assertRaisesRegex(lidaremu_rig.RigError, "non-finite point or zero normal"):
                rig.set_hit(0, 0, (float("nan"), 0, 0), (1, 0, 0), 8)
            with self.assertRaisesRegex(lidaremu_rig.RigError, "out of range"):
                rig.set_hit(rig.columns, 0, (1, 0, 0), (1, 0, 0), 8)
            with self.assertRaisesRegex(lidaremu_rig.RigError, "out of range"):
                rig.ray(0, rig.channels)
            with self.assertRaisesRegex(lidaremu_rig.RigError, "zero quaternion"):
                rig.set_pose((0, 0, 0), (0, 0, 0, 0))
        with self.assertRaisesRegex(lidaremu_rig.RigError, "unknown engine"):
            lidaremu_rig.Rig(engine="blender")

    def test_a_bad_model_says_what_is_accepted(self):
        with self.assertRaisesRegex(lidaremu_rig.RigError, "unknown model"):
            lidaremu_rig.Rig(model="vlp99")


if __name__ == "__main__":
    unittest.main()
