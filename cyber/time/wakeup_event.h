// WakeupEvent: lets one thread interrupt another thread's Clock::WaitUntil.
//
// Why it exists: a tick thread sleeps until its next deadline, but must wake
// early when an earlier timer is armed. The sleeping side is implemented by
// each Clock (a steady clock waits on CLOCK_MONOTONIC, a simulated clock waits
// for the simulation to advance), so the interrupt has to be a primitive both
// can block on. Notify() is sticky: a notification that arrives while nobody
// waits makes the next wait return at once, so no wake-up is ever lost.
//
// Threads: Notify() from any thread. At most one thread waits at a time.
// The event must outlive every wait on it.

#ifndef CYBER_TIME_WAKEUP_EVENT_H_
#define CYBER_TIME_WAKEUP_EVENT_H_

#include <chrono>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"

namespace cyber {

enum class WakeReason {
  kDeadline,  // the clock reached the deadline
  kNotified,  // WakeupEvent::Notify() was called
};

class WakeupEvent {
 public:
  WakeupEvent() = default;
  WakeupEvent(const WakeupEvent&) = delete;
  WakeupEvent& operator=(const WakeupEvent&) = delete;

  // Wakes the waiting thread, or makes its next wait return immediately.
  // Counted in the same critical section that makes it pending, so a waiter
  // that reads notifications() and later finds nothing pending knows every
  // notification up to that count was consumed before it looked.
  void Notify() {
    MutexLock lock(&mu_);
    ++notifications_;
    notified_ = true;
    cv_.SignalAll();
  }

  // Notify() calls so far.
  uint64_t notifications() const {
    MutexLock lock(&mu_);
    return notifications_;
  }

  // Whether a notification is waiting to be consumed by the next wait.
  bool pending() const {
    MutexLock lock(&mu_);
    return notified_;
  }

  // --- For Clock implementations ---------------------------------------

  // Blocks until `reached()` is true or Notify() was called. `reached` is
  // evaluated with the event's lock held, after every Poke(), and, when
  // `limit` is given, no later than `limit` on the steady clock. Returns
  // kDeadline if `reached()`, else kNotified. Either way a pending
  // notification is consumed: the caller re-examines its state after any
  // return, which covers whatever the notification announced.
  template <typename ReachedFn>
  WakeReason Block(ReachedFn reached,
                   const std::chrono::steady_clock::time_point* limit) {
    MutexLock lock(&mu_);
    while (true) {
      if (reached()) {
        notified_ = false;
        return WakeReason::kDeadline;
      }
      if (notified_) {
        notified_ = false;
        return WakeReason::kNotified;
      }
      if (limit != nullptr) {
        cv_.WaitUntil(&mu_, *limit);
      } else {
        cv_.Wait(&mu_);
      }
    }
  }

  // Makes a blocked waiter re-evaluate its `reached` predicate, without
  // counting as a notification. Used by clocks whose time moves by command.
  void Poke() {
    MutexLock lock(&mu_);
    cv_.SignalAll();
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t notifications_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cyber

#endif  // CYBER_TIME_WAKEUP_EVENT_H_
