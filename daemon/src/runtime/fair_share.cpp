#include "lidaremu/daemon/runtime/fair_share.hpp"

#include <algorithm>
#include <cmath>

namespace lidaremu::daemon {

void FairShare::Member::record(bool delivered, std::uint64_t frames) {
  const std::lock_guard lock(owner_.mutex_);
  const double outcome = delivered ? 1.0 : 0.0;
  share_ = outcome + (share_ - outcome) * std::pow(1.0 - kWeight, static_cast<double>(frames));
}

double FairShare::Member::share() const {
  const std::lock_guard lock(owner_.mutex_);
  return share_;
}

double FairShare::Member::lead_s() const {
  const std::lock_guard lock(owner_.mutex_);
  return -kLeadPeriods * std::log(std::max(share_, kFloor)) * period_s_;
}

}  // namespace lidaremu::daemon
