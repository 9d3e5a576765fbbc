"""The engine-independent half of an engine plugin, from Python: liblidaremu_client.so (the C ABI,
clients/capi/include/lidaremu_client.h) through ctypes. Beams of any lidaremud model in the
engine's own frame and units, hits back into the sensor frame, the columns due each tick, and
the batches to the daemon.

The library is found through $LIDAREMU_CLIENT_LIB, then next to this checkout's build
(build/clients/capi), then the system's library path.
"""
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load():
    candidates = [os.environ.get("LIDAREMU_CLIENT_LIB"),
                  os.path.join(_HERE, "..", "..", "build", "clients", "capi",
                               "liblidaremu_client.so"),
                  ctypes.util.find_library("lidaremu_client")]
    for path in candidates:
        if path and (os.path.exists(path) or not os.path.isabs(path)):
            try:
                return ctypes.CDLL(path)
            except OSError:
                continue
    raise OSError("liblidaremu_client.so not found: build it (scripts/build.sh) or set "
                  "LIDAREMU_CLIENT_LIB to its path")


_lib = _load()
_D3 = ctypes.c_double * 3
_D4 = ctypes.c_double * 4
_lib.lidaremu_version.restype = ctypes.c_char_p
_lib.lidaremu_rig_create.restype = ctypes.c_void_p
_lib.lidaremu_rig_create.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                     ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint16,
                                     ctypes.c_char_p, ctypes.c_size_t]
_lib.lidaremu_rig_destroy.argtypes = [ctypes.c_void_p]
_lib.lidaremu_rig_last_error.restype = ctypes.c_char_p
_lib.lidaremu_rig_last_error.argtypes = [ctypes.c_void_p]
for _name, _type in (("columns", ctypes.c_uint32), ("channels", ctypes.c_uint16),
                     ("frame_period", ctypes.c_double), ("frame", ctypes.c_uint32)):
    getattr(_lib, "lidaremu_rig_" + _name).restype = _type
    getattr(_lib, "lidaremu_rig_" + _name).argtypes = [ctypes.c_void_p]
_lib.lidaremu_rig_set_pose.argtypes = [ctypes.c_void_p, _D3, _D4]
_lib.lidaremu_rig_ray.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint16, _D3, _D3]
_lib.lidaremu_rig_set_hit.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint16, _D3,
                                      _D3, ctypes.c_uint16, ctypes.c_uint32]
_lib.lidaremu_rig_set_miss.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint16]
_lib.lidaremu_rig_columns_due.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_double,
                                          ctypes.POINTER(ctypes.c_uint32),
                                          ctypes.POINTER(ctypes.c_uint32)]
_lib.lidaremu_rig_send.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32,
                                   ctypes.c_uint64]
_lib.lidaremu_rig_next_frame.argtypes = [ctypes.c_void_p]
_lib.lidaremu_rig_nearest_beam.argtypes = [ctypes.c_void_p, _D3, ctypes.POINTER(ctypes.c_uint32),
                                           ctypes.POINTER(ctypes.c_uint16)]
_lib.lidaremu_rig_tick.argtypes = [ctypes.c_void_p, ctypes.c_double]
_lib.lidaremu_rig_next_slice.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32),
                                         ctypes.POINTER(ctypes.c_uint32)]
_lib.lidaremu_rig_send_slice.argtypes = [ctypes.c_void_p]
_lib.lidaremu_rig_set_weather.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_double,
                                          ctypes.c_double]


def version():
    return _lib.lidaremu_version().decode()


class RigError(RuntimeError):
    pass


class Rig:
    """One emulated sensor as an engine sees it. engine: "ros", "unreal", "unity" or "godot"."""

    def __init__(self, model="vlp16", engine="ros", destination="udp://127.0.0.1:9870", rpm=0,
                 mode="", sensor_id=0):
        error = ctypes.create_string_buffer(512)
        self._rig = _lib.lidaremu_rig_create(model.encode(), rpm, mode.encode(), engine.encode(),
                                             destination.encode(), sensor_id, error, len(error))
        if not self._rig:
            raise RigError(error.value.decode())
        self.columns = _lib.lidaremu_rig_columns(self._rig)
        self.channels = _lib.lidaremu_rig_channels(self._rig)
        self.frame_period = _lib.lidaremu_rig_frame_period(self._rig)

    def close(self):
        if self._rig:
            _lib.lidaremu_rig_destroy(self._rig)
            self._rig = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, code):
        if code != 0:
            raise RigError(_lib.lidaremu_rig_last_error(self._rig).decode())

    @property
    def frame(self):
        return _lib.lidaremu_rig_frame(self._rig)

    def set_pose(self, position, orientation_xyzw=(0, 0, 0, 1)):
        self._check(_lib.lidaremu_rig_set_pose(self._rig, _D3(*position), _D4(*orientation_xyzw)))

    def ray(self, column, channel):
        """(start, direction) of a beam in the engine's world, units and axes."""
        start, direction = _D3(), _D3()
        self._check(_lib.lidaremu_rig_ray(self._rig, column, channel, start, direction))
        return tuple(start), tuple(direction)

    def set_hit(self, column, channel, point, normal, material, object_id=0):
        self._check(_lib.lidaremu_rig_set_hit(self._rig, column, channel, _D3(*point),
                                              _D3(*normal), material, object_id))

    def set_miss(self, column, channel):
        self._check(_lib.lidaremu_rig_set_miss(self._rig, column, channel))

    def columns_due(self, from_s, to_s):
        first, count = ctypes.c_uint32(), ctypes.c_uint32()
        self._check(_lib.lidaremu_rig_columns_due(self._rig, from_s, to_s, ctypes.byref(first),
                                                  ctypes.byref(count)))
        return first.value, count.value

    def send(self, first=0, count=None, frame_sim_time_ns=0):
        count = self.columns - first if count is None else count
        self._check(_lib.lidaremu_rig_send(self._rig, first, count, frame_sim_time_ns))

    def next_frame(self):
        self._check(_lib.lidaremu_rig_next_frame(self._rig))

    def tick(self, dt_s):
        """Time-sliced scanning: the engine's step; then trace each slice() and send_slice()."""
        self._check(_lib.lidaremu_rig_tick(self._rig, dt_s))

    def slices(self):
        """The (first, count) column slices this tick swept, in order; send each when traced."""
        first, count = ctypes.c_uint32(), ctypes.c_uint32()
        while _lib.lidaremu_rig_next_slice(self._rig, ctypes.byref(first), ctypes.byref(count)) == 1:
            yield first.value, count.value

    def send_slice(self):
        self._check(_lib.lidaremu_rig_send_slice(self._rig))

    def nearest_beam(self, point_in_sensor):
        """(column, channel) of the beam nearest a point in the sensor frame (ROS convention)."""
        column, channel = ctypes.c_uint32(), ctypes.c_uint16()
        self._check(_lib.lidaremu_rig_nearest_beam(self._rig, _D3(*point_in_sensor),
                                                   ctypes.byref(column), ctypes.byref(channel)))
        return column.value, channel.value

    def set_weather(self, rain_mm_per_h=-1, visibility_m=-1, sun_w_per_m2=-1):
        self._check(_lib.lidaremu_rig_set_weather(self._rig, rain_mm_per_h, visibility_m,
                                                  sun_w_per_m2))
