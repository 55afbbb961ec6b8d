#include "scheduler/scheduling_policy.h"

#include <algorithm>
#include <utility>

namespace cyber {
namespace scheduler {

int ClassicPolicy::ClampPriority(int priority) {
  return std::clamp(priority, 0, kMaxPriority - 1);
}

void ClassicPolicy::Push(std::shared_ptr<CRoutine> routine) {
  const int p = routine->processor();
  if (p >= 0 && p < static_cast<int>(pinned_.size())) {
    pinned_[p].push_back(std::move(routine));
  } else {
    levels_[ClampPriority(routine->priority())].push_back(std::move(routine));
  }
  ++size_;
}

std::shared_ptr<CRoutine> ClassicPolicy::Pop(int processor) {
  std::shared_ptr<CRoutine> r;
  if (processor >= 0 && processor < static_cast<int>(pinned_.size()) &&
      !pinned_[processor].empty()) {
    r = pinned_[processor].pop_front();
  } else {
    for (int level = kMaxPriority - 1; level >= 0 && !r; --level) {
      if (!levels_[level].empty()) {
        r = levels_[level].pop_front();
      }
    }
  }
  if (r) --size_;
  return r;
}

}  // namespace scheduler
}  // namespace cyber
