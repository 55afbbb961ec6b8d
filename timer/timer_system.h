// TimerSystem: the timer system users hold — a timing wheel on a clock of
// their choice, its tick thread (or a thread-free Step()) and where the
// timers' callbacks run. It owns its core (timer/timer_system_core.h: the
// wheel, the tick arithmetic) and shuts it down when destroyed. What a
// program, a test or a runtime makes to have timers on a clock of its
// choice (a runtime's is Runtime::timers()):
//
//   cyber::SimulatedClock clock(start);
//   cyber::timer::InlineDispatcher inline_dispatcher;
//   cyber::timer::TimerSystem timers(&clock, &inline_dispatcher);
//   cyber::Timer t(options, &timers);   // runs on `clock`
//
// (timer/tick_driver.h also names it TickDriver.)
//
// Why a handle apart from the core: timers (and their calls queued in a
// dispatcher) hold the TimerSystemCore by shared_ptr and may outlive it;
// the owner decides when the tick thread stops (Shutdown() or the
// destructor), after which every arm is refused with FailedPrecondition
// instead of touching a dead clock or dispatcher.
//
// Threads: Arm/Cancel/stats from any thread, including from an expiry.
// Shutdown() stops and joins the tick thread; it must not be called from it.
// REQUIRES: `clock` and `dispatcher` outlive the system's Shutdown().

#ifndef TIMER_TIMER_SYSTEM_H_
#define TIMER_TIMER_SYSTEM_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/time/clock.h"
#include "timer/dispatcher.h"
#include "timer/timer_system_core.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace timer {

class TimerSystem {
 public:
  using Options = TimerSystemCore::Options;
  using Stats = TimerSystemCore::Stats;

  // Makes the system (its wheel's epoch is clock->Now()) and starts its
  // tick thread (unless options.run_thread is false). `dispatcher` is where
  // timers on this system run their callbacks.
  TimerSystem(Clock* clock, Dispatcher* dispatcher, Options options)
      : system_(std::make_shared<TimerSystemCore>(clock, dispatcher, std::move(options))) {
    system_->Start();
  }
  TimerSystem(Clock* clock, Dispatcher* dispatcher)
      : TimerSystem(clock, dispatcher, Options()) {}
  TimerSystem(const TimerSystem&) = delete;
  TimerSystem& operator=(const TimerSystem&) = delete;
  ~TimerSystem() { Shutdown(); }

  // See TimerSystemCore.
  absl::StatusOr<TimingWheel::ArmResult> Arm(ExpiryTarget* target,
                                             Instant deadline) {
    return system_->Arm(target, deadline);
  }
  bool Cancel(ExpiryTarget* target) { return system_->Cancel(target); }
  Instant Step(Instant now) { return system_->Step(now); }
  void Shutdown() { system_->Shutdown(); }
  bool is_shut_down() const { return system_->closed(); }
  void AwaitIdle() const { system_->AwaitIdle(); }
  Instant PlannedWake() const { return system_->PlannedWake(); }
  Stats stats() const { return system_->stats(); }

  // --- Pending user timers (docs/timer.md, "Queries and outcomes").
  //
  // The Timers on this driver whose schedule is on: armed or queued, or a
  // periodic timer between or during its calls (Netty's pendingTimeouts()).
  // The scheduler's sleeps, which arm wheel entries too, are not counted
  // (wheel().size() counts those). A snapshot: other threads may start and
  // stop timers meanwhile.
  size_t PendingTimers() const { return system_->pending_timers(); }
  // At most `cap` pending timers (Netty's maxPendingTimeouts; 0: no cap,
  // the default; also Options::max_pending_timers): a Schedule()/Start()/
  // Reset() of a timer that is not pending, which would exceed it, fails
  // with ResourceExhausted naming the timer, the system and the cap (and
  // is logged once per 100 refusals). Lowering the cap below the count
  // stops nothing. Any thread.
  void set_max_pending_timers(size_t cap) {
    system_->set_max_pending_timers(cap);
  }
  size_t max_pending_timers() const { return system_->max_pending_timers(); }
  // Cancels every pending Timer of this driver, each as Timer::Cancel()
  // (its on_cancel runs, on this thread; a running periodic call is
  // waited for, as by Stop()), and returns how many calls that prevented
  // (folly's HHWheelTimer::cancelAll(), Netty's stop() returning the
  // unprocessed timeouts). The timers are not destroyed and may be started
  // again. Timers started while it runs (from other threads or from
  // callbacks) may or may not be cancelled: it walks the timers stripe by
  // stripe, one lock at a time, never holding a lock while it cancels.
  // It visits every live Timer of the process (pending or not, on any
  // system; one cache line read each, each stripe's lock held while its
  // own are visited): meant for shutdown and resets, not a hot path.
  // Like Stop(), not from a callback whose timer another callback is
  // stopping, nor holding a lock a callback needs.
  size_t CancelAll() { return system_->CancelAllTimers(); }
  // Shutdown(), then cancels every Timer whose schedule was on here as
  // CancelAll() does (each runs its on_cancel, on this thread; each then
  // reports phase() kCancelled and its Cancel() false), and returns their
  // names (Netty's HashedWheelTimer.stop(), which returns the unprocessed
  // timeouts). A running periodic call is waited for, as by Stop(). After
  // a plain Shutdown() no on_cancel runs: the schedules simply end.
  // Not from a callback of a timer on this system, nor the tick thread.
  std::vector<std::string> ShutdownAndCancelAll() {
    system_->Shutdown();
    std::vector<std::string> cancelled;
    system_->CancelAllTimers(&cancelled);
    return cancelled;
  }

  // The delay of oneshots whose options set use_default_timeout (folly's
  // HHWheelTimer::setDefaultTimeout; Options::default_timeout at
  // construction); read by each Schedule()/Reset() of such a timer, so a
  // change applies from the next one. Any thread.
  void set_default_timeout(absl::Duration delay) {
    system_->set_default_timeout(delay);
  }
  std::optional<absl::Duration> default_timeout() const {
    return system_->default_timeout();
  }

  Clock* clock() const { return system_->clock(); }
  Dispatcher* dispatcher() const { return system_->dispatcher(); }
  const TimingWheel& wheel() const { return system_->wheel(); }
  absl::Duration tick() const { return system_->tick(); }
  absl::Duration max_delay() const { return system_->max_delay(); }
  // What timers on this driver hold (see the header comment).
  const std::shared_ptr<TimerSystemCore>& system() const { return system_; }

 private:
  const std::shared_ptr<TimerSystemCore> system_;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_SYSTEM_H_
