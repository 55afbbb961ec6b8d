#include "tests/accuracy/fire_log.h"

#include <utility>

#include "cyber/time/steady_clock.h"

namespace cyber {
namespace accuracy {

void FireLog::Add(const Fire& fire) {
  {
    MutexLock lock(&mu_);
    fires_.push_back(fire);
  }
  added_.SignalAll();
}

bool FireLog::WaitForCount(size_t count, Instant limit) {
  const auto deadline = SteadyClock::ToTimePoint(limit);
  MutexLock lock(&mu_);
  while (fires_.size() < count) {
    if (!added_.WaitUntil(&mu_, deadline) && fires_.size() < count &&
        SteadyClock::Get()->Now() >= limit) {
      return false;
    }
  }
  return true;
}

size_t FireLog::size() const {
  MutexLock lock(&mu_);
  return fires_.size();
}

std::vector<Fire> FireLog::Take() {
  MutexLock lock(&mu_);
  return std::exchange(fires_, {});
}

}  // namespace accuracy
}  // namespace cyber
