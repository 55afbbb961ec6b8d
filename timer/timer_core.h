// TimerCore: the per-timer schedule and its state machine, behind the Timer
// handle (timer.h). Internal to timer/; documented here because this is where
// the timing guarantees are enforced.
//
// Schedule. The k-th expected time is origin + k * period. For a periodic
// timer the origin is the first tick boundary at or after Start(), so whole-
// tick periods fall exactly on ticks (no rounding lateness); for a oneshot it
// is the instant of Start() (k = 1, period = delay). After each run the
// core re-arms itself for the next expected time computed from the origin,
// never from "now", so errors do not accumulate (drift compensation). It is
// armed only while no run is in progress, so a callback never runs
// concurrently with itself. Overruns follow the OverrunPolicy.
//
// Life cycle of one expiry: the tick thread calls OnExpired(seq); if that
// arming is still current and no run of this schedule is in flight, the core
// provisionally arms the next period (so the tick thread's next sleep already
// accounts for it) and hands Run(generation) to the Dispatcher. Run() checks
// the generation again (a Stop() in between drops it), runs the callback
// without any lock, records statistics and re-arms per the overrun policy —
// in the on-time case onto the same tick as the provisional arming, which
// therefore needs no extra wake-up of the tick thread. If the provisional
// arming comes due while the run is still in flight, that is an overrun and
// it is ignored: the run re-arms when it ends.
//
// Stop() is synchronous: it bumps the generation (dropping queued runs),
// cancels the wheel entry and waits until a run in progress has finished —
// unless it is called from that very run (recognised by the dispatcher's
// execution token: a coroutine stays itself when it moves between threads),
// where waiting would deadlock; then the run simply does not re-arm. A
// caller that is itself a coroutine waits by yielding, so the callback it
// waits for can use its processor. A dispatcher cancellation thrown through
// the callback (scheduler shutdown) ends the schedule and is passed on.
// After Retire() (the owner is going away) Start() fails.
//
// Lock order: mu_ -> wheel lock (via TickDriver::Arm/Cancel) -> the tick
// thread's wake-up event. Dispatch happens with no lock held.
//
// Threads: every method may be called from any thread, including from the
// timer's own callback. Owned by std::shared_ptr (an ExpiryTarget).

#ifndef TIMER_TIMER_CORE_H_
#define TIMER_TIMER_CORE_H_

#include <cstdint>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "cyber/common/mutex.h"
#include "timer/latency_histogram.h"
#include "timer/tick_driver.h"
#include "timer/timer_options.h"

namespace cyber {
namespace timer {

class TimerCore final : public ExpiryTarget {
 public:
  // REQUIRES: `options` passed ValidateTimerOptions for `driver`'s wheel.
  TimerCore(TickDriver* driver, TimerOptions options);
  ~TimerCore() override;

  // Starts the schedule from now. OK if already running.
  // Errors: FailedPrecondition if retired or the driver is shut down.
  absl::Status Start();
  void Stop();
  // Stop(), and refuse any later Start().
  void Retire();
  bool IsRunning() const;
  TimerStatistics Statistics() const;
  const TimerOptions& options() const { return options_; }

  void OnExpired(uint32_t arm_seq) override;

 private:
  void Run(uint64_t generation);
  // Arms for call k_ (ArmLocked) or for `deadline`, recording the arming.
  absl::Status ArmLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ArmAtLocked(Instant deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Instant ExpectedLocked(int64_t k) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a run that ended at `end`: picks the next k per the overrun policy
  // and arms it.
  void ScheduleNextLocked(Instant end) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<TimerCore> SharedSelf();

  TickDriver* const driver_;
  const TimerOptions options_;

  mutable Mutex mu_;
  CondVar run_finished_;
  // Schedule.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // bumped by Start and Stop
  bool running_ ABSL_GUARDED_BY(mu_) = false;     // started, not stopped/done
  bool retired_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t armed_seq_ ABSL_GUARDED_BY(mu_) = 0;   // the current arming
  Instant origin_ ABSL_GUARDED_BY(mu_);
  int64_t k_ ABSL_GUARDED_BY(mu_) = 1;            // index of the armed call
  // A run handed to the dispatcher and not finished (queued or running), and
  // the schedule generation it belongs to.
  bool in_flight_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t in_flight_generation_ ABSL_GUARDED_BY(mu_) = 0;
  // Run in progress (the callback itself).
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  // The execution (thread or coroutine, per the dispatcher) running it.
  const void* callback_execution_ ABSL_GUARDED_BY(mu_) = nullptr;
  int64_t missed_since_last_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration last_run_ ABSL_GUARDED_BY(mu_);
  // Statistics.
  TimerStatistics counters_ ABSL_GUARDED_BY(mu_);
  // Percentile histograms (about 8 KiB), allocated at the first call: a
  // oneshot timeout is nearly always cancelled before it fires, and a timer
  // that never runs should not pay for them.
  struct Histograms {
    LatencyHistogram lateness;
    LatencyHistogram run_time;
  };
  std::unique_ptr<Histograms> histograms_ ABSL_GUARDED_BY(mu_);
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_CORE_H_
