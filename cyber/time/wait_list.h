// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// WaitList: "wait until that finishes" for code that may run on a plain
// thread or inside a stackful coroutine, without knowing which.
//
// Why: a synchronous stop (Timer::Stop, Reader::Shutdown) waits for a
// callback in flight. A thread may block on a condition variable, but a
// coroutine must not: blocking its processor thread can starve the very
// callback it waits for (one processor, a suspended callback), and yielding
// in a loop spins forever when the waiter has the higher priority (the
// policy keeps picking it). So a coroutine *parks*: it leaves its processor
// and is queued again only when woken. This file is the seam between the
// layers: the coroutine runtime (scheduler/) implements Parkable and says
// which coroutine runs on the current thread; the code that waits (timer/,
// transport/) uses WaitList and never names the scheduler.
//
// Usage, with `mu_` the mutex that guards the condition:
//
//   MutexLock lock(&mu_);
//   while (callback_running_) waiters_.Wait(&mu_);   // the waiter
//   ...
//   MutexLock lock(&mu_);
//   callback_running_ = false;
//   waiters_.WakeAll();                               // the finisher
//
// `mu_` may be any lock with Lock() and Unlock() (cyber::Mutex,
// cyber::AdaptiveMutex): a thread waiter sleeps on a futex word of its own,
// not on a condition variable tied to one mutex type.
//
// Wait() may return spuriously only in the sense that the condition must be
// re-checked (as with any condition variable): WakeAll() wakes every waiter
// that called Wait() before it.
//
// Lock order: a WakeAll() caller holds its `mu` while it unparks coroutines,
// which takes the coroutine's own lock and its processor group's queue lock;
// so neither of those may be held while taking a WaitList's mutex (they are
// scheduler internals that never call out).
//
// Seeing that a thread waits (ScopedWaitReport): a thread may ask to have
// a flag of its own set while it waits here, so another thread learns the
// moment it waits for someone else, and the moment it is woken. A
// simulated graph stops components on a helper thread while its driving
// thread runs the graph's routines: a synchronous stop that waits here
// waits for a callback of the graph, and simulated time may then move on
// at once, with no guess on the wall clock.
//
// Threads: Wait and WakeAll under the caller's mutex, from any thread or
// coroutine.

#ifndef CYBER_TIME_WAIT_LIST_H_
#define CYBER_TIME_WAIT_LIST_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "cyber/common/futex.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"

namespace cyber {

// A coroutine, as waiting code sees it. Implemented by the coroutine runtime.
class Parkable {
 public:
  // Called by the coroutine itself: suspends it until Unpark() is called,
  // returning at once if an Unpark() came since the last Park() returned.
  // Not a cancellation point: a parked waiter keeps waiting while its
  // runtime shuts down (what it waits for finishes or unwinds first).
  virtual void Park() = 0;
  // Any thread: makes the coroutine's current or next Park() return.
  virtual void Unpark() = 0;
  // Called by the coroutine itself: suspends it until `deadline` on
  // `clock` (never earlier) and returns true, if its runtime keeps time on
  // that very clock; returns false at once otherwise (the caller then
  // blocks its thread instead). A cancellation point where the runtime has
  // them (it may throw the runtime's cancellation).
  virtual bool ParkUntil(Instant deadline, Clock* clock) {
    (void)deadline;
    (void)clock;
    return false;
  }
  // Names the coroutine in diagnostics (a Timer::Stop() that waits too long
  // names its caller); empty if it has none. Called from any thread while
  // the coroutine is parked.
  virtual std::string DebugName() const { return std::string(); }

 protected:
  ~Parkable() = default;
};

// The coroutine running on the calling thread, or null on a plain thread.
// Set by the coroutine runtime around every resume.
Parkable* CurrentCoroutine();
void SetCurrentCoroutine(Parkable* coroutine);

namespace coroutine_internal {
// The variable behind the two above, for the coroutine runtime's processor
// side only (CRoutine::Resume runs on its thread's own stack, never across
// a switch, so it may access it inline); see the note on
// CurrentCoroutine's definition.
inline thread_local Parkable* t_coroutine = nullptr;
}  // namespace coroutine_internal

// While it lives, every Wait() of the calling thread (not of a coroutine:
// one parks and leaves its thread free) sets `*waiting` to true before it
// sleeps, holding the waiters' mutex, and the WakeAll() that wakes it sets
// it to false before the wake, under the same mutex. So a reader that sees
// true knows the thread sleeps (or is about to) until a WakeAll of the
// list it waits on; false, that it runs (or waits elsewhere, unseen).
// Nests (the innermost reports). Destroy it on the thread that made it.
// REQUIRES: `waiting` outlives this object.
class ScopedWaitReport {
 public:
  explicit ScopedWaitReport(std::atomic<bool>* waiting);
  ~ScopedWaitReport();
  ScopedWaitReport(const ScopedWaitReport&) = delete;
  ScopedWaitReport& operator=(const ScopedWaitReport&) = delete;

 private:
  std::atomic<bool>* const previous_;
};

namespace wait_list_internal {
// The calling thread's ScopedWaitReport flag, or null.
std::atomic<bool>* CurrentWaitReport();
}  // namespace wait_list_internal

// Identifies the calling execution: the running coroutine (which keeps its
// identity when it moves between threads), else the calling thread. Lets a
// stop recognise a call from the very callback it would wait for.
const void* CurrentExecutionId();

class WaitList {
 public:
  WaitList() = default;
  WaitList(const WaitList&) = delete;
  WaitList& operator=(const WaitList&) = delete;

  // REQUIRES: `mu` held. Releases it, parks the calling coroutine (or blocks
  // the calling thread) until a WakeAll() under `mu`, re-acquires it.
  template <typename Lock>
  void Wait(Lock* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Node node;
    node.coroutine = CurrentCoroutine();
    if (node.coroutine == nullptr) node.report = wait_list_internal::CurrentWaitReport();
    node.next = head_;
    head_ = &node;
    // The analysis cannot follow the release and re-acquisition around the
    // sleep; the lock is held again whenever the loop tests.
    while (node.woken.load(std::memory_order_acquire) == 0) {
      if (node.report != nullptr) node.report->store(true, std::memory_order_release);
      Release(mu);
      if (node.coroutine != nullptr) {
        node.coroutine->Park();  // returns at once if already unparked
      } else {
        FutexWait(&node.woken, 0);  // returns at once if already woken
      }
      Reacquire(mu);
    }
  }
  // REQUIRES: the `mu` the waiters passed is held.
  void WakeAll();
  bool empty() const { return head_ == nullptr; }

 private:
  // Lives on the waiter's stack; linked while it waits. Valid until the
  // waiter re-acquires the mutex after being woken, so WakeAll (which holds
  // it) may touch it freely, the futex wake included.
  struct Node {
    Node* next = nullptr;
    std::atomic<uint32_t> woken{0};
    Parkable* coroutine = nullptr;
    std::atomic<bool>* report = nullptr;  // a thread waiter's ScopedWaitReport
  };
  template <typename Lock>
  static void Release(Lock* mu) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    mu->Unlock();
  }
  template <typename Lock>
  static void Reacquire(Lock* mu) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    mu->Lock();
  }

  Node* head_ = nullptr;  // guarded by the waiters' mutex
};

}  // namespace cyber

#endif  // CYBER_TIME_WAIT_LIST_H_
