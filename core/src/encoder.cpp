#include "lidaremu/core/encoder.hpp"

#include "lidaremu/core/ouster.hpp"
#include "lidaremu/core/velodyne.hpp"

namespace lidaremu::core {

std::unique_ptr<Encoder> make_encoder(const ScanPattern& pattern, const SensorIdentity& identity) {
  switch (pattern.model->family) {
    case SensorFamily::kVelodyne:
      return std::make_unique<velodyne::VelodyneEncoder>(pattern, identity);
    case SensorFamily::kOuster:
      return std::make_unique<ouster::LegacyEncoder>(pattern, identity);
  }
  return nullptr;
}

}  // namespace lidaremu::core
