#pragma once
// The live-view page's files, built into the daemon (daemon/web; three.js from npm).
#include <cstddef>
#include <span>
#include <string_view>

namespace lidaremu::daemon {

struct WebAsset {
  std::string_view url;  // where the control endpoint serves it
  std::string_view content_type;
  std::string_view bytes;
};
std::span<const WebAsset> web_assets();

}  // namespace lidaremu::daemon
