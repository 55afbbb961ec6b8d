#include "cyber/common/adaptive_mutex.h"

#include "cyber/common/cpu_relax.h"
#include "cyber/common/futex.h"

namespace cyber {

namespace {

std::atomic<uint64_t> g_sleeps{0};

}  // namespace

uint64_t AdaptiveMutex::sleeps() {
  return g_sleeps.load(std::memory_order_relaxed);
}

void AdaptiveMutex::LockSlow() {
  // Spin: read-only while held (no cache-line ping-pong between waiters),
  // and stop spinning as soon as somebody sleeps (a sleeper means holds are
  // long now; spinning would only delay our own sleep).
  int backoff = 1;
  for (int paused = 0; paused < kSpinPauses; paused += backoff) {
    uint32_t seen = state_.load(std::memory_order_relaxed);
    if (seen == kLockedWithSleepers) break;
    if (seen == kUnlocked &&
        state_.compare_exchange_weak(seen, kLocked, std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
      return;
    }
    for (int k = 0; k < backoff; ++k) CpuRelax();
    if (backoff < kMaxBackoff) backoff *= 2;
  }
  // Sleep. Taking the lock from here always leaves it marked "with
  // sleepers" (we cannot know whether others still sleep), which costs at
  // most one needless wake-up at the next Unlock().
  while (state_.exchange(kLockedWithSleepers, std::memory_order_acquire) !=
         kUnlocked) {
    g_sleeps.fetch_add(1, std::memory_order_relaxed);
    FutexWait(&state_, kLockedWithSleepers);
  }
}

void AdaptiveMutex::WakeOne() { FutexWake(&state_, 1); }

}  // namespace cyber
