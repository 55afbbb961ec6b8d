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

}  // namespace
}  // namespace cyber
