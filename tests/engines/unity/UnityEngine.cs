// The part of UnityEngine that clients/engines/unity/LidaremuLidar.cs uses, written from Unity's
// scripting reference, so that the script compiles and runs here (mono) without the engine:
// MonoBehaviour's messages are called as Unity calls them (by name, through reflection) and
// Physics.Raycast asks the scene the harness sets. Not a Unity: just what the script touches.
using System;

namespace UnityEngine
{
    public struct Vector3
    {
        public float x, y, z;
        public Vector3(float x, float y, float z) { this.x = x; this.y = y; this.z = z; }
        public static Vector3 operator +(Vector3 a, Vector3 b) => new Vector3(a.x + b.x, a.y + b.y, a.z + b.z);
        public static Vector3 operator *(Vector3 a, float s) => new Vector3(a.x * s, a.y * s, a.z * s);
    }

    public struct Quaternion
    {
        public float x, y, z, w;
        public Quaternion(float x, float y, float z, float w) { this.x = x; this.y = y; this.z = z; this.w = w; }
        public static Quaternion identity => new Quaternion(0, 0, 0, 1);
    }

    public struct LayerMask
    {
        public int value;
        public static implicit operator int(LayerMask mask) => mask.value;
        public static implicit operator LayerMask(int value) => new LayerMask { value = value };
    }

    public class Object
    {
        static int next = 1000;
        readonly int id = ++next;
        public string name = "";
        public int GetInstanceID() => id;
    }

    public class PhysicMaterial : Object { }

    public class Collider : Object
    {
        public PhysicMaterial sharedMaterial;
    }

    public struct RaycastHit
    {
        public Vector3 point, normal;
        public Collider collider;
    }

    public class Transform
    {
        public Vector3 position;
        public Quaternion rotation = Quaternion.identity;
    }

    public class Behaviour : Object
    {
        public bool enabled = true;
    }

    public class MonoBehaviour : Behaviour
    {
        public Transform transform = new Transform();
    }

    public static class Physics
    {
        // The harness's scene: what a ray from `origin` along the unit `direction` hits first.
        public delegate bool RaycastFunc(Vector3 origin, Vector3 direction, float maxDistance,
                                         out RaycastHit hit);
        public static RaycastFunc Scene;
        public static bool Raycast(Vector3 origin, Vector3 direction, out RaycastHit hitInfo,
                                   float maxDistance, int layerMask)
        {
            hitInfo = default(RaycastHit);
            return Scene != null && Scene(origin, direction, maxDistance, out hitInfo);
        }
    }

    public static class Time
    {
        public static float fixedDeltaTime = 0.02f;  // Unity's default: 50 physics steps a second
    }

    public static class Debug
    {
        public static void LogError(object message) => Console.Error.WriteLine("error: " + message);
        public static void LogWarning(object message) => Console.Error.WriteLine("warning: " + message);
    }

    [AttributeUsage(AttributeTargets.Field)]
    public class TooltipAttribute : Attribute
    {
        public TooltipAttribute(string tooltip) { }
    }
}
