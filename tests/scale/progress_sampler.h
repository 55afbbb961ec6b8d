// ProgressSampler: once a second, the scale run's memory and population;
// every --progress interval, a status line.
//
// Why: RSS must be watched during the window, not only read at its end (a
// leak or a growing queue shows as a slope), and a 60 s run with no output
// gives no clue when the load generator falls behind or the machine is busy.
// The status line shows, over the last interval: timeouts armed, cancelled
// and fired per second, the request threads' worst lag, periodic calls per
// second, and the CPU of the tick thread, the scheduler and the request
// threads.
//
// Threads: Start/Stop from the owner; the setters and the ranges from any
// thread.

#ifndef TESTS_SCALE_PROGRESS_SAMPLER_H_
#define TESTS_SCALE_PROGRESS_SAMPLER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"
#include "tests/scale/periodic_load.h"
#include "tests/scale/thread_roles.h"
#include "tests/scale/timeout_load.h"
#include "timer/timer_system.h"

namespace cyber {
namespace scale {

class ProgressSampler {
 public:
  // Minimum and maximum of the samples taken while measuring.
  struct Range {
    int64_t min = -1;
    int64_t max = -1;
    int samples = 0;
    void Add(int64_t v);
  };

  // `progress` zero: no status lines. Everything must outlive the sampler.
  ProgressSampler(Clock* clock, TimeoutLoad* timeouts,
                  const PeriodicLoad* periodics,
                  const timer::TimerSystem* driver, const ThreadRoles* roles,
                  absl::Duration progress);
  ~ProgressSampler() { Stop(); }
  ProgressSampler(const ProgressSampler&) = delete;
  ProgressSampler& operator=(const ProgressSampler&) = delete;

  void Start();  // thread "scale-sampler"
  void Stop();   // idempotent

  // Shown in the status line ("warm-up", "window", ...).
  void SetPhase(const std::string& phase);
  // While true, samples go into the ranges below.
  void SetMeasuring(bool measuring);

  Range rss() const;
  Range live_timeouts() const;
  Range wheel_entries() const;

 private:
  void Loop();

  Clock* const clock_;
  TimeoutLoad* const timeouts_;
  const PeriodicLoad* const periodics_;
  const timer::TimerSystem* const driver_;
  const ThreadRoles* const roles_;
  const absl::Duration progress_;
  Instant begin_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;

  mutable Mutex mu_;
  // mu_ protects the following state.
  std::string phase_ ABSL_GUARDED_BY(mu_) = "setup";
  bool measuring_ ABSL_GUARDED_BY(mu_) = false;
  Range rss_ ABSL_GUARDED_BY(mu_);
  Range live_ ABSL_GUARDED_BY(mu_);
  Range wheel_ ABSL_GUARDED_BY(mu_);
};

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_PROGRESS_SAMPLER_H_
