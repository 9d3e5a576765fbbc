# Drives straight on at a constant velocity: where it is at time t is start + velocity * t, which
# is what lidaremu's Godot test expects of each column's pose.
extends Spatial

export var velocity = Vector3(0, 0, -2)  # metres per second; -Z is forward

var _start = Vector3()
var _time = 0.0


func _ready():
	_start = translation


# A parent's physics tick runs before its children's: the lidars read this tick's pose.
func _physics_process(delta):
	translation = _start + velocity * _time
	_time += delta
