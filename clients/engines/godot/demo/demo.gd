# The demo yard. Run headless with --lidaremu-frames=N and it quits once every lidar on the
# vehicle has swept its N turns, with exit code 1 when one could not start (docs/engines.md).
extends Spatial

var _sweeping = 0
var _failed = false


func _ready():
	var quit_when_done = false
	for arg in OS.get_cmdline_args():
		quit_when_done = quit_when_done or arg.begins_with("--lidaremu-frames=")
	if not quit_when_done:
		return
	for lidar in get_tree().get_nodes_in_group("lidaremu_lidars"):
		_sweeping += 1
		lidar.connect("finished", self, "_on_lidar_finished")


func _on_lidar_finished():
	_sweeping -= 1
	if _sweeping > 0:
		return
	for lidar in get_tree().get_nodes_in_group("lidaremu_lidars"):
		_failed = _failed or lidar.failed
	get_tree().quit(1 if _failed else 0)
