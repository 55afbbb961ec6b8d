// WaitList with thread waiters and with a fake coroutine runtime: every
// waiter that called Wait() before WakeAll() returns, an Unpark() that comes
// before the Park() is not lost, and a coroutine waiter parks (never
// touches the condition variable path).

#include "cyber/time/wait_list.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace {

// A "coroutine" that is really a thread: Park blocks on its own semaphore.
class FakeCoroutine final : public Parkable {
 public:
  void Park() override {
    std::unique_lock<std::mutex> lock(mu_);
    ++parks_;
    cv_.wait(lock, [this] { return pending_; });
    pending_ = false;
  }
  void Unpark() override {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = true;
    cv_.notify_all();
  }
  int parks() {
    std::lock_guard<std::mutex> lock(mu_);
    return parks_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
  int parks_ = 0;
};

struct Shared {
  Mutex mu;
  WaitList waiters;
  bool done ABSL_GUARDED_BY(mu) = false;
  int waiting ABSL_GUARDED_BY(mu) = 0;
};

void WaitForDone(Shared* s) {
  MutexLock lock(&s->mu);
  ++s->waiting;
  while (!s->done) s->waiters.Wait(&s->mu);
}

int Waiting(Shared* s) {
  MutexLock lock(&s->mu);
  return s->waiting;
}

void Finish(Shared* s) {
  MutexLock lock(&s->mu);
  s->done = true;
  s->waiters.WakeAll();
}

TEST(WaitListTest, ThreadWaitersAllReturnAfterWakeAll) {
  Shared s;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&s] { WaitForDone(&s); });
  while (Waiting(&s) < 4) std::this_thread::yield();
  Finish(&s);
  for (auto& t : threads) t.join();
  MutexLock lock(&s.mu);
  EXPECT_TRUE(s.waiters.empty());
}

TEST(WaitListTest, CoroutineWaiterParksAndIsUnparked) {
  Shared s;
  FakeCoroutine co;
  std::atomic<bool> returned{false};
  std::thread t([&] {
    SetCurrentCoroutine(&co);
    EXPECT_EQ(CurrentExecutionId(), static_cast<const void*>(&co));
    WaitForDone(&s);
    SetCurrentCoroutine(nullptr);
    returned = true;
  });
  while (co.parks() == 0) std::this_thread::yield();
  EXPECT_FALSE(returned.load());
  Finish(&s);
  t.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(co.parks(), 1);
}

TEST(WaitListTest, UnparkBeforeParkIsNotLost) {
  FakeCoroutine co;
  co.Unpark();
  co.Park();  // returns at once: the unpark was pending
  EXPECT_EQ(co.parks(), 1);
}

TEST(WaitListTest, ExecutionIdIsPerThreadOutsideCoroutines) {
  const void* main_id = CurrentExecutionId();
  const void* other_id = nullptr;
  std::thread([&] { other_id = CurrentExecutionId(); }).join();
  EXPECT_NE(main_id, other_id);
  EXPECT_EQ(main_id, CurrentExecutionId());
}

TEST(WaitListTest, AWaitReportSaysWhenItsThreadWaits) {
  Shared s;
  std::atomic<bool> waiting{false};
  std::atomic<bool> reported_while_waiting{false};
  std::thread t([&] {
    const ScopedWaitReport report(&waiting);
    WaitForDone(&s);
  });
  // Set before the thread sleeps, under the waiters' mutex: once it reads
  // true, the thread waits (or is about to) until a WakeAll.
  while (!waiting.load()) std::this_thread::yield();
  EXPECT_EQ(Waiting(&s), 1);
  {
    MutexLock lock(&s.mu);
    s.done = true;
    s.waiters.WakeAll();
    // Cleared by the WakeAll that wakes it, before the thread runs again.
    reported_while_waiting = waiting.load();
  }
  t.join();
  EXPECT_FALSE(reported_while_waiting.load());
  EXPECT_FALSE(waiting.load());
}

TEST(WaitListTest, AWaitReportIsPerThreadAndNotForCoroutines) {
  Shared s;
  std::atomic<bool> waiting{false};
  const ScopedWaitReport report(&waiting);  // this thread's, not the others'
  FakeCoroutine co;
  std::thread coroutine([&] {
    SetCurrentCoroutine(&co);
    WaitForDone(&s);
    SetCurrentCoroutine(nullptr);
  });
  std::thread plain([&] { WaitForDone(&s); });
  while (Waiting(&s) < 2 || co.parks() == 0) std::this_thread::yield();
  EXPECT_FALSE(waiting.load());
  Finish(&s);
  coroutine.join();
  plain.join();
  EXPECT_FALSE(waiting.load());
}

}  // namespace
}  // namespace cyber
