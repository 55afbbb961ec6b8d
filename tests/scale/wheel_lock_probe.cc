#include "tests/scale/wheel_lock_probe.h"

#include <pthread.h>
#include <sys/resource.h>

#include "tests/scale/thread_roles.h"

namespace cyber {
namespace scale {

void WheelLockProbe::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), kProbeThreadName);
    Loop();
  });
}

void WheelLockProbe::Stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

namespace {
// The calling thread's involuntary context switches so far.
long Preemptions() {
  struct rusage usage {};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nivcsw;
}
}  // namespace

void WheelLockProbe::Loop() {
  Instant next = clock_->Now();
  while (!stopping_.load(std::memory_order_relaxed)) {
    next += spacing_;
    clock_->SleepUntil(next);
    const long preemptions_before = Preemptions();
    const Instant begin = clock_->Now();
    static_cast<void>(wheel_->size());  // takes and releases the wheel lock
    const absl::Duration waited = clock_->Now() - begin;
    const bool preempted = Preemptions() != preemptions_before;
    if (!window_->Contains(begin)) continue;
    wait_.Record(waited);
    if (!preempted) wait_unpreempted_.Record(waited);
    if (waited >= kLongWait) {
      long_waits_.Add(CascadePhaseBin(*wheel_, begin));
      ++long_waits_total_;
      if (preempted) ++long_waits_preempted_;
    }
    if (next < begin) next = begin;  // overslept: no burst of catch-up probes
  }
}

}  // namespace scale
}  // namespace cyber
