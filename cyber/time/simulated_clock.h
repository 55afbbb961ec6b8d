// SimulatedClock: a Clock whose time moves only when told to.
//
// Why: timer tests must be deterministic and fast, and a robot simulator must
// be able to drive a whole timer system at its own pace. Time starts at a
// given instant and changes only through Advance()/AdvanceTo().
//
// Wake-up contract: a thread sleeping until T stays asleep while Now() < T and
// is released when an advance makes Now() >= T. Advance()/AdvanceTo() return
// only after every thread whose deadline has been reached has left its wait,
// so when it returns, each of them is runnable and sees the new time (what it
// does next is up to it). Threads whose deadline is still ahead are not woken.
//
// Threads: all methods are thread-safe. Advances from several threads are
// serialized; time never moves backwards.
//
//   SimulatedClock clock;
//   std::thread t([&] { clock.SleepUntil(Instant() + absl::Seconds(1)); });
//   clock.AwaitSleepers(1);           // t is parked
//   clock.Advance(absl::Seconds(1));  // t is released
//   t.join();

#ifndef CYBER_TIME_SIMULATED_CLOCK_H_
#define CYBER_TIME_SIMULATED_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"

namespace cyber {

class SimulatedClock final : public Clock {
 public:
  explicit SimulatedClock(Instant start = Instant());
  ~SimulatedClock() override;

  Instant Now() const override;
  void SleepUntil(Instant deadline) override;
  WakeReason WaitUntil(Instant deadline, WakeupEvent* wakeup) override;

  // Moves time forward by `d` and releases the sleepers that became due.
  // REQUIRES: d >= 0 and finite.
  void Advance(absl::Duration d);
  // Moves time to `t` (no-op when t == Now()).
  // REQUIRES: t >= Now() and finite: simulated time never goes backwards.
  void AdvanceTo(Instant t);

  // Threads currently blocked in SleepUntil()/WaitUntil().
  int NumSleepers() const;
  // Blocks (on real time) until at least `n` threads are blocked on this
  // clock. Lets a test know a thread is parked before it advances time.
  void AwaitSleepers(int n) const;
  // The earliest deadline any blocked thread waits for, or InfiniteFuture().
  Instant NextSleeperDeadline() const;

 private:
  struct Sleeper {
    Instant deadline;
    WakeupEvent* wakeup;
  };

  int64_t NowNanos() const { return now_ns_.load(std::memory_order_acquire); }
  void AddSleeper(Sleeper* s);
  void RemoveSleeper(Sleeper* s);
  void AdvanceToLocked(Instant t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Written under mu_, read lock-free by sleepers (under their event's lock).
  std::atomic<int64_t> now_ns_;

  // Lock order: mu_ before any WakeupEvent's lock, never the reverse.
  mutable Mutex mu_;
  mutable CondVar sleepers_changed_;
  std::vector<Sleeper*> sleepers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cyber

#endif  // CYBER_TIME_SIMULATED_CLOCK_H_
