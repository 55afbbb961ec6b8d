#include "timer/timer_owner.h"

#include <utility>

#include "cyber/time/wait_list.h"

namespace cyber {
namespace timer {

namespace {
// The owner installed on this thread, and the execution (thread or
// routine) that installed it: a routine that runs on the thread meanwhile
// is another execution, and configures timers of its own.
thread_local TimerOwner* t_owner = nullptr;
thread_local const void* t_owner_execution = nullptr;
}  // namespace

ScopedTimerOwner::ScopedTimerOwner(TimerOwner* owner)
    : previous_owner_(t_owner), previous_execution_(t_owner_execution) {
  t_owner = owner;
  t_owner_execution = CurrentExecutionId();
}

ScopedTimerOwner::~ScopedTimerOwner() {
  t_owner = previous_owner_;
  t_owner_execution = previous_execution_;
}

TimerOwner* TimerOwner::Current() {
  TimerOwner* const owner = t_owner;
  if (owner == nullptr || t_owner_execution != CurrentExecutionId()) return nullptr;
  return owner;
}

void TimerOwner::Adopt(const void* identity, absl::Duration period, bool oneshot,
                       Describe describe) {
  MutexLock lock(&mu_);
  for (Record& r : records_) {
    if (r.identity == identity) {  // configured again: its new period
      r.period = period;
      r.oneshot = oneshot;
      return;
    }
  }
  records_.push_back(Record{identity, period, oneshot, std::move(describe)});
}

std::vector<OwnedTimer> TimerOwner::Timers() const {
  std::vector<Record> records;
  {
    MutexLock lock(&mu_);
    records = records_;
  }
  // Outside mu_: reading a timer takes its own lock.
  std::vector<OwnedTimer> out;
  out.reserve(records.size());
  for (const Record& r : records) {
    OwnedTimer t = r.describe();
    t.period = r.period;
    t.oneshot = r.oneshot;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace timer
}  // namespace cyber
