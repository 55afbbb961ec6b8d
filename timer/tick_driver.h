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
// What is armed here is an ExpiryTarget: a WheelEntry owned by a
// std::shared_ptr. On expiry the driver takes a reference (under the wheel's
// lock, where the target is guaranteed alive because it is armed), releases
// the lock, and calls target->OnExpired(arm_seq) on the tick thread. The
// target decides what to do, typically hand a callback to the Dispatcher;
// OnExpired must be quick (it delays every other timer) and may arm/cancel.
//
// Threads: Arm/Cancel/stats from any thread, including from OnExpired.
// Shutdown() stops and joins the thread; it must not be called from it.
// REQUIRES: every target is cancelled before the driver is destroyed.

#ifndef TIMER_TICK_DRIVER_H_
#define TIMER_TICK_DRIVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"
#include "cyber/time/wakeup_event.h"
#include "timer/dispatcher.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace timer {

// Something the tick thread can expire. REQUIRES: owned by std::shared_ptr
// whenever it is armed.
class ExpiryTarget : public WheelEntry,
                     public std::enable_shared_from_this<ExpiryTarget> {
 public:
  // Called on the tick thread, without any lock held, for the arming whose
  // arm_seq() was `arm_seq` (a target re-armed since may see a stale one).
  virtual void OnExpired(uint32_t arm_seq) = 0;

 protected:
  virtual ~ExpiryTarget() = default;
};

class TickDriver {
 public:
  struct Options {
    absl::Duration tick = kTimerResolution;
    std::string name = "timer-tick";  // thread name (<= 15 chars kept)
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
                                             Instant deadline);
  bool Cancel(ExpiryTarget* target);

  // Stops the tick thread (idempotent). Armed targets stay armed but will not
  // expire; their owners still cancel them.
  void Shutdown();
  bool is_shut_down() const { return shut_down_.load(); }

  // For simulations and tests: blocks until the tick thread has handled
  // everything due at the clock's current time (including what it handed to
  // an inline dispatcher) and sleeps until a later instant. With a
  // SimulatedClock, advancing time only after this makes every expiry happen
  // at exactly its tick's instant (see timer/testing).
  void AwaitIdle() const;
  // The instant the tick thread sleeps until (InfiniteFuture if none); only
  // meaningful after AwaitIdle().
  Instant PlannedWake() const;

  Clock* clock() const { return clock_; }
  Dispatcher* dispatcher() const { return dispatcher_; }
  const TimingWheel& wheel() const { return wheel_; }
  absl::Duration tick() const { return wheel_.tick(); }
  Stats stats() const;

 private:
  void Loop();

  Clock* const clock_;
  Dispatcher* const dispatcher_;
  const Options options_;
  TimingWheel wheel_;
  WakeupEvent wakeup_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> shut_down_{false};
  std::atomic<uint64_t> wakeups_{0};
  std::atomic<uint64_t> expired_{0};
  Mutex shutdown_mu_;  // serializes Shutdown()
  // Whether the tick thread is in its sleep, and until when (see AwaitIdle).
  mutable Mutex idle_mu_;
  mutable CondVar idle_changed_;
  bool sleeping_ ABSL_GUARDED_BY(idle_mu_) = false;
  Instant sleeping_until_ ABSL_GUARDED_BY(idle_mu_);
  // Arms that needed a wake, and how many of them the current plan includes.
  uint64_t wake_requests_ ABSL_GUARDED_BY(idle_mu_) = 0;
  uint64_t planned_requests_ ABSL_GUARDED_BY(idle_mu_) = 0;
  std::thread thread_;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TICK_DRIVER_H_
