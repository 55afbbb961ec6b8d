#include "cyber/common/adaptive_mutex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

#include "cyber/common/cpu_relax.h"

namespace cyber {

namespace {

std::atomic<uint64_t> g_sleeps{0};

// FUTEX_PRIVATE: the lock is never shared between processes, and the
// private futexes skip the kernel's shared-mapping lookup.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  // Returns at once (EAGAIN) if *word != expected, and may wake spuriously:
  // the caller loops.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE,
          expected, nullptr, nullptr, 0);
}

void FutexWake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE,
          count, nullptr, nullptr, 0);
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the futex word is the atomic itself");

}  // namespace

uint64_t AdaptiveMutex::sleeps() {
  return g_sleeps.load(std::memory_order_relaxed);
}

void AdaptiveMutex::LockSlow() {
  // Spin: read-only while held (no cache-line ping-pong between waiters),
  // and stop spinning as soon as somebody sleeps (a sleeper means holds are
  // long now; spinning would only delay our own sleep).
  for (int i = 0; i < kSpins; ++i) {
    uint32_t seen = state_.load(std::memory_order_relaxed);
    if (seen == kLockedWithSleepers) break;
    if (seen == kUnlocked &&
        state_.compare_exchange_weak(seen, kLocked, std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
      return;
    }
    CpuRelax();
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
