// Runs clients/engines/unity/LidaremuLidar.cs as Unity would, against a real lidaremud, in a
// scene cast analytically in Unity's axes (metres, y up, z forward, x right): a road (y = 0,
// physic material "Asphalt"), a wall 10 m ahead (z = 10, no material: the default) and a box to
// the right (x 5..7, z 4..6, up to y = 2, "Painted metal"). The sensor sits 1.8 m up. Usage:
//   mono unity_harness.exe udp://127.0.0.1:PORT FRAMES
// Prints each collider's instance id (the object ids the daemon's export carries).
using System;
using System.Reflection;
using UnityEngine;

static class Harness
{
    static bool Plane(Vector3 o, Vector3 d, int axis, float at, float sign, out float t)
    {
        float oc = axis == 0 ? o.x : axis == 1 ? o.y : o.z;
        float dc = axis == 0 ? d.x : axis == 1 ? d.y : d.z;
        t = dc * sign < 0 ? (at - oc) / dc : -1;
        return t > 0;
    }

    static int Main(string[] args)
    {
        var road = new Collider { name = "Road", sharedMaterial = new PhysicMaterial { name = "Asphalt" } };
        var wall = new Collider { name = "Wall" };
        var box = new Collider { name = "Box", sharedMaterial = new PhysicMaterial { name = "Painted metal" } };
        Physics.Scene = (Vector3 o, Vector3 d, float max, out RaycastHit hit) =>
        {
            hit = default(RaycastHit);
            float best = max;
            // Road: the plane y = 0 seen from above.
            if (Plane(o, d, 1, 0f, 1, out float t) && t < best)
            {
                best = t;
                hit = new RaycastHit { point = o + d * t, normal = new Vector3(0, 1, 0), collider = road };
            }
            // Wall: z = 10 seen from the sensor's side.
            if (Plane(o, d, 2, 10f, -1, out t) && t < best)
            {
                best = t;
                hit = new RaycastHit { point = o + d * t, normal = new Vector3(0, 0, -1), collider = wall };
            }
            // Box: its face x = 5 towards the sensor.
            if (Plane(o, d, 0, 5f, -1, out t) && t < best)
            {
                var p = o + d * t;
                if (p.z >= 4 && p.z <= 6 && p.y >= 0 && p.y <= 2)
                {
                    best = t;
                    hit = new RaycastHit { point = p, normal = new Vector3(-1, 0, 0), collider = box };
                }
            }
            return hit.collider != null;
        };
        var lidar = new LidaremuLidar { daemon = args[0] };
        lidar.transform.position = new Vector3(0, 1.8f, 0);
        int frames = args.Length > 1 ? int.Parse(args[1]) : 3;
        // Unity calls Start once, FixedUpdate every physics step, OnDestroy at the end.
        Action<string> message = name =>
            typeof(LidaremuLidar).GetMethod(name, BindingFlags.Instance | BindingFlags.NonPublic)
                .Invoke(lidar, null);
        message("Start");
        if (!lidar.enabled) return 1;
        int steps = (int)Math.Ceiling(frames * 0.1 / Time.fixedDeltaTime) + 1;
        for (int i = 0; i < steps; ++i) message("FixedUpdate");
        message("OnDestroy");
        Console.WriteLine($"road {road.GetInstanceID()} wall {wall.GetInstanceID()} box {box.GetInstanceID()}");
        return 0;
    }
}
