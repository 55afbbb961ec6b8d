// Clock: the one way scheduling code in this project learns the time and
// waits for it.
//
// Why an interface: timers must be testable without sleeping and drivable by a
// simulator. Production code uses SteadyClock (CLOCK_MONOTONIC, immune to
// wall-clock changes); tests and simulations use SimulatedClock, which moves
// only when told to. Nothing in timer/, scheduler/ or cyber/time reads the
// wall clock.
//
// Threads: every method may be called from any thread, concurrently.

#ifndef CYBER_TIME_CLOCK_H_
#define CYBER_TIME_CLOCK_H_

#include <chrono>
#include <optional>

#include "absl/time/time.h"
#include "cyber/time/instant.h"
#include "cyber/time/wakeup_event.h"

namespace cyber {

class Clock {
 public:
  virtual ~Clock() = default;

  // The current instant. Never decreases.
  virtual Instant Now() const = 0;

  // Blocks until Now() >= deadline. Never returns before the deadline.
  virtual void SleepUntil(Instant deadline) = 0;

  // Blocks until Now() >= deadline (returns kDeadline) or `wakeup` is
  // notified (returns kNotified), whichever happens first. `deadline` may be
  // Instant::InfiniteFuture() to wait for the notification alone.
  virtual WakeReason WaitUntil(Instant deadline, WakeupEvent* wakeup) = 0;

  void SleepFor(absl::Duration d) { SleepUntil(Now() + d); }

  // `t` on std::chrono::steady_clock, if this clock's instants are real
  // CLOCK_MONOTONIC time (SteadyClock); nullopt otherwise (a simulated
  // clock's instants say nothing about real time). What a timer system on
  // this clock may tell others about real time (Dispatcher::ExpectWork).
  virtual std::optional<std::chrono::steady_clock::time_point> ToSteadyTime(
      Instant /*t*/) const {
    return std::nullopt;
  }
};

}  // namespace cyber

#endif  // CYBER_TIME_CLOCK_H_
