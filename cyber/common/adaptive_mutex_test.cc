#include "cyber/common/adaptive_mutex.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace {

// Tries a held lock on purpose: beyond what the static analysis models.
void CheckTryLock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  AdaptiveMutex mu;
  mu.Lock();
  EXPECT_FALSE(mu.TryLock());
  mu.Unlock();
  ASSERT_TRUE(mu.TryLock());
  mu.Unlock();
}

TEST(AdaptiveMutexTest, TryLockFailsWhileHeldAndSucceedsAfter) {
  CheckTryLock();
}

// Threads increment a plain counter under the lock: any lost update (or,
// under ThreadSanitizer, any unordered access) shows a broken exclusion.
TEST(AdaptiveMutexTest, ExcludesUnderContention) {
  AdaptiveMutex mu;
  int64_t counter = 0;  // guarded by mu
  constexpr int kThreads = 4;
  constexpr int kIncrements = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        AdaptiveMutexLock lock(&mu);
        ++counter;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  AdaptiveMutexLock lock(&mu);
  EXPECT_EQ(counter, int64_t{kThreads} * kIncrements);
}

// A waiter whose holder keeps the lock past the spin sleeps in the kernel
// and is woken by Unlock(): the holder waits (without a deadline) until the
// waiter has gone to sleep, so the sleeping path is taken every run.
TEST(AdaptiveMutexTest, WaiterSleepsAndIsWokenByUnlock) {
  AdaptiveMutex mu;
  int value = 0;  // guarded by mu
  const uint64_t sleeps_before = AdaptiveMutex::sleeps();
  mu.Lock();
  std::atomic<bool> acquired{false};
  std::thread waiter([&] {
    AdaptiveMutexLock lock(&mu);
    value = 2;
    acquired.store(true);
  });
  while (AdaptiveMutex::sleeps() == sleeps_before) std::this_thread::yield();
  EXPECT_FALSE(acquired.load());
  value = 1;
  mu.Unlock();
  waiter.join();
  EXPECT_TRUE(acquired.load());
  AdaptiveMutexLock lock(&mu);
  EXPECT_EQ(value, 2);
}

// Several sleepers: each Unlock() wakes one, and every one gets the lock.
TEST(AdaptiveMutexTest, EverySleeperEventuallyAcquires) {
  AdaptiveMutex mu;
  int entered = 0;  // guarded by mu
  constexpr int kWaiters = 3;
  const uint64_t sleeps_before = AdaptiveMutex::sleeps();
  mu.Lock();
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&] {
      AdaptiveMutexLock lock(&mu);
      ++entered;
    });
  }
  while (AdaptiveMutex::sleeps() < sleeps_before + kWaiters) {
    std::this_thread::yield();
  }
  mu.Unlock();
  for (std::thread& t : waiters) t.join();
  AdaptiveMutexLock lock(&mu);
  EXPECT_EQ(entered, kWaiters);
}

}  // namespace
}  // namespace cyber
