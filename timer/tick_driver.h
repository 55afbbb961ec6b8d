// TickDriver: owns a timer system (timer/timer_system.h: the wheel, its tick
// thread or thread-free Step(), all tick arithmetic) and shuts it down when
// destroyed. What a program, a test or a runtime makes to have timers on a
// clock of its choice:
//
//   cyber::SimulatedClock clock(start);
//   cyber::timer::InlineDispatcher inline_dispatcher;
//   cyber::timer::TickDriver driver(&clock, &inline_dispatcher);
//   cyber::Timer t(options, &driver);   // runs on `clock`
//
// Why a handle apart from the system: timers (and their calls queued in a
// dispatcher) hold the TimerSystem by shared_ptr and may outlive the owner;
// the owner decides when the tick thread stops (Shutdown() or the
// destructor), after which every arm is refused with FailedPrecondition
// instead of touching a dead clock or dispatcher.
//
// Threads: Arm/Cancel/stats from any thread, including from an expiry.
// Shutdown() stops and joins the tick thread; it must not be called from it.
// REQUIRES: `clock` and `dispatcher` outlive the driver's Shutdown().

#ifndef TIMER_TICK_DRIVER_H_
#define TIMER_TICK_DRIVER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/time/clock.h"
#include "timer/dispatcher.h"
#include "timer/timer_system.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace timer {

class TickDriver {
 public:
  using Options = TimerSystem::Options;
  using Stats = TimerSystem::Stats;

  // Makes the system (its wheel's epoch is clock->Now()) and starts its
  // tick thread (unless options.run_thread is false). `dispatcher` is where
  // timers on this system run their callbacks.
  TickDriver(Clock* clock, Dispatcher* dispatcher, Options options)
      : system_(std::make_shared<TimerSystem>(clock, dispatcher, std::move(options))) {
    system_->Start();
  }
  TickDriver(Clock* clock, Dispatcher* dispatcher)
      : TickDriver(clock, dispatcher, Options()) {}
  TickDriver(const TickDriver&) = delete;
  TickDriver& operator=(const TickDriver&) = delete;
  ~TickDriver() { Shutdown(); }

  // See TimerSystem.
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

  Clock* clock() const { return system_->clock(); }
  Dispatcher* dispatcher() const { return system_->dispatcher(); }
  const TimingWheel& wheel() const { return system_->wheel(); }
  absl::Duration tick() const { return system_->tick(); }
  absl::Duration max_delay() const { return system_->max_delay(); }
  // What timers on this driver hold (see the header comment).
  const std::shared_ptr<TimerSystem>& system() const { return system_; }

 private:
  const std::shared_ptr<TimerSystem> system_;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TICK_DRIVER_H_
