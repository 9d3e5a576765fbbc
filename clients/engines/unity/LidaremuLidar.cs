// lidaremu for Unity: casts the emulated sensor's beams with Physics.Raycast and streams the hits
// to lidaremud through liblidaremu_client.so (the C ABI; P/Invoke). Attach to the GameObject
// where the sensor sits (its forward is the sensor's forward, its up the sensor's up).
//
// Setup: copy build/clients/capi/liblidaremu_client.so* into Assets/Plugins/x86_64/ (Linux
// player and editor), start lidaremud (scripts/demo.sh or `lidaremud --model vlp16`), press Play.
// Beams, axes (Unity: metres, left-handed, y up), timing and batching all come from the library;
// this script only traces rays and reads materials.
using System;
using System.Runtime.InteropServices;
using System.Text;
using UnityEngine;

public class LidaremuLidar : MonoBehaviour
{
    [Tooltip("lidaremud --model name: vlp16, vlp32c, hdl32e, hdl64e, vls128, os1-64, ...")]
    public string model = "vlp16";
    [Tooltip("Ouster lidar mode, e.g. 1024x10 (empty: the model's default)")]
    public string mode = "";
    [Tooltip("Velodyne rotation rate (0: the model's default)")]
    public int rpm = 0;
    [Tooltip("Where lidaremud listens for hits")]
    public string daemon = "udp://127.0.0.1:9870";
    public ushort sensorId = 0;
    public float maxRange = 120f;
    public LayerMask layers = ~0;

    [Serializable]
    public struct MaterialEntry
    {
        [Tooltip("Matches the collider's physic material by name (substring, case-insensitive)")]
        public string physicMaterialName;
        [Tooltip("An id of lidaremud's config/materials.toml (8 concrete, 6 asphalt, 2 metal, ...)")]
        public ushort materialId;
    }
    public MaterialEntry[] materials = {
        new MaterialEntry { physicMaterialName = "asphalt", materialId = 6 },
        new MaterialEntry { physicMaterialName = "metal", materialId = 2 },
        new MaterialEntry { physicMaterialName = "glass", materialId = 4 },
        new MaterialEntry { physicMaterialName = "rubber", materialId = 5 },
        new MaterialEntry { physicMaterialName = "sign", materialId = 1 },
        new MaterialEntry { physicMaterialName = "vegetation", materialId = 11 },
    };
    [Tooltip("For colliders without a matching physic material")]
    public ushort defaultMaterial = 8;  // concrete

    static class Native
    {
        const string Lib = "lidaremu_client";
        [DllImport(Lib)] public static extern IntPtr lidaremu_rig_create(string model, int rpm,
            string mode, string engine, string destination, ushort sensorId, StringBuilder error,
            UIntPtr errorSize);
        [DllImport(Lib)] public static extern void lidaremu_rig_destroy(IntPtr rig);
        [DllImport(Lib)] public static extern IntPtr lidaremu_rig_last_error(IntPtr rig);
        [DllImport(Lib)] public static extern uint lidaremu_rig_columns(IntPtr rig);
        [DllImport(Lib)] public static extern ushort lidaremu_rig_channels(IntPtr rig);
        [DllImport(Lib)] public static extern double lidaremu_rig_frame_period(IntPtr rig);
        [DllImport(Lib)] public static extern int lidaremu_rig_set_pose(IntPtr rig,
            double[] position, double[] orientationXyzw);
        [DllImport(Lib)] public static extern int lidaremu_rig_ray(IntPtr rig, uint column,
            ushort channel, double[] start, double[] direction);
        [DllImport(Lib)] public static extern int lidaremu_rig_set_hit(IntPtr rig, uint column,
            ushort channel, double[] point, double[] normal, ushort material, uint objectId);
        [DllImport(Lib)] public static extern int lidaremu_rig_tick(IntPtr rig, double dt);
        [DllImport(Lib)] public static extern int lidaremu_rig_next_slice(IntPtr rig,
            out uint first, out uint count);
        [DllImport(Lib)] public static extern int lidaremu_rig_send_slice(IntPtr rig);
    }

    IntPtr rig = IntPtr.Zero;
    ushort channels;
    readonly double[] start = new double[3], direction = new double[3];
    readonly double[] point = new double[3], normal = new double[3];

    void Start()
    {
        var error = new StringBuilder(512);
        rig = Native.lidaremu_rig_create(model, rpm, mode, "unity", daemon, sensorId, error,
                                         (UIntPtr)error.Capacity);
        if (rig == IntPtr.Zero)
        {
            Debug.LogError("lidaremu: " + error);
            enabled = false;
            return;
        }
        channels = Native.lidaremu_rig_channels(rig);
    }

    ushort MaterialFor(Collider collider)
    {
        var physic = collider.sharedMaterial;
        if (physic != null)
        {
            foreach (var entry in materials)
            {
                if (physic.name.IndexOf(entry.physicMaterialName,
                                        StringComparison.OrdinalIgnoreCase) >= 0)
                    return entry.materialId;
            }
        }
        return defaultMaterial;
    }

    // The beams the head sweeps in this physics step (the library slices the rotation and
    // starts the next frame when one is complete).
    void FixedUpdate()
    {
        var p = transform.position;
        var q = transform.rotation;
        Native.lidaremu_rig_set_pose(rig, new double[] { p.x, p.y, p.z },
                                     new double[] { q.x, q.y, q.z, q.w });
        Native.lidaremu_rig_tick(rig, Time.fixedDeltaTime);
        while (Native.lidaremu_rig_next_slice(rig, out uint first, out uint count) == 1)
        {
            for (uint c = first; c < first + count; ++c)
            {
                for (ushort k = 0; k < channels; ++k)
                {
                    Native.lidaremu_rig_ray(rig, c, k, start, direction);
                    var origin = new Vector3((float)start[0], (float)start[1], (float)start[2]);
                    var dir = new Vector3((float)direction[0], (float)direction[1],
                                          (float)direction[2]);
                    if (!Physics.Raycast(origin, dir, out RaycastHit hit, maxRange, layers))
                        continue;
                    point[0] = hit.point.x; point[1] = hit.point.y; point[2] = hit.point.z;
                    normal[0] = hit.normal.x; normal[1] = hit.normal.y; normal[2] = hit.normal.z;
                    // The collider's instance id is the ground-truth object id of the live view.
                    Native.lidaremu_rig_set_hit(rig, c, k, point, normal,
                                                MaterialFor(hit.collider),
                                                unchecked((uint)hit.collider.GetInstanceID()));
                }
            }
            if (Native.lidaremu_rig_send_slice(rig) != 0)
                Debug.LogWarning("lidaremu: " +
                                 Marshal.PtrToStringAnsi(Native.lidaremu_rig_last_error(rig)));
        }
    }

    void OnDestroy()
    {
        if (rig != IntPtr.Zero) Native.lidaremu_rig_destroy(rig);
        rig = IntPtr.Zero;
    }
}
