#include "lidaremu/daemon/runtime/fair_share.hpp"

#include <algorithm>
#include <cmath>

namespace lidaremu::daemon {

void FairShare::record(bool delivered, std::uint64_t frames) {
  const double outcome = delivered ? 1.0 : 0.0;
  share_ = outcome + (share_ - outcome) * std::pow(1.0 - kWeight, static_cast<double>(frames));
}

double FairShare::lead_s() const {
  return -kLeadPeriods * std::log(std::max(share_, kFloor)) * period_s_;
}

}  // namespace lidaremu::daemon
