// cyber::Yield / SleepFor / USleep / Async and a Cyber-constructed Rate, from
// a plain thread and from scheduler routines: in a routine they must park
// (the one processor keeps running other routines) and follow the
// scheduler's clock, never block the processor thread.

#include "cyber/task/task.h"

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "cyber/common/test_waits.h"
#include "cyber/time/rate.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"

namespace cyber {
namespace {

using scheduler::Scheduler;

Scheduler::Options OneProcessor() {
  Scheduler::Options o;
  o.name = "task-test";
  o.config = scheduler::DefaultSchedulerConfig(1);
  return o;
}

TEST(TaskOnThreadTest, SleepForAndUSleepWaitAtLeastTheSpan) {
  const absl::Time before = absl::Now();
  SleepFor(std::chrono::milliseconds(10));
  USleep(5000);
  cyber::SleepFor(absl::Milliseconds(5));
  EXPECT_GE(absl::Now() - before, absl::Milliseconds(20) - absl::Microseconds(300));
  SleepFor(std::chrono::microseconds(-5));  // returns at once
  Yield();
}

TEST(TaskInRoutineTest, SleepForParksOnTheSchedulersSimulatedClock) {
  SimulatedClock clock(Instant() + absl::Hours(2));
  Scheduler sched(OneProcessor());
  timer::TimerSystem driver(&clock, &sched);
  sched.SetTimerSystem(&driver);
  const Instant start = clock.Now();
  std::atomic<int> others{0};
  auto sleeper = sched.Async([&] {
    SleepFor(std::chrono::milliseconds(30));  // simulated milliseconds
    USleep(20000);
    return clock.Now();
  });
  ASSERT_TRUE(test::Eventually([&] { return driver.wheel().size() == 1; }));
  // The one processor is free while the sleeper is parked.
  auto other = sched.Async([&] { ++others; });
  other.get();
  EXPECT_EQ(others.load(), 1);
  driver.AwaitIdle();
  clock.AdvanceTo(start + absl::Milliseconds(30));
  ASSERT_TRUE(test::Eventually([&] {
    driver.AwaitIdle();
    return driver.wheel().size() == 1 && driver.PlannedWake() == start + absl::Milliseconds(50);
  }));
  EXPECT_EQ(sleeper.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  clock.AdvanceTo(start + absl::Milliseconds(50));
  EXPECT_EQ(sleeper.get(), start + absl::Milliseconds(50));
  sched.Shutdown();
}

TEST(TaskInRoutineTest, YieldLetsAnotherRoutineOfTheProcessorRun) {
  // No processor threads: both routines are queued before either runs (with
  // a processor thread, A could finish before B was even dispatched), and
  // the test thread runs them.
  Scheduler::Options o = OneProcessor();
  o.run_threads = false;
  Scheduler sched(o);
  std::vector<std::string> trace;  // one thread runs both: no concurrent access
  auto a = sched.Async([&] {
    for (int i = 0; i < 3; ++i) {
      trace.push_back("A");
      Yield();
    }
  });
  auto b = sched.Async([&] {
    for (int i = 0; i < 3; ++i) {
      trace.push_back("B");
      Yield();
    }
  });
  EXPECT_EQ(sched.RunReady(), 8u);  // A, B, A, B, A, B and the two ends
  a.get();
  b.get();
  EXPECT_EQ(trace, (std::vector<std::string>{"A", "B", "A", "B", "A", "B"}));
  sched.Shutdown();
}

// A Rate loop in a task (Cyber's Rate(hz) is on the steady clock): while it
// sleeps, the single processor runs another routine many times, so the
// Rate parks instead of blocking its thread.
TEST(TaskInRoutineTest, ARateLoopInARoutineParksBetweenCycles) {
  Scheduler sched(OneProcessor());
  timer::TimerSystem driver(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(&driver);
  std::atomic<bool> done{false};
  std::atomic<int> other_turns{0};
  auto loop = sched.Async([&] {
    const Instant start = SteadyClock::Get()->Now();
    Rate rate(50.0);  // 20 ms
    for (int i = 0; i < 5; ++i) rate.Sleep();
    done = true;
    return SteadyClock::Get()->Now() - start;
  });
  auto other = sched.Async([&] {
    while (!done) {
      ++other_turns;
      cyber::SleepFor(absl::Milliseconds(2));
    }
  });
  const absl::Duration took = loop.get();
  other.get();
  EXPECT_GE(took, absl::Milliseconds(100));  // the 5th deadline; never early
  // ~100 ms of Rate sleeps: the other routine got many turns in between
  // (a blocked processor would have given it at most one per cycle).
  EXPECT_GT(other_turns.load(), 10);
  sched.Shutdown();
}

TEST(TaskInRoutineTest, AsyncRunsInARoutineAndCarriesTheResult) {
  auto answer = Async([](int x) { return scheduler::CRoutine::Current() != nullptr ? x : -1; }, 42);
  EXPECT_EQ(answer.get(), 42);
}

}  // namespace
}  // namespace cyber
