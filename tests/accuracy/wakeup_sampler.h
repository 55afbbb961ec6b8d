// WakeupSampler: how often a TimerSystem's thread wakes, per second of a
// scenario, read from TimerSystem::stats().wakeups (the number of returns
// from the tick thread's sleep).
//
// Why a thread of its own: the oneshot scenario's thread is busy launching
// timers, and a periodic scenario's thread waits on its probe; sampling on a
// fixed one-second grid from a separate thread keeps the series regular.
// The sampler itself wakes once per interval, which never touches the tick
// thread, so it does not disturb what it counts.
//
// Threads: Start() and Stop() from one thread; the sampler thread writes the
// samples under mu_.

#ifndef TESTS_ACCURACY_WAKEUP_SAMPLER_H_
#define TESTS_ACCURACY_WAKEUP_SAMPLER_H_

#include <cstdint>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/instant.h"
#include "cyber/time/steady_clock.h"
#include "timer/timer_system.h"

namespace cyber {
namespace accuracy {

// Wake-ups of the tick thread during [start, start + length).
struct WakeupSample {
  Instant start;
  absl::Duration length;
  uint64_t wakeups = 0;
};

class WakeupSampler {
 public:
  WakeupSampler(SteadyClock* clock, const timer::TimerSystem* driver,
                absl::Duration interval);
  ~WakeupSampler();  // stops a running sampler
  WakeupSampler(const WakeupSampler&) = delete;
  WakeupSampler& operator=(const WakeupSampler&) = delete;

  // Starts sampling now, every `interval` on an absolute grid.
  // REQUIRES: not running.
  void Start();
  // Takes a last (possibly shorter) sample, stops, and returns the series.
  std::vector<WakeupSample> Stop();

 private:
  // Samples at first + k * interval_ until stopped.
  void Loop(Instant first);
  // Closes the current sample at now.
  void SampleLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  SteadyClock* const clock_;
  const timer::TimerSystem* const driver_;
  const absl::Duration interval_;
  std::thread thread_;

  Mutex mu_;
  CondVar stop_requested_;
  // mu_ protects the following state.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Instant last_at_ ABSL_GUARDED_BY(mu_);
  uint64_t last_wakeups_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<WakeupSample> samples_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_WAKEUP_SAMPLER_H_
