#include "timer/tick_driver.h"

#include <pthread.h>

#include <vector>

#include "absl/status/status.h"
#include "cyber/common/log.h"

namespace cyber {
namespace timer {

TickDriver::TickDriver(Clock* clock, Dispatcher* dispatcher, Options options)
    : clock_(clock),
      dispatcher_(dispatcher),
      options_(std::move(options)),
      wheel_(clock->Now(), options_.tick) {
  ACHECK(dispatcher_ != nullptr) << "TickDriver: dispatcher is null";
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), options_.name.substr(0, 15).c_str());
    Loop();
  });
}

TickDriver::~TickDriver() { Shutdown(); }

void TickDriver::Shutdown() {
  MutexLock lock(&shutdown_mu_);
  if (shut_down_.load()) return;
  stopping_.store(true);
  wakeup_.Notify();
  thread_.join();
  shut_down_.store(true);
  MutexLock idle(&idle_mu_);
  idle_changed_.SignalAll();
}

absl::StatusOr<TimingWheel::ArmResult> TickDriver::Arm(ExpiryTarget* target,
                                                       Instant deadline) {
  if (stopping_.load()) {
    return absl::FailedPreconditionError(
        "TickDriver \"" + options_.name + "\": shut down, cannot arm");
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
    result = wheel_.Arm(target, expires, wheel_.DeadlineToTick(clock_->Now()));
  }
  if (result.ok() && result->wake_needed) {
    {
      MutexLock lock(&idle_mu_);
      ++wake_requests_;  // after the wheel arm: a plan counting it includes it
    }
    wakeup_.Notify();
  }
  return result;
}

bool TickDriver::Cancel(ExpiryTarget* target) { return wheel_.Cancel(target); }

void TickDriver::AwaitIdle() const {
  MutexLock lock(&idle_mu_);
  // Idle: asleep, on a plan that includes every arm that asked for a wake,
  // until a time that has not come yet.
  while (!shut_down_.load() &&
         (!sleeping_ || planned_requests_ != wake_requests_ ||
          sleeping_until_ <= clock_->Now())) {
    // Each of these states ends with the tick thread going back to sleep,
    // which signals: a due deadline or a notification makes its wait return
    // at once.
    idle_changed_.Wait(&idle_mu_);
  }
}

Instant TickDriver::PlannedWake() const {
  MutexLock lock(&idle_mu_);
  return sleeping_until_;
}

TickDriver::Stats TickDriver::stats() const {
  Stats s;
  s.wakeups = wakeups_.load(std::memory_order_relaxed);
  s.expired = expired_.load(std::memory_order_relaxed);
  return s;
}

void TickDriver::Loop() {
  struct Due {
    std::shared_ptr<ExpiryTarget> target;
    uint32_t arm_seq;
  };
  std::vector<Due> due;  // reused: no allocation once it has grown
  while (!stopping_.load()) {
    // Advance by measured time: every tick whose instant has passed.
    const Tick current = wheel_.InstantToTick(clock_->Now());
    wheel_.AdvanceTo(current, [&due](WheelEntry* e) {
      // Armed implies alive: its owner cancels before releasing it, and that
      // cancel needs the lock we are under.
      due.push_back({static_cast<ExpiryTarget*>(e)->shared_from_this(),
                     e->arm_seq()});
    });
    for (Due& d : due) d.target->OnExpired(d.arm_seq);
    expired_.fetch_add(due.size(), std::memory_order_relaxed);
    due.clear();
    // Tickless: sleep until the next expiry or cascade, forever if none. An
    // Arm() that beats this plan notifies wakeup_ (sticky, so even one that
    // lands before the wait begins is not lost).
    uint64_t requests_seen;
    {
      MutexLock lock(&idle_mu_);
      requests_seen = wake_requests_;
    }
    const Instant wake = wheel_.TickToInstant(wheel_.PlanWake());
    {
      MutexLock lock(&idle_mu_);
      sleeping_ = true;
      sleeping_until_ = wake;
      planned_requests_ = requests_seen;
      idle_changed_.SignalAll();
    }
    clock_->WaitUntil(wake, &wakeup_);
    {
      MutexLock lock(&idle_mu_);
      sleeping_ = false;
    }
    wakeups_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace timer
}  // namespace cyber
