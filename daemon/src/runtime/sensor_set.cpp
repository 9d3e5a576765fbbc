#include "lidaremu/daemon/runtime/sensor_set.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <iostream>
#include <set>

#include "lidaremu/daemon/config/settings.hpp"
#include "lidaremu/daemon/runtime/memory_budget.hpp"

namespace lidaremu::daemon {

namespace {
// Starts sensors already built, in order, moving each into `sensors`; on a failure those started
// are retired and the error goes on.
void start_built(Sensors& built, const SensorServices& services, Sensors& sensors) {
  try {
    for (auto& s : built) {
      sensors.push_back(std::move(s));
      sensors.back()->start();
      std::cout << "lidaremud: " << sensors.back()->describe() << std::endl;
    }
  } catch (...) {
    built.clear();
    retire_sensors(services.reaper, sensors);
    throw;
  }
  built.clear();
}
// The counters of the sensor of this name that a new one replaces, or none.
std::shared_ptr<SensorHistory> history_for(const Histories& histories, const std::string& name) {
  const auto it = histories.find(name);
  return it == histories.end() ? nullptr : it->second;
}
}  // namespace

void retire_sensors(Reaper& reaper, Sensors& sensors) {
  for (auto& s : sensors) {
    s->stop_input();
    std::shared_ptr<EmulatedSensor> retired(std::move(s));
    reaper.retire([retired] { retired->join(); },
                  [retired, &reaper]() mutable {
                    retired->drained();
                    retired.reset();  // freed here, on the io thread; then its memory returned
                    reaper.return_freed_memory();
                  });
  }
  sensors.clear();
}

Histories histories_of(const Sensors& sensors) {
  Histories by_name;
  for (const auto& s : sensors) by_name[s->runtime().settings().name] = s->history();
  return by_name;
}

void start_sensors(const std::vector<SensorSettings>& settings, const SensorServices& services,
                   Sensors& sensors, const Histories& histories) {
  Sensors built;
  try {
    for (const auto& s : settings) {
      built.push_back(
          std::make_unique<EmulatedSensor>(s, services, history_for(histories, s.name)));
    }
  } catch (...) {
    retire_sensors(services.reaper, sensors);
    throw;
  }
  start_built(built, services, sensors);
}

Reloader::Reloader(std::filesystem::path file, const SensorServices& services, Sensors& sensors)
    : file_(std::move(file)), services_(services), sensors_(sensors) {}

Reloader::~Reloader() {
  if (warmer_.joinable()) warmer_.join();
  fresh_.clear();  // never started: nothing to drain
}

void Reloader::request() {
  if (busy_) {
    again_ = true;
    return;
  }
  begin();
}

void Reloader::begin() {
  busy_ = true;
  if (warmer_.joinable()) warmer_.join();  // the previous reload's, done (it posted finish)
  std::vector<SensorSettings> running;
  for (const auto& s : sensors_) running.push_back(s->configured());
  // A sensor that keeps its name keeps its counters (Prometheus counters only go up).
  warmer_ = std::thread([this, histories = histories_of(sensors_), running = std::move(running)] {
    try {
      // The file is read here too, off the io thread: a 256 MiB scan table took it 2-10 s, and
      // /healthz and every unit's API waited.
      const DaemonSettings next = load_config_file(file_);
      check_memory(plan_memory(next.sensors, services_.recorders, next.memory_limit_mib));
      for (const auto& s : next.sensors) {
        fresh_names_.push_back(s.name);
        if (std::find(running.begin(), running.end(), s) != running.end()) {
          fresh_.push_back(nullptr);  // runs on as it is
          continue;
        }
        fresh_.push_back(
            std::make_unique<EmulatedSensor>(s, services_, history_for(histories, s.name)));
        fresh_.back()->runtime().warm_up();
      }
    } catch (const std::exception& e) {
      fresh_.clear();
      fresh_names_.clear();
      build_error_ = e.what();
    }
    boost::asio::post(services_.io, [this] { finish(); });
  });
}

void Reloader::finish() {
  if (!build_error_.empty()) {
    spdlog::error("SIGHUP: keeping the running configuration: {}", build_error_);
    build_error_.clear();
  } else {
    replace_sensors();
  }
  busy_ = false;
  if (again_) {
    again_ = false;
    begin();
  }
}

void Reloader::replace_sensors() {
  // Those the file keeps (a null in fresh_) stay; the others retire.
  std::map<std::string, std::unique_ptr<EmulatedSensor>> kept;
  std::set<const EmulatedSensor*> unchanged_ones;
  Sensors leaving;
  for (auto& s : sensors_) {
    const auto at = std::find(fresh_names_.begin(), fresh_names_.end(), s->configured().name);
    if (at != fresh_names_.end() && !fresh_[static_cast<std::size_t>(at - fresh_names_.begin())]) {
      unchanged_ones.insert(s.get());
      kept[s->configured().name] = std::move(s);
    } else {
      leaving.push_back(std::move(s));
    }
  }
  sensors_.clear();
  std::vector<SensorSettings> previous;
  for (const auto& s : leaving) {
    previous.push_back(s->runtime().settings());
    previous.back().hits.port = s->runtime().bound_hits().port;
  }
  const Histories histories = histories_of(leaving);
  retire_sensors(services_.reaper, leaving);
  std::size_t started = 0;
  try {
    for (std::size_t i = 0; i < fresh_.size(); ++i) {
      if (!fresh_[i]) {
        sensors_.push_back(std::move(kept.at(fresh_names_[i])));
        continue;
      }
      sensors_.push_back(std::move(fresh_[i]));
      sensors_.back()->start();
      ++started;
      std::cout << "lidaremud: " << sensors_.back()->describe() << std::endl;
    }
    spdlog::info("SIGHUP: reloaded {}: {} sensor(s), {} (re)started, {} running on unchanged",
                 file_.string(), sensors_.size(), started, sensors_.size() - started);
  } catch (const std::exception& e) {
    spdlog::error("SIGHUP: {}: back to the previous configuration", e.what());
    // The unchanged stay; the new ones retire (those of fresh_ never started are only freed);
    // the ones they replaced start again as they ran.
    Sensors unchanged;
    Sensors failed;
    for (auto& s : sensors_) {
      (unchanged_ones.contains(s.get()) ? unchanged : failed).push_back(std::move(s));
    }
    for (auto& [name, s] : kept) {
      if (s) unchanged.push_back(std::move(s));
    }
    retire_sensors(services_.reaper, failed);
    sensors_ = std::move(unchanged);
    Sensors back;
    start_sensors(previous, services_, back, histories);
    for (auto& s : back) sensors_.push_back(std::move(s));
  }
  fresh_.clear();
  fresh_names_.clear();
}

}  // namespace lidaremu::daemon
