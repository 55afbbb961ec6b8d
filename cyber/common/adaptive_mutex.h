// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// AdaptiveMutex: a lock for critical sections of a few dozen nanoseconds
// taken millions of times a second (the timing wheel's Arm/Cancel/Advance).
// Uncontended it is one compare-and-swap to lock and one exchange to unlock,
// inline; contended it spins briefly (the holder is usually done within the
// spin), then sleeps on a futex, so a waiter never burns a processor for
// longer than the spin, whatever its scheduling policy.
//
// Why not std::mutex (cyber::Mutex): pthread_mutex_lock/unlock are out-of-line
// calls with their own type checks, ~2x the cost of the two atomic
// instructions here when uncontended (//timer:timing_wheel_benchmark, the
// 1e3 rows, where the lock is most of an arm); and glibc's default mutex
// sleeps at the first contention, which under two threads arming on one
// wheel costs a futex system call for holds of ~20 ns.
//
// Why the spin backs off: between two looks at the lock a waiter pauses
// 1, 2, 4 ... up to 16 times. Two threads that take the lock in turn
// millions of times a second otherwise pass the lock's cache line (and the
// data it guards) back and forth at every operation; with the back-off the
// holder often takes it again while its lines are still its own, and the
// waiter gets it a few operations later. Two threads arming and cancelling
// on one wheel went from 55-65 to ~20 ns per operation
// (//timer:timing_wheel_benchmark, ArmCancelOnSharedWheel/threads:2); the
// price is up to 16 pauses of latency when the lock comes free.
//
// Why the spin is bounded: with SCHED_FIFO threads a waiter spinning on the
// processor its lock holder needs would never let the holder finish. After
// kSpinPauses pauses (a few microseconds) the waiter sleeps in the kernel, and
// the holder runs. Holders must therefore keep their sections short and must
// never block or sleep while holding it (no user code under it).
//
// State: 0 unlocked, 1 locked with no sleeper, 2 locked with (possibly)
// sleepers. Unlock() wakes one sleeper only when the state was 2, so the
// uncontended path never makes a system call. (Drepper, "Futexes Are
// Tricky", mutex #3.)
//
// ThreadSanitizer sees the lock through its atomics (acquire on lock,
// release on unlock): the happens-before edges are the same as a mutex's.
// clang's -Wthread-safety checks ABSL_GUARDED_BY(mu) of an AdaptiveMutex as
// of any other capability.
//
// Threads: any; not recursive. Not for waiting on conditions (no CondVar):
// use cyber::Mutex where a condition variable is needed.

#ifndef CYBER_COMMON_ADAPTIVE_MUTEX_H_
#define CYBER_COMMON_ADAPTIVE_MUTEX_H_

#include <atomic>
#include <cstdint>

#include "absl/base/optimization.h"
#include "absl/base/thread_annotations.h"

namespace cyber {

class ABSL_LOCKABLE AdaptiveMutex {
 public:
  // How long a contended Lock() spins before it sleeps, in pauses (~10-40
  // ns each, between relaxed loads of the lock, backing off from 1 to
  // kMaxBackoff pauses per look): a few microseconds, longer than the
  // holds it is for, far shorter than a scheduler quantum.
  static constexpr int kSpinPauses = 256;
  static constexpr int kMaxBackoff = 16;

  AdaptiveMutex() = default;
  AdaptiveMutex(const AdaptiveMutex&) = delete;
  AdaptiveMutex& operator=(const AdaptiveMutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    uint32_t expected = kUnlocked;
    if (ABSL_PREDICT_TRUE(state_.compare_exchange_strong(
            expected, kLocked, std::memory_order_acquire,
            std::memory_order_relaxed))) {
      return;
    }
    LockSlow();
  }

  bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) {
    uint32_t expected = kUnlocked;
    return state_.compare_exchange_strong(expected, kLocked,
                                          std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }

  void Unlock() ABSL_UNLOCK_FUNCTION() {
    if (ABSL_PREDICT_FALSE(state_.exchange(kUnlocked,
                                           std::memory_order_release) ==
                           kLockedWithSleepers)) {
      WakeOne();
    }
  }

  // Documents (and tells the analysis) that the caller holds the lock.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

  // Times a Lock() went to sleep in the kernel, over the process's life
  // (all AdaptiveMutexes): for tests and benchmarks.
  static uint64_t sleeps();

 private:
  static constexpr uint32_t kUnlocked = 0;
  static constexpr uint32_t kLocked = 1;
  static constexpr uint32_t kLockedWithSleepers = 2;

  void LockSlow();
  void WakeOne();

  std::atomic<uint32_t> state_{kUnlocked};
};
static_assert(sizeof(AdaptiveMutex) == 4, "one word");

// Scoped lock: holds `mu` for its lifetime.
class ABSL_SCOPED_LOCKABLE AdaptiveMutexLock {
 public:
  explicit AdaptiveMutexLock(AdaptiveMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->Lock();
  }
  ~AdaptiveMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  AdaptiveMutexLock(const AdaptiveMutexLock&) = delete;
  AdaptiveMutexLock& operator=(const AdaptiveMutexLock&) = delete;

 private:
  AdaptiveMutex* const mu_;
};

}  // namespace cyber

#endif  // CYBER_COMMON_ADAPTIVE_MUTEX_H_
