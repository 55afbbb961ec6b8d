// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Mutex, MutexLock and CondVar: thin wrappers around std::mutex and
// std::condition_variable that carry clang's thread-safety annotations.
//
// Why not absl::Mutex: Debian's libabsl is not built with ThreadSanitizer, so
// TSan cannot see absl::Mutex acquire/release and reports false races on the
// data it guards. std::mutex is intercepted by TSan; wrapping it with the
// header-only macros of absl/base/thread_annotations.h keeps clang's
// -Wthread-safety checking every ABSL_GUARDED_BY (see .bazelrc, --config=clang).
//
// Threads: a Mutex may be locked from any thread; it is not recursive.

#ifndef CYBER_COMMON_MUTEX_H_
#define CYBER_COMMON_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"

namespace cyber {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // Documents (and tells the analysis) that the caller holds the lock.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Scoped lock: holds `mu` for its lifetime.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Condition variable bound to a Mutex. Waits may wake spuriously: callers
// always re-check their predicate in a loop.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // REQUIRES: `mu` is held. Releases it while blocked, re-acquires it before
  // returning.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }

  // As Wait(), but returns by `deadline` on std::chrono::steady_clock
  // (CLOCK_MONOTONIC) at the latest. Returns false on timeout.
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) ==
                          std::cv_status::no_timeout;
    lock.release();
    return notified;
  }

  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace cyber

#endif  // CYBER_COMMON_MUTEX_H_
