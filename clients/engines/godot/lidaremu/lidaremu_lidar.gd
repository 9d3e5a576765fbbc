# A spinning lidar emulated by lidaremu. Put this node where the sensor sits on your vehicle, its
# -Z looking where the sensor's azimuth 0 looks (the sensor's forward), and start lidaremud with
# the sensor's [[sensor]] table set to `engine = "godot"` and `hits_format = "raw7"`.
#
# At start the node asks the daemon's HTTP endpoint for the sensor (columns, channels, frame rate,
# hit port) and its beam table (GET /api/v1/sensors/NAME/beams: each beam's origin and direction
# in the node's axes). Each physics tick it casts the columns the head swept since the last tick,
# each from the node's pose at that column's time (interpolated between the two ticks, so a moving
# vehicle's scan is skewed as a real one's is), and sends each hit in the node's own frame as a
# raw7 row (point, normal, material id) in datagrams of whole columns. A collider's material id
# is its metadata `lidaremu_material` (the ids of the daemon's config/materials.toml), else
# `default_material`. Beams that hit nothing are not sent.
extends Spatial

signal finished

export var api_url = "http://127.0.0.1:9880"  # lidaremud --http
export var sensor = "vlp16-0"  # the [[sensor]] name
export var frames_to_send = 0  # 0: sweep for ever; N: stop after N turns and emit `finished`
export var max_range_m = 200.0
export(int, LAYERS_3D_PHYSICS) var collision_mask = 0x7FFFFFFF
export var default_material = 8  # concrete
export var material_meta = "lidaremu_material"

const MAX_DATAGRAM_BYTES = 60000  # under UDP's 65,507
const ROW_BYTES = 28  # 7 little-endian float32

var _columns = 0
var _channels = 0
var _fps = 0
var _origins = PoolVector3Array()  # per beam, column by column, channel by channel
var _directions = PoolVector3Array()
var _udp = PacketPeerUDP.new()
var _rows = StreamPeerBuffer.new()
var _exclude = []
var _sweep_time = -1.0  # seconds since the first tick; negative: not started
var _next_column = 0  # columns swept so far, over all turns
var _last_pose = Transform()
var _last_time = 0.0
var _done = false
var failed = false  # the daemon did not answer or has no table for this sensor


func _ready():
	# Command-line overrides for headless runs (godot3-server ... --lidaremu-api=URL).
	for arg in OS.get_cmdline_args():
		if arg.begins_with("--lidaremu-api="):
			api_url = arg.split("=", true, 1)[1]
		elif arg.begins_with("--lidaremu-frames="):
			frames_to_send = int(arg.split("=", true, 1)[1])
	var info = _get_json("/api/v1/sensors/" + sensor)
	if info == null:
		_fail("no sensor '%s' at %s" % [sensor, api_url])
		return
	if info["engine"] != "godot":
		push_warning("lidaremu: sensor '%s' reads rows as '%s': set engine = \"godot\"" % [sensor, info["engine"]])
	_columns = int(info["columns_per_frame"])
	_channels = int(info["channels"])
	_fps = float(info["frames_per_second"])
	var beams = _get("/api/v1/sensors/" + sensor + "/beams")
	if beams == null or beams.size() != _columns * _channels * 24:
		_fail("no beam table for '%s' (a table scan has none: send framed batches)" % sensor)
		return
	var table = StreamPeerBuffer.new()
	table.data_array = beams
	for _i in range(_columns * _channels):
		_origins.append(Vector3(table.get_float(), table.get_float(), table.get_float()))
		_directions.append(Vector3(table.get_float(), table.get_float(), table.get_float()))
	var hits = _host_port(info["hits"].trim_prefix("udp://"))
	if hits[0] == "0.0.0.0":
		hits[0] = _host_port(api_url.trim_prefix("http://"))[0]
	_udp.set_dest_address(hits[0], hits[1])
	_rows.big_endian = false
	# The vehicle carrying the sensor does not hide the world from it.
	var body = get_parent()
	while body != null:
		if body is CollisionObject:
			_exclude.append(body)
		body = body.get_parent()


func _physics_process(delta):
	if _columns == 0 or _done:
		return
	var pose = global_transform
	if _sweep_time < 0:
		_sweep_time = 0.0
		_last_pose = pose
		_last_time = 0.0
	else:
		_sweep_time += delta
	var space = get_world().direct_space_state
	var column_period = 1.0 / (_fps * _columns)
	var last = _columns * frames_to_send if frames_to_send > 0 else -1
	while _next_column * column_period <= _sweep_time + 1e-9 and _next_column != last:
		var t = _next_column * column_period
		var f = 1.0
		if _sweep_time > _last_time:
			f = clamp((t - _last_time) / (_sweep_time - _last_time), 0.0, 1.0)
		_cast_column(space, _last_pose.interpolate_with(pose, f), _next_column % _columns)
		_next_column += 1
	_flush()
	_last_pose = pose
	_last_time = _sweep_time
	if _next_column == last:
		_done = true
		emit_signal("finished")


func _cast_column(space, pose, column):
	if _rows.get_size() + _channels * ROW_BYTES > MAX_DATAGRAM_BYTES:
		_flush()
	var to_local = pose.affine_inverse()
	for channel in range(_channels):
		var beam = column * _channels + channel
		var from = pose.xform(_origins[beam])
		var to = from + pose.basis.xform(_directions[beam]) * max_range_m
		var hit = space.intersect_ray(from, to, _exclude, collision_mask)
		if hit.empty():
			continue
		var point = to_local.xform(hit.position)
		var normal = pose.basis.xform_inv(hit.normal)
		var material = default_material
		if hit.collider != null and hit.collider.has_meta(material_meta):
			material = int(hit.collider.get_meta(material_meta))
		for value in [point.x, point.y, point.z, normal.x, normal.y, normal.z, float(material)]:
			_rows.put_float(value)


func _flush():
	if _rows.get_size() > 0:
		_udp.put_packet(_rows.data_array)
		_rows.clear()


func _fail(why):
	push_error("lidaremu: " + why)
	failed = true
	_done = true
	call_deferred("emit_signal", "finished")  # after the scene's _ready has connected


func _host_port(text):
	var colon = text.find_last(":")
	var slash = text.find("/")
	var port_text = text.substr(colon + 1, (slash if slash > colon else text.length()) - colon - 1)
	return [text.substr(0, colon), int(port_text)]


func _get_json(path):
	var body = _get(path)
	if body == null:
		return null
	var parsed = JSON.parse(body.get_string_from_utf8())
	return parsed.result if parsed.error == OK else null


# A blocking GET (at start only): the body's bytes, or null.
func _get(path):
	var address = _host_port(api_url.trim_prefix("http://"))
	var http = HTTPClient.new()
	if http.connect_to_host(address[0], address[1]) != OK:
		return null
	while http.get_status() in [HTTPClient.STATUS_RESOLVING, HTTPClient.STATUS_CONNECTING]:
		http.poll()
		OS.delay_msec(1)
	if http.get_status() != HTTPClient.STATUS_CONNECTED:
		return null
	if http.request(HTTPClient.METHOD_GET, path, ["Accept: */*"]) != OK:
		return null
	while http.get_status() == HTTPClient.STATUS_REQUESTING:
		http.poll()
		OS.delay_msec(1)
	if not http.has_response() or http.get_response_code() != 200:
		return null
	var body = PoolByteArray()
	while http.get_status() == HTTPClient.STATUS_BODY:
		http.poll()
		var chunk = http.read_response_body_chunk()
		if chunk.size() == 0:
			OS.delay_msec(1)
		else:
			body.append_array(chunk)
	http.close()
	return body
