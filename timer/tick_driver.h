// TickDriver: the tick thread. A thin driver that advances a TimingWheel by
// measured time on a Clock and hands each due timer its expiry.
//
// Why a separate class: the wheel stays a pure data structure (testable with
// no threads); this is the only place that sleeps. It is tickless: it sleeps
// until the wheel's next event (an expiry or a cascade), blocks indefinitely
// on an empty wheel, and is woken when an arm makes the next event earlier.
// It sleeps on absolute deadlines of its Clock (CLOCK_MONOTONIC for
// SteadyClock), and on each wake advances the wheel to the tick the clock
// *measures*: a late wake processes every skipped tick in order, none lost.
// With a SimulatedClock the whole timer system runs deterministically, in
// simulated time.
//
// What is armed here is an ExpiryTarget (timer/timer_system.h): a
// WheelEntry owned by a std::shared_ptr. On expiry the driver takes a
// reference (under the wheel's lock, where the target is guaranteed alive
// because it is armed), releases the lock, and calls
// target->OnExpired(arm_seq) on the tick thread. The target decides what to
// do, typically hand a callback to the Dispatcher; OnExpired must be quick
// (it delays every other timer) and may arm/cancel. The expiries of one
// pass are one batch of the dispatcher (Dispatcher::BeginBatch): what they
// dispatch is handed over together when the pass ends.
//
// The wheel and what timers need of it live in a TimerSystem that timers
// hold by shared_ptr (system()), so timers and their queued runs may
// outlive this driver: Shutdown() (or the destructor) closes the front end,
// and from then on timers get FailedPrecondition instead of a dangling
// pointer.
//
// Threads: Arm/Cancel/stats from any thread, including from OnExpired.
// Shutdown() stops and joins the thread; it must not be called from it.
// REQUIRES: `clock` and `dispatcher` outlive the driver.

#ifndef TIMER_TICK_DRIVER_H_
#define TIMER_TICK_DRIVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"
#include "cyber/time/wakeup_event.h"
#include "timer/dispatcher.h"
#include "timer/timing_wheel.h"
#include "timer/timer_system.h"

namespace cyber {
namespace timer {

class TickDriver {
 public:
  struct Options {
    absl::Duration tick = kTimerResolution;
    std::string name = "timer-tick";  // thread name (<= 15 chars kept)
    // false: no tick thread; the owner advances the driver with Step()
    // (SimulatedTimerSystem: a whole timer system with no thread at all).
    bool run_thread = true;
  };
  struct Stats {
    uint64_t wakeups = 0;  // returns from the tick thread's sleep
    uint64_t expired = 0;  // targets handed OnExpired
  };

  // Starts the tick thread. The wheel's epoch is clock->Now().
  // `dispatcher` is where timers driven by this driver run their callbacks.
  TickDriver(Clock* clock, Dispatcher* dispatcher, Options options);
  TickDriver(Clock* clock, Dispatcher* dispatcher)
      : TickDriver(clock, dispatcher, Options()) {}
  TickDriver(const TickDriver&) = delete;
  TickDriver& operator=(const TickDriver&) = delete;
  ~TickDriver();

  // Arms `target` for the first tick at or after `deadline` (re-arms if
  // armed), waking the thread if that is earlier than its planned wake.
  // Errors: FailedPrecondition after Shutdown(); OutOfRange beyond the
  // wheel's maximum delay, counted from the clock's present (a deadline at
  // most wheel().max_delay() after clock()->Now() is always accepted, also
  // after the idle wheel has not advanced for a long time).
  absl::StatusOr<TimingWheel::ArmResult> Arm(ExpiryTarget* target,
                                             Instant deadline) {
    return front_->Arm(target, deadline);
  }
  bool Cancel(ExpiryTarget* target) { return front_->Cancel(target); }

  // Thread-free driving (Options::run_thread false): expires, in tick order,
  // everything due at `now` (OnExpired on the calling thread), and returns
  // the instant the next event is due (InfiniteFuture if none). The tick
  // thread runs exactly this, then sleeps until the instant it returned.
  // REQUIRES: no tick thread; one caller at a time.
  Instant Step(Instant now);

  // Stops the tick thread (idempotent). Armed targets stay armed but will not
  // expire; their owners still cancel them.
  void Shutdown();
  bool is_shut_down() const { return front_->closed(); }

  // For simulations and tests: blocks until the tick thread has handled
  // everything due at the clock's current time (including what it handed to
  // an inline dispatcher) and sleeps until a later instant. With a
  // SimulatedClock, advancing time only after this makes every expiry happen
  // at exactly its tick's instant. The tick thread records its sleeps only
  // once somebody has called this (the first call wakes it once to start),
  // so a production loop takes no lock of its own. Without a thread: returns
  // at once.
  void AwaitIdle() const;
  // The instant the tick thread sleeps until, or the last Step() returned
  // (InfiniteFuture if none); with a thread only meaningful after
  // AwaitIdle().
  Instant PlannedWake() const;

  Clock* clock() const { return front_->clock(); }
  Dispatcher* dispatcher() const { return front_->dispatcher(); }
  const TimingWheel& wheel() const { return front_->wheel(); }
  absl::Duration tick() const { return front_->tick(); }
  absl::Duration max_delay() const { return front_->max_delay(); }
  // What timers on this driver hold (see the header comment).
  const std::shared_ptr<TimerSystem>& system() const { return front_; }
  Stats stats() const;

 private:
  struct Due {
    std::shared_ptr<ExpiryTarget> target;
    uint32_t arm_seq;
  };
  void Loop();
  Instant StepWith(Instant now, std::vector<Due>* due);

  const Options options_;
  const std::shared_ptr<TimerSystem> front_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> wakeups_{0};
  std::atomic<uint64_t> expired_{0};
  Mutex shutdown_mu_;  // serializes Shutdown()
  // Set by the first AwaitIdle(): the loop then records its sleeps.
  mutable std::atomic<bool> track_idle_{false};
  std::vector<Due> step_due_;  // Step()'s, reused
  // Whether the tick thread is in its sleep, and until when (see AwaitIdle).
  mutable Mutex idle_mu_;
  mutable CondVar idle_changed_;
  bool sleeping_ ABSL_GUARDED_BY(idle_mu_) = false;
  Instant sleeping_until_ ABSL_GUARDED_BY(idle_mu_);
  // How many of the front end's wake requests the current plan includes.
  uint64_t planned_requests_ ABSL_GUARDED_BY(idle_mu_) = 0;
  std::thread thread_;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TICK_DRIVER_H_
