#include "cyber/time/simulated_clock.h"

#include <algorithm>

#include "cyber/common/log.h"

namespace cyber {

namespace {

// Simulated time is kept in integer nanoseconds so it can live in an atomic.
int64_t ToNanos(Instant t) { return absl::ToInt64Nanoseconds(t.SinceEpoch()); }
Instant FromNanos(int64_t ns) { return Instant::FromEpoch(absl::Nanoseconds(ns)); }

}  // namespace

SimulatedClock::SimulatedClock(Instant start) : now_ns_(ToNanos(start)) {
  ACHECK(!start.IsInfiniteFuture()) << "simulated clock start must be finite";
}

SimulatedClock::~SimulatedClock() {
  MutexLock lock(&mu_);
  ACHECK(sleepers_.empty())
      << "SimulatedClock destroyed while " << sleepers_.size()
      << " thread(s) still sleep on it";
}

Instant SimulatedClock::Now() const { return FromNanos(NowNanos()); }

void SimulatedClock::SleepUntil(Instant deadline) {
  WakeupEvent never_notified;
  WaitUntil(deadline, &never_notified);
}

WakeReason SimulatedClock::WaitUntil(Instant deadline, WakeupEvent* wakeup) {
  // Deadlines beyond int64 nanoseconds saturate; they are never reached by a
  // finite advance, which is what "infinite" means here.
  const int64_t deadline_ns =
      deadline.IsInfiniteFuture() ? INT64_MAX : ToNanos(deadline);
  Sleeper self{deadline, wakeup};
  AddSleeper(&self);
  const WakeReason reason = wakeup->Block(
      [this, deadline_ns] { return NowNanos() >= deadline_ns; }, nullptr);
  RemoveSleeper(&self);
  return reason;
}

void SimulatedClock::AddSleeper(Sleeper* s) {
  MutexLock lock(&mu_);
  sleepers_.push_back(s);
  sleepers_changed_.SignalAll();
}

void SimulatedClock::RemoveSleeper(Sleeper* s) {
  MutexLock lock(&mu_);
  sleepers_.erase(std::find(sleepers_.begin(), sleepers_.end(), s));
  sleepers_changed_.SignalAll();
}

void SimulatedClock::Advance(absl::Duration d) {
  ACHECK(d >= absl::ZeroDuration() && d < absl::InfiniteDuration())
      << "SimulatedClock::Advance: duration " << d
      << " must be finite and not negative";
  MutexLock lock(&mu_);
  // Under mu_ so that concurrent advances compose.
  AdvanceToLocked(Now() + d);
}

void SimulatedClock::AdvanceTo(Instant t) {
  MutexLock lock(&mu_);
  AdvanceToLocked(t);
}

void SimulatedClock::AdvanceToLocked(Instant t) {
  ACHECK(!t.IsInfiniteFuture()) << "SimulatedClock::AdvanceTo: infinite time";
  const int64_t target = ToNanos(t);
  ACHECK(target >= NowNanos()) << "SimulatedClock::AdvanceTo(" << t
                               << ") is before Now() = " << Now()
                               << ": simulated time never goes backwards";
  now_ns_.store(target, std::memory_order_release);
  // Release every sleeper that is now due. A sleeper registered before this
  // point is in sleepers_; one registering later reads the new time first.
  for (Sleeper* s : sleepers_) {
    if (s->deadline <= t) s->wakeup->Poke();
  }
  // Return only when every due sleeper has left its wait.
  auto any_due = [this, t]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return std::any_of(sleepers_.begin(), sleepers_.end(),
                       [t](const Sleeper* s) { return s->deadline <= t; });
  };
  while (any_due()) sleepers_changed_.Wait(&mu_);
}

int SimulatedClock::NumSleepers() const {
  MutexLock lock(&mu_);
  return static_cast<int>(sleepers_.size());
}

void SimulatedClock::AwaitSleepers(int n) const {
  MutexLock lock(&mu_);
  while (static_cast<int>(sleepers_.size()) < n) sleepers_changed_.Wait(&mu_);
}

Instant SimulatedClock::NextSleeperDeadline() const {
  MutexLock lock(&mu_);
  Instant next = Instant::InfiniteFuture();
  for (const Sleeper* s : sleepers_) next = std::min(next, s->deadline);
  return next;
}

}  // namespace cyber

