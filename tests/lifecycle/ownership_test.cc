// Contract pinned (the design contract, "Lifetimes and process wiring"): whatever a
// queued or running callback points to stays alive until it is done
// (ownership, not declaration order). With explicitly constructed
// collaborators (dispatcher, TimerSystem, Timers) a run already handed to the
// dispatcher must never call its callback once its Timer is gone, and
// destroying things in any legal order is safe:
//   * natural order: timers, then driver, then dispatcher;
//   * a Timer declared before its driver (so it outlives it): Stop() and the
//     destructor are safe, Schedule() fails with FailedPrecondition;
//   * a Timer declared first of all (outlives driver, dispatcher and clock).
// (The driver's own dispatcher and clock outliving the driver is the driver's
// contract and is not varied here.)
//
// How a dangling use is made visible: objects live in Doomed<T> storage. In a
// plain build the bytes of a destroyed object are overwritten, so a later use
// (e.g. locking its mutex) fails loudly instead of reading stale memory;
// under ASan/TSan the storage is really freed so the sanitizer reports it.
// Each test runs in its own process (see BUILD) because today's failures
// abort. Simulated clock throughout: no timing assumptions.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

#include "cyber/common/test_waits.h"
#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "scheduler/scheduler.h"
#include "timer/callback_executor.h"
#include "timer/timer_system.h"
#include "timer/timer.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LIFECYCLE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LIFECYCLE_SANITIZED 1
#endif
#endif
#ifndef LIFECYCLE_SANITIZED
#define LIFECYCLE_SANITIZED 0
#endif

namespace cyber {
namespace timer {
namespace {

using scheduler::Scheduler;
using test::Gate;

template <typename T>
class Doomed {
 public:
  Doomed() = default;
  Doomed(const Doomed&) = delete;
  Doomed& operator=(const Doomed&) = delete;
  ~Doomed() {
    if (object_ != nullptr) Destroy();
    Free();
  }
  template <typename... Args>
  T* Make(Args&&... args) {
    storage_ = ::operator new(sizeof(T), std::align_val_t(alignof(T)));
    object_ = new (storage_) T(std::forward<Args>(args)...);
    return object_;
  }
  T* get() const { return object_; }
  T* operator->() const { return object_; }
  void Destroy() {
    object_->~T();
    object_ = nullptr;
    if (LIFECYCLE_SANITIZED) {
      Free();
    } else {
      std::memset(storage_, 0xA5, sizeof(T));
    }
  }

 private:
  void Free() {
    if (storage_ == nullptr) return;
    ::operator delete(storage_, std::align_val_t(alignof(T)));
    storage_ = nullptr;
  }
  void* storage_ = nullptr;
  T* object_ = nullptr;
};

// Ends the process with a message if the test is not done within the limit:
// today's failures may deadlock on a dead object's lock.
class Watchdog {
 public:
  explicit Watchdog(const char* what) : what_(what), thread_([this] { Run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, std::chrono::seconds(30), [this] { return done_; })) return;
    std::fprintf(stderr, "FAILED (hang): %s did not finish within 30 s\n", what_);
    std::fflush(stderr);
    std::_Exit(1);
  }
  const char* what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Opens the gate when the scope ends, so an early ASSERT return does not
// leave the dispatcher's only thread blocked while it is destroyed.
struct OpenOnExit {
  Gate* gate;
  ~OpenOnExit() { gate->Open(); }
};

constexpr absl::Duration kPeriod = absl::Milliseconds(10);
const Instant kStart = Instant() + absl::Hours(1);

Scheduler::Options OneProcessor() {
  Scheduler::Options o;
  o.name = "ownership";
  o.config = scheduler::DefaultSchedulerConfig(1);
  return o;
}

CallbackExecutor::Options OneThread() {
  CallbackExecutor::Options o;
  o.threads = 1;
  o.name = "ownership";
  return o;
}

TimerOptions Counting(const char* name, std::atomic<int>* calls) {
  TimerOptions o;
  o.name = name;
  o.period = kPeriod;
  o.callback = [calls] { ++*calls; };
  return o;
}

// Lets the first period expire, so each started timer hands one run to the
// dispatcher, whose only thread is held by the gate: the runs stay queued.
void QueueRuns(SimulatedClock* clock, TimerSystem* driver, uint64_t timers) {
  clock->Advance(kPeriod);
  driver->AwaitIdle();
  ASSERT_EQ(driver->stats().expired, timers);
}

TEST(Ownership, QueuedRunsOutliveTimersAndDriverDestroyedBeforeTheScheduler) {
  Watchdog watchdog("natural destruction order (scheduler)");
  std::atomic<int> calls{0};
  Gate gate;
  SimulatedClock clock(kStart);
  Doomed<Scheduler> sched;
  Doomed<TimerSystem> driver;
  Doomed<Timer> imu, lidar;
  sched.Make(OneProcessor());
  OpenOnExit opener{&gate};
  driver.Make(&clock, sched.get());
  imu.Make(Counting("imu", &calls), driver.get());
  lidar.Make(Counting("lidar", &calls), driver.get());
  ASSERT_TRUE(sched->Dispatch([&gate] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());
  ASSERT_TRUE(imu->Schedule().ok());
  ASSERT_TRUE(lidar->Schedule().ok());
  QueueRuns(&clock, driver.get(), 2);
  ASSERT_EQ(sched->stats().dispatched, 3u);  // the gate + one run per timer

  imu.Destroy();
  lidar.Destroy();
  driver.Destroy();
  gate.Open();  // the queued runs may execute now
  sched.Destroy();
  EXPECT_EQ(calls.load(), 0) << "a queued run called the callback of a destroyed timer";
}

TEST(Ownership, QueuedRunsOutliveTimersAndDriverDestroyedBeforeTheExecutor) {
  Watchdog watchdog("natural destruction order (executor)");
  std::atomic<int> calls{0};
  Gate gate;
  SimulatedClock clock(kStart);
  Doomed<CallbackExecutor> executor;
  Doomed<TimerSystem> driver;
  Doomed<Timer> imu;
  executor.Make(OneThread());
  OpenOnExit opener{&gate};
  driver.Make(&clock, executor.get());
  imu.Make(Counting("imu", &calls), driver.get());
  ASSERT_TRUE(executor->Dispatch([&gate] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());
  ASSERT_TRUE(imu->Schedule().ok());
  QueueRuns(&clock, driver.get(), 1);
  ASSERT_GE(executor->stats().max_depth, 1u);  // the run waits in the queue

  imu.Destroy();
  driver.Destroy();
  gate.Open();
  executor.Destroy();  // runs (or drops) what was queued, joins its thread
  EXPECT_EQ(calls.load(), 0) << "a queued run called the callback of a destroyed timer";
}

TEST(Ownership, TimerDeclaredBeforeItsDriverOutlivesItSafely) {
  Watchdog watchdog("timer outliving its driver");
  std::atomic<int> calls{0};
  Gate gate;
  SimulatedClock clock(kStart);
  Doomed<Scheduler> sched;
  Doomed<Timer> timer;  // declared before the driver: destroyed after it
  Doomed<TimerSystem> driver;
  sched.Make(OneProcessor());
  OpenOnExit opener{&gate};
  driver.Make(&clock, sched.get());
  timer.Make(Counting("watchdog", &calls), driver.get());
  ASSERT_TRUE(sched->Dispatch([&gate] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());
  ASSERT_TRUE(timer->Schedule().ok());
  QueueRuns(&clock, driver.get(), 1);  // running, armed, and a run queued

  driver.Destroy();
  timer->Stop();
  EXPECT_FALSE(timer->IsRunning());
  const absl::Status s = timer->Schedule();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_FALSE(timer->IsRunning());
  timer.Destroy();
  gate.Open();
  sched.Destroy();
  EXPECT_EQ(calls.load(), 0);
}

TEST(Ownership, TimerDeclaredFirstOutlivesDriverDispatcherAndClockSafely) {
  Watchdog watchdog("timer outliving everything");
  std::atomic<int> calls{0};
  Doomed<Timer> timer;  // first of all: destroyed last
  Gate gate;
  Doomed<SimulatedClock> clock;
  Doomed<Scheduler> sched;
  Doomed<TimerSystem> driver;
  clock.Make(kStart);
  sched.Make(OneProcessor());
  OpenOnExit opener{&gate};
  driver.Make(clock.get(), sched.get());
  timer.Make(Counting("timeout", &calls), driver.get());
  ASSERT_TRUE(sched->Dispatch([&gate] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());
  ASSERT_TRUE(timer->Schedule().ok());
  QueueRuns(clock.get(), driver.get(), 1);

  driver.Destroy();
  gate.Open();
  sched.Destroy();  // the queued run is dropped or runs now
  clock.Destroy();
  const absl::Status s = timer->Schedule();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  timer->Stop();
  EXPECT_FALSE(timer->IsRunning());
  timer.Destroy();
  EXPECT_EQ(calls.load(), 0);
}

}  // namespace
}  // namespace timer
}  // namespace cyber
