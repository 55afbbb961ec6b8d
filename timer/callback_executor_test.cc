#include "timer/callback_executor.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace timer {
namespace {

TEST(CallbackExecutorTest, RunsEveryAcceptedTaskExactlyOnce) {
  CallbackExecutor executor;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  std::vector<std::atomic<int>> runs(kThreads * kPerThread);
  std::vector<std::thread> producers;
  std::atomic<int> refused{0};
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int id = t * kPerThread + i;
        if (!executor.Dispatch([&runs, id] { ++runs[id]; })) ++refused;
      }
    });
  }
  for (auto& p : producers) p.join();
  executor.WaitIdle();
  EXPECT_EQ(refused, 0);
  for (auto& r : runs) ASSERT_EQ(r.load(), 1);
  EXPECT_EQ(executor.stats().executed, static_cast<uint64_t>(kThreads * kPerThread));
}

TEST(CallbackExecutorTest, FullQueueRefusesAndCounts) {
  CallbackExecutor::Options options;
  options.threads = 1;
  options.max_queue = 2;
  CallbackExecutor executor(options);
  std::mutex gate;
  gate.lock();  // the first task blocks the only worker
  std::atomic<bool> started{false};
  ASSERT_TRUE(executor.Dispatch([&] {
    started = true;
    std::lock_guard<std::mutex> wait(gate);
  }));
  while (!started) std::this_thread::yield();  // the worker holds task 1
  EXPECT_TRUE(executor.Dispatch([] {}));
  EXPECT_TRUE(executor.Dispatch([] {}));
  EXPECT_FALSE(executor.Dispatch([] {}));  // queue (2) is full
  EXPECT_EQ(executor.stats().refused, 1u);
  gate.unlock();
  executor.WaitIdle();
  EXPECT_EQ(executor.stats().executed, 3u);
  EXPECT_EQ(executor.stats().max_depth, 2u);
}

TEST(CallbackExecutorTest, ShutdownRunsWhatWasQueuedThenRefuses) {
  CallbackExecutor executor;
  std::atomic<int> ran{0};
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(executor.Dispatch([&] { ++ran; }));
  executor.Shutdown();
  EXPECT_EQ(ran, 1000);
  EXPECT_FALSE(executor.Dispatch([&] { ++ran; }));
  executor.Shutdown();  // idempotent
  EXPECT_EQ(ran, 1000);
}

}  // namespace
}  // namespace timer
}  // namespace cyber
