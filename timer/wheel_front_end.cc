#include "timer/wheel_front_end.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/status/status.h"

namespace cyber {
namespace timer {

WheelFrontEnd::WheelFrontEnd(std::string name, Clock* clock,
                             Dispatcher* dispatcher, absl::Duration tick)
    : name_(std::move(name)),
      clock_(clock),
      dispatcher_(dispatcher),
      wheel_(clock->Now(), tick),
      announces_(clock->ToSteadyTime(Instant()).has_value()) {}

absl::StatusOr<TimingWheel::ArmResult> WheelFrontEnd::Arm(ExpiryTarget* target,
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
  } else if (result.ok() && result->plan_later) {
    AnnouncePlan();  // a re-arm away from the plan: no wake-up needed
  }
  return result;
}

void WheelFrontEnd::AnnouncePlan() {
  if (!announces_) return;
  MutexLock lock(&announce_mu_);
  if (closed()) return;  // the dispatcher and clock may be gone
  // Read under announce_mu_: whoever announces last tells the latest plan.
  const Tick plan = wheel_.planned_wake();
  if (plan == announced_) return;
  announced_ = plan;
  dispatcher_->ExpectWork(plan == kNoTick
                              ? std::nullopt
                              : clock_->ToSteadyTime(wheel_.TickToInstant(plan)));
}

bool WheelFrontEnd::TryNow(Instant* now) const {
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

Tick WheelFrontEnd::EarliestTick(Instant t) const {
  return std::max(wheel_.DeadlineToTick(t), wheel_.now() + 1);
}

void WheelFrontEnd::Close() {
  closed_.store(true, std::memory_order_seq_cst);
  // Clock reads take nanoseconds (a simulated clock's, a lock): wait them out.
  while (clock_readers_.load(std::memory_order_seq_cst) != 0) {
    std::this_thread::yield();
  }
  // An announcement in progress ends before this; later ones see closed_.
  // Nothing will expire from now on: say so.
  MutexLock lock(&announce_mu_);
  if (announced_ != kNoTick) {
    announced_ = kNoTick;
    dispatcher_->ExpectWork(std::nullopt);
  }
}

}  // namespace timer
}  // namespace cyber
