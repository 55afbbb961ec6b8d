#include "cyber/common/mutex.h"

#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace {

struct Counter {
  Mutex mu;
  long value ABSL_GUARDED_BY(mu) = 0;
};

TEST(MutexTest, SerializesIncrementsFromSeveralThreads) {
  Counter counter;
  constexpr int kThreads = 4;
  constexpr int kIncrements = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&counter] {
      for (int i = 0; i < kIncrements; ++i) {
        MutexLock lock(&counter.mu);
        ++counter.value;
      }
    });
  }
  for (auto& th : threads) th.join();
  MutexLock lock(&counter.mu);
  EXPECT_EQ(counter.value, long{kThreads} * kIncrements);
}

TEST(CondVarTest, WaiterSeesStateSetBeforeSignal) {
  Mutex mu;
  CondVar cv;
  bool ready = false;  // guarded by mu (local, so not annotated)
  int observed = 0;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!ready) cv.Wait(&mu);
    observed = 42;
  });
  {
    MutexLock lock(&mu);
    ready = true;
  }
  cv.SignalAll();
  waiter.join();
  EXPECT_EQ(observed, 42);
}

TEST(CondVarTest, WaitUntilPastDeadlineTimesOut) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  // A deadline already in the past must return (false) without blocking.
  EXPECT_FALSE(cv.WaitUntil(&mu, std::chrono::steady_clock::now() -
                                     std::chrono::seconds(1)));
}

}  // namespace
}  // namespace cyber
