// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// FutexWait / FutexWake: the two Linux futex operations the waiting code
// here is built on (AdaptiveMutex, WaitList's thread waiters), private to
// the process. A futex word is a std::atomic<uint32_t>; the kernel compares
// and sleeps atomically, so "check, then sleep" cannot miss a wake-up that
// changed the word in between.
//
// Threads: any. Waking an address nobody waits on is harmless.

#ifndef CYBER_COMMON_FUTEX_H_
#define CYBER_COMMON_FUTEX_H_

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace cyber {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "a futex word is the atomic itself");

// Sleeps while *word == expected. Returns at once if it differs, and may
// return spuriously: callers re-check in a loop.
inline void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE,
          expected, nullptr, nullptr, 0);
}

// Wakes up to `count` sleepers on `word`.
inline void FutexWake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE,
          count, nullptr, nullptr, 0);
}

}  // namespace cyber

#endif  // CYBER_COMMON_FUTEX_H_
