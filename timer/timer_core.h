// TimerCore: one timer's schedule and its one state machine, behind the
// Timer handle (timer.h). Internal to timer/; documented here because this
// is where the timing and stop guarantees are enforced.
//
// One core per Timer, for the Timer's whole life: Configure() replaces the
// options inside it, never the core, so "a call is running" is a fact about
// the timer, not about a configuration. The core is shared (std::shared_ptr)
// between the handle, the wheel entry in flight and a run queued in a
// dispatcher; whatever it points to it holds (the WheelFrontEnd by
// shared_ptr, the options by shared_ptr snapshot per run), so it can outlive
// its handle and its TickDriver safely.
//
// States (state_, under mu_):
//
//   kIdle       no schedule, no call in flight
//   kArmed      schedule on; the wheel entry is armed for call k_
//   kQueued     schedule on; call k_ handed to the dispatcher, not begun
//   kRunning    schedule on; the callback of call k_ runs
//   kFinishing  schedule off; a callback still runs (stopped while running,
//               or a oneshot, whose schedule ends when its call begins)
//
// Transitions (event: from -> to). Anything not listed leaves the state.
//
//   Start          kIdle -> kArmed            (new schedule from now)
//                  kFinishing -> kRunning     (restart while its call runs;
//                                              armed when the call ends)
//                  kArmed/kQueued/kRunning: already on, OK, no change
//   Reset          kIdle -> kArmed, kFinishing -> kRunning (as Start)
//                  kArmed/kQueued -> kArmed   (entry cancelled or queued run
//                                              dropped; new schedule from now)
//                  kRunning -> kRunning       (new schedule from now, armed
//                                              when the running call ends)
//   Stop           kArmed/kQueued -> kIdle    (wheel entry cancelled; a
//                                              queued run is dropped)
//                  kRunning -> kFinishing, then waits for the call to end
//                  (unless called by that call itself); kFinishing: waits
//   expiry         kArmed -> kQueued          (dispatched; a periodic timer
//                                              is provisionally armed for
//                                              k_+1 so the tick thread plans
//                                              its sleep with it; under
//                                              kSkip a call dispatched when
//                                              later periods are due too
//                                              stands for the latest, also
//                                              when it begins late)
//                  kQueued: the provisional arming came due before the call
//                  began (starved): that period is counted missed and the
//                  queued call stands for the next one
//                  kRunning: an overrun; resolved when the call ends
//   dispatch refused  kQueued -> kArmed       (periodic: next period, the
//                  refused one counted missed; oneshot: retried with a
//                  backoff of 1, 2, 4 ... ticks up to 1 s, never busily)
//   call begins    kQueued -> kRunning (periodic) / kFinishing (oneshot)
//   call ends      kRunning -> kArmed         (next call per the overrun
//                                              policy, decided in ticks)
//                  kRunning -> kIdle          if a Stop() waits, the timer
//                                             is retired or its system shut
//                                             down
//                  kFinishing -> kIdle
//   system shut down (seen at a call or a Start): -> kIdle, FailedPrecondition
//
// Stop() waits for a call of another execution (thread or coroutine; see
// cyber/common/wait_list.h) on a WaitList: a thread blocks, a coroutine
// parks off its processor (it never yield-spins, whatever its priority).
// While a Stop() waits, the call's end never re-arms, even if the callback
// started its own timer again meanwhile: when Stop() returns, no call runs
// and none begins, unless somebody starts the timer after that.
//
// Lock order: mu_ -> wheel lock (Arm/Cancel) -> the tick thread's wake-up
// event; mu_ -> a waiting coroutine's lock -> its processor queue (WakeAll).
// User code and Dispatch() run with no lock held.
//
// Threads: every method from any thread or coroutine, including the timer's
// own callback.

#ifndef TIMER_TIMER_CORE_H_
#define TIMER_TIMER_CORE_H_

#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "cyber/common/mutex.h"
#include "cyber/common/wait_list.h"
#include "timer/latency_histogram.h"
#include "timer/timer_options.h"
#include "timer/wheel_front_end.h"

namespace cyber {
namespace timer {

class TimerCore final : public ExpiryTarget {
 public:
  enum class State : uint8_t { kIdle, kArmed, kQueued, kRunning, kFinishing };

  // `front` null: bound at each Start() (the process default).
  TimerCore(std::shared_ptr<WheelFrontEnd> front, std::string name);
  ~TimerCore() override;

  // Stops (as Stop()) and replaces the options; `status` is what validating
  // them gave (Start() returns it while not OK).
  void Configure(std::shared_ptr<const TimerOptions> options,
                 absl::Status status);
  // Starts the schedule from now, on `front` (which must be the core's own
  // front end when it has one). OK if already running.
  // Errors: the configuration's; FailedPrecondition if never configured,
  // retired, or the timer system is shut down.
  absl::Status Start(std::shared_ptr<WheelFrontEnd> front);
  // Start(), but a running schedule starts again from now (a new countdown)
  // instead of continuing. Never waits for a running call.
  absl::Status Reset(std::shared_ptr<WheelFrontEnd> front);
  void Stop();
  // Stop(), and refuse any later Start() (the handle is going away).
  void Retire();

  bool IsRunning() const;
  TimerStatistics Statistics() const;
  std::string name() const;
  const std::shared_ptr<WheelFrontEnd>& fixed_front_end() const {
    return fixed_front_;
  }
  static const char* StateName(State state);

  void OnExpired(uint32_t arm_seq) override;

 private:
  // Start() (reset false) and Reset() (reset true).
  absl::Status Begin(std::shared_ptr<WheelFrontEnd> front, bool reset);
  void Run(uint64_t token);
  Instant ExpectedLocked(int64_t k) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Arms for call k_ (or the instant `deadline`), recording the arming; on
  // failure logs, goes kIdle and returns the error.
  absl::Status ArmLocked(Instant deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CancelLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a call that ended at `end`: picks the next k per the overrun
  // policy, in ticks, and arms it.
  void ScheduleNextLocked(Instant end) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // kSkip: if periods after k_ are due by `due_by` (a tick instant), call
  // k_ stands for the latest of them; the others are counted missed. A
  // stall or a late start then ends in one late call, never a stale call
  // followed by the late one.
  void SkipToLatestDueLocked(Instant due_by) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Binds to `front` (kIdle only), validating the options for its wheel.
  absl::Status BindLocked(std::shared_ptr<WheelFrontEnd> front)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleRefusal(uint64_t token);

  const std::shared_ptr<WheelFrontEnd> fixed_front_;

  mutable Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kIdle;
  // Where the current (or last) schedule runs; fixed_front_ if set.
  std::shared_ptr<WheelFrontEnd> front_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const TimerOptions> options_ ABSL_GUARDED_BY(mu_);
  absl::Status config_status_ ABSL_GUARDED_BY(mu_);
  std::string name_ ABSL_GUARDED_BY(mu_);
  int priority_ ABSL_GUARDED_BY(mu_) = 0;  // resolved at binding
  bool configured_ ABSL_GUARDED_BY(mu_) = false;
  bool retired_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t config_epoch_ ABSL_GUARDED_BY(mu_) = 0;  // bumped by Configure
  // Schedule: call k is expected at origin_ + k * period.
  Instant origin_ ABSL_GUARDED_BY(mu_);
  int64_t k_ ABSL_GUARDED_BY(mu_) = 1;
  bool restart_pending_ ABSL_GUARDED_BY(mu_) = false;  // kRunning by Start
  uint32_t armed_seq_ ABSL_GUARDED_BY(mu_) = 0;  // current arming; 0: none
  uint64_t queued_token_ ABSL_GUARDED_BY(mu_) = 0;  // the kQueued dispatch
  int refusals_in_a_row_ ABSL_GUARDED_BY(mu_) = 0;
  // The call in flight (kRunning/kFinishing), and who waits for its end.
  const void* runner_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t calls_ended_ ABSL_GUARDED_BY(mu_) = 0;
  int stop_waiters_ ABSL_GUARDED_BY(mu_) = 0;
  WaitList call_ended_ ABSL_GUARDED_BY(mu_);
  int64_t missed_since_last_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration last_run_ ABSL_GUARDED_BY(mu_);
  TimerStatistics counters_ ABSL_GUARDED_BY(mu_);
  // Percentile histograms, allocated at the first call: a oneshot timeout is
  // nearly always cancelled before it fires, and a timer that never runs
  // should not pay for them.
  struct Histograms {
    LatencyHistogram lateness;
    LatencyHistogram run_time;
  };
  std::unique_ptr<Histograms> histograms_ ABSL_GUARDED_BY(mu_);
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_CORE_H_
