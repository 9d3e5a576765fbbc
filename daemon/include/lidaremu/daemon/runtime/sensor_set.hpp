#pragma once
// The daemon's running sensors: started all or none, retired through the reaper, and replaced
// by a SIGHUP reload.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/runtime/emulated_sensor.hpp"

namespace lidaremu::daemon {

using Sensors = std::vector<std::unique_ptr<EmulatedSensor>>;
// Sensors' counters by name, for the sensors that replace them (SensorHistory).
using Histories = std::map<std::string, std::shared_ptr<SensorHistory>>;
Histories histories_of(const Sensors& sensors);

// Starts every sensor, or none: on a failure those already started are retired and the error
// goes on. A sensor named in `histories` carries on its counters.
void start_sensors(const std::vector<SensorSettings>& settings, const SensorServices& services,
                   Sensors& sensors, const Histories& histories = {});

// Stops sensors' input and APIs (their ports are free at once); the reaper waits until they
// processed and sent what they accepted, and they are freed on the io thread after the handlers
// they left queued there.
void retire_sensors(Reaper& reaper, Sensors& sensors);

// SIGHUP: the config file again, all or nothing. A file that does not load leaves everything
// running; sensors that cannot start bring the previous set back. [daemon] keys (threads,
// materials, logging, endpoints, recordings) take effect at the next start.
//
// A running sensor whose [[sensor]] table still says the same (its name, and every setting as
// loaded: EmulatedSensor::configured) runs on untouched: its stream, its API's connections and
// what its clients set through them stay, and a SIGHUP with nothing changed costs nothing. A
// sensor whose table changed restarts with the file's settings, keeping its counters by name.
//
// The file is read (a scan table of up to 256 MiB with it), the new sensors built (their frame
// buffers) and their scratch faulted in (138 MB for an OS1-128 2048x10, up to a few hundred
// milliseconds when the kernel compacts memory for huge pages) on a thread of its own while the
// old sensors go on running; only then, on the io thread, do the old ones retire and the new ones
// start. So the io thread (the control endpoint, the sensor APIs) never waits for it, and no frame
// is lost to it. SIGHUPs during a reload run one more, once it is done.
class Reloader {
 public:
  Reloader(std::filesystem::path file, const SensorServices& services, Sensors& sensors);
  ~Reloader();
  Reloader(const Reloader&) = delete;
  Reloader& operator=(const Reloader&) = delete;

  // On the io thread, for each SIGHUP.
  void request();

 private:
  void begin();
  void finish();
  void replace_sensors();

  std::filesystem::path file_;
  SensorServices services_;
  Sensors& sensors_;
  bool busy_ = false;
  bool again_ = false;
  // The file's sensors in its order, built and warmed on warmer_ and started by finish() on the
  // io thread (null: the running one of that name goes on); or why they could not be.
  Sensors fresh_;
  std::vector<std::string> fresh_names_;
  std::string build_error_;
  std::thread warmer_;
};

}  // namespace lidaremu::daemon
