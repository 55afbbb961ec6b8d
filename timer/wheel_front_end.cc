#include "timer/timer_system.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/status/status.h"

namespace cyber {
namespace timer {

TimerSystem::TimerSystem(std::string name, Clock* clock,
                             Dispatcher* dispatcher, absl::Duration tick)
    : name_(std::move(name)),
      clock_(clock),
      dispatcher_(dispatcher),
      wheel_(clock->Now(), tick) {}

absl::StatusOr<TimingWheel::ArmResult> TimerSystem::Arm(ExpiryTarget* target,
                                                          Instant deadline) {
  if (closed()) {
    return absl::FailedPreconditionError(
        "timer system \"" + name_ + "\": shut down, cannot arm");
  }
  const Tick expires = wheel_.DeadlineToTick(deadline);
  auto result = wheel_.Arm(target, expires);
  if (!result.ok() && result.status().code() == absl::StatusCode::kOutOfRange &&
      expires != kNoTick) {
    // The wheel measures the maximum delay from its last processed tick,
    // which lags the clock while the wheel is idle. Measure it from the
    // present instead (rounded up, so that a delay of exactly the maximum
    // from an instant between ticks fits). Only on this rare path is the
    // clock read.
    Instant now;
    if (!TryNow(&now)) {
      return absl::FailedPreconditionError(
          "timer system \"" + name_ + "\": shut down, cannot arm");
    }
    result = wheel_.Arm(target, expires, wheel_.DeadlineToTick(now));
  }
  if (result.ok() && result->wake_needed) {
    // After the wheel arm: a plan that counts this request includes it.
    RequestWake();
  }
  return result;
}

bool TimerSystem::TryNow(Instant* now) const {
  // Dekker-style with Close(): either Close() sees this reader and waits for
  // it, or this reader sees closed_ and does not touch the clock.
  clock_readers_.fetch_add(1, std::memory_order_seq_cst);
  if (closed_.load(std::memory_order_seq_cst)) {
    clock_readers_.fetch_sub(1, std::memory_order_release);
    return false;
  }
  *now = clock_->Now();
  clock_readers_.fetch_sub(1, std::memory_order_release);
  return true;
}

Tick TimerSystem::EarliestTick(Instant t) const {
  return std::max(wheel_.DeadlineToTick(t), wheel_.now() + 1);
}

void TimerSystem::Close() {
  closed_.store(true, std::memory_order_seq_cst);
  // Clock reads take nanoseconds (a simulated clock's, a lock): wait them out.
  while (clock_readers_.load(std::memory_order_seq_cst) != 0) {
    std::this_thread::yield();
  }
}

}  // namespace timer
}  // namespace cyber
