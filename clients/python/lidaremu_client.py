"""Send ray hits to lidaremud from Python.

Standard library plus Debian's python3-flatbuffers, and the wire code flatc generates from
protocol/schema at build time (build/python). Put both on the path:

    PYTHONPATH=build/python:clients/python /usr/bin/python3 your_engine.py

Rows are (hit x, y, z, normal x, y, z, material id) in the sensor frame the driver reports
(x forward, y left, z up, metres), column by column, channel by channel. Material 0 = no hit.
"""
import array
import math
import socket

import flatbuffers
from lidaremu.wire import Control, HitBatch, RowLayout, RunState, Weather

MAX_DATAGRAM = 65507
_HEADER_ALLOWANCE = 160

# The VLP-16 laser elevations by laser id (degrees) and its firing timing, from the
# VLP-16 manual; the daemon's model registry holds the same numbers.
VLP16_ELEVATION_DEG = [-15, 1, -13, 3, -11, 5, -9, 7, -7, 9, -5, 11, -3, 13, -1, 15]
VLP16_SEQUENCE_US = 55.296
VLP16_LASER_SPACING_US = 2.304


def vlp16_columns_per_frame(rpm=600):
    return round(60.0 / rpm / (VLP16_SEQUENCE_US * 1e-6))


def vlp16_direction(column, laser, rpm=600):
    """Unit direction of a VLP-16 beam (azimuth clockwise from +x, as Velodyne drivers read)."""
    columns = vlp16_columns_per_frame(rpm)
    deg_per_us = 360.0 / (columns * VLP16_SEQUENCE_US)
    azimuth = math.radians(360.0 * column / columns + deg_per_us * VLP16_LASER_SPACING_US * laser)
    elevation = math.radians(VLP16_ELEVATION_DEG[laser])
    return (math.cos(elevation) * math.cos(azimuth), -math.cos(elevation) * math.sin(azimuth),
            math.sin(elevation))


def _float_vector(builder, values):
    data = array.array("f", values)
    if data.itemsize != 4:
        raise RuntimeError("float32 arrays are required")
    raw = data.tobytes()  # little-endian on every platform lidaremu supports
    builder.StartVector(4, len(data), 4)
    # Bulk copy, as Builder.CreateByteVector does, instead of one Prepend per float.
    builder.head = builder.Head() - len(raw)
    builder.Bytes[builder.Head():builder.Head() + len(raw)] = raw
    return builder.EndVector(len(data))


def build_hit_batch(rows, *, sensor_id=0, frame=0, first_column=0, column_count,
                    floats_per_row=7, rays_per_beam=1, sim_time_ns=0):
    """One HitBatch datagram. rows: a flat sequence of floats."""
    builder = flatbuffers.Builder(len(rows) * 4 + 256)
    rows_offset = _float_vector(builder, rows)
    HitBatch.Start(builder)
    HitBatch.AddSensorId(builder, sensor_id)
    HitBatch.AddFrame(builder, frame)
    HitBatch.AddFirstColumn(builder, first_column)
    HitBatch.AddColumnCount(builder, column_count)
    HitBatch.AddRaysPerBeam(builder, rays_per_beam)
    HitBatch.AddLayout(builder, RowLayout.RowLayout.Path8 if floats_per_row == 8 else RowLayout.RowLayout.Hit7)
    HitBatch.AddSimTimeNs(builder, sim_time_ns)
    HitBatch.AddRows(builder, rows_offset)
    builder.Finish(HitBatch.End(builder), file_identifier=b"LHB1")
    return bytes(builder.Output())


def build_control(*, sensor_id=0, fog_visibility_m=-1.0, rain_mm_per_h=-1.0, pause=False, resume=False):
    builder = flatbuffers.Builder(128)
    Weather.Start(builder)
    Weather.AddRainMmPerH(builder, rain_mm_per_h)
    Weather.AddFogVisibilityM(builder, fog_visibility_m)
    weather = Weather.End(builder)
    Control.Start(builder)
    Control.AddSensorId(builder, sensor_id)
    Control.AddWeather(builder, weather)
    state = RunState.RunState.Pause if pause else RunState.RunState.Resume if resume else RunState.RunState.Unchanged
    Control.AddRunState(builder, state)
    builder.Finish(Control.End(builder), file_identifier=b"LCT1")
    return bytes(builder.Output())


class Client:
    """A UDP sender of frames to one sensor of lidaremud."""

    def __init__(self, host="127.0.0.1", port=9870, sensor_id=0, channels=16):
        self.address = (host, port)
        self.sensor_id = sensor_id
        self.channels = channels
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def send_frame(self, frame, rows, *, floats_per_row=7, sim_time_ns=0):
        """Sends a frame (or its first columns), split by whole columns into datagrams."""
        floats_per_column = self.channels * floats_per_row
        if len(rows) % floats_per_column:
            raise ValueError("rows do not fill whole columns of %d channels" % self.channels)
        columns = len(rows) // floats_per_column
        per_datagram = (MAX_DATAGRAM - _HEADER_ALLOWANCE) // (floats_per_column * 4)
        sent = 0
        for first in range(0, columns, per_datagram):
            count = min(per_datagram, columns - first)
            part = rows[first * floats_per_column:(first + count) * floats_per_column]
            self.socket.sendto(build_hit_batch(part, sensor_id=self.sensor_id, frame=frame, first_column=first,
                                               column_count=count, floats_per_row=floats_per_row,
                                               sim_time_ns=sim_time_ns), self.address)
            sent += 1
        return sent

    def send_control(self, **fields):
        self.socket.sendto(build_control(sensor_id=self.sensor_id, **fields), self.address)

    def close(self):
        self.socket.close()
