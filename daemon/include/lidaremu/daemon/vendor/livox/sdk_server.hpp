#pragma once
// What an emulated Livox unit answers over UDP (FORMATS-HESAI-ROBOSENSE.md section 3): a host's
// discovery broadcast (port 56000) and its commands on the unit's command port (56100), each
// answered from the port it arrived at to where it came from (core::livox::answer_command).
// What it leaves unanswered is counted by kind (/metrics: lidaremu_livox_sdk_datagrams_total), the
// kernel's drops on its sockets too; what it refuses is logged at the 1st, 2nd, 3rd, 10th, 100th...
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "lidaremu/core/livox/parameters.hpp"

namespace lidaremu::daemon {

struct LivoxSdkCounts {
  std::uint64_t answered = 0;
  std::uint64_t malformed = 0;       // a frame Livox SDK2 would drop (size, sof, version, CRCs)
  std::uint64_t not_requests = 0;    // acknowledgements, frames from a lidar
  std::uint64_t unknown = 0;         // commands whose answers the facts do not give
  std::uint64_t trailing_bytes = 0;  // bytes past the frame's length
  std::uint64_t oversized = 0;       // over the largest frame (kMaxCommandFrame): not read at all
  std::uint64_t kernel_drops = 0;    // dropped by the kernel, the ports' buffers full (a flood)
  bool operator==(const LivoxSdkCounts&) const = default;
};

// Takes the host ends a 0x0100 request sets, asked by the host at `requester` (its address):
// whether the unit took them.
using LivoxApply =
    std::function<bool(const core::livox::WorkModeChange& change, const std::string& requester)>;

class LivoxSdkServer {
 public:
  // `address`: the unit's; the command port binds it, discovery binds it and the limited
  // broadcast address (255.255.255.255, where Livox SDK2's discovery arrives, shared with every
  // other unit on the host), or every address when it is 0.0.0.0. Port 0: any free one (tests).
  // Throws, naming the port, when it cannot bind.
  // `points`, `imu`: where the unit's streams go now (reported to 0x0101); `apply`: takes the
  // host ends a 0x0100 request sets (a refusal answers return code 1); none: they are refused.
  LivoxSdkServer(boost::asio::io_context& io, const std::string& address,
                 std::uint16_t discovery_port, std::uint16_t command_port, std::string serial,
                 core::livox::HostPorts points = {}, core::livox::HostPorts imu = {},
                 LivoxApply apply = {});
  ~LivoxSdkServer();
  LivoxSdkServer(const LivoxSdkServer&) = delete;
  LivoxSdkServer& operator=(const LivoxSdkServer&) = delete;
  [[nodiscard]] std::uint16_t discovery_port() const;
  [[nodiscard]] std::uint16_t command_port() const;
  [[nodiscard]] LivoxSdkCounts counts() const;

  struct State;  // the sockets, buffers and counts, shared with the pending receives

 private:
  std::shared_ptr<State> state_;
};

}  // namespace lidaremu::daemon
