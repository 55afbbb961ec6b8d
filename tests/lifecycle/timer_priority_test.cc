// Contract pinned (the design contract, "Lifetimes and process wiring": priorities are
// explicit, a timer callback's priority is settable — for a component it
// comes from the scheduler conf — and starvation shows in statistics).
//
// API: TimerOptions::priority (kPriorityFromConf = -1: the scheduler conf's
// priority for a task named like the timer, else 0), which the scheduler
// uses for the routine that runs each call. Without a priority a
// low-priority timer starves silently: 0 calls in 500 ms, 0 missed periods.
//
// Setting: a scheduler with ONE processor and a routine of priority 5 that
// loops on CRoutine::Yield(). A 10 ms timer at the default priority 0 gets no
// call at all; that must show as missed periods in GetStatistics(). A timer
// whose priority is above the spinner's (set explicitly, or from the conf via
// its name) gets every call.
//
// Simulated clock: time advances one period at a time, and the test waits
// (bounded) for each call before moving on, so each call runs at exactly its
// tick's instant; no timing assumptions.

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace {

using scheduler::CRoutine;
using scheduler::Scheduler;
using timer::TimerSystem;

constexpr absl::Duration kPeriod = absl::Milliseconds(10);
constexpr int kPeriods = 50;  // 500 ms
constexpr int kSpinnerPriority = 5;

Scheduler::Options OneProcessor(const std::string& timer_in_conf = "",
                                int conf_priority = 0) {
  Scheduler::Options o;
  o.name = "priority";
  o.config = scheduler::DefaultSchedulerConfig(1);
  if (!timer_in_conf.empty()) {
    o.config.groups[0].task_priorities[timer_in_conf] = conf_priority;
  }
  return o;
}

// Waits until `n` calls have *ended*: the timer counts a call (fires) in the
// same step that re-arms it, so the clock may move on only then. (Waiting
// for the callback's own counter would advance time while the call still
// runs; the next call is then, correctly, a tick late.)
bool AwaitCalls(const Timer& timer, int n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (timer.GetStatistics().fires < static_cast<uint64_t>(n)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// A 1-processor scheduler on simulated time with a priority-5 routine that
// never stops yielding.
class Starved {
 public:
  explicit Starved(Scheduler::Options options)
      : clock_(Instant() + absl::Hours(1)), sched_(std::move(options)),
        driver_(&clock_, &sched_) {
    sched_.SetTimerSystem(&driver_);
    EXPECT_TRUE(sched_.CreateTask("spinner", [] {
                        while (true) CRoutine::Yield();
                      }, kSpinnerPriority).ok());
  }
  ~Starved() { sched_.Shutdown(); }  // cancels the spinner at its Yield

  TimerSystem* driver() { return &driver_; }
  Instant Now() const { return clock_.Now(); }
  void AdvanceTo(Instant t) {
    clock_.AdvanceTo(t);
    driver_.AwaitIdle();
  }
  void StopSpinner() { EXPECT_TRUE(sched_.RemoveTask("spinner").ok()); }

 private:
  SimulatedClock clock_;
  Scheduler sched_;
  TimerSystem driver_;
};

TimerOptions Counting(const std::string& name, std::atomic<int>* calls,
                      int priority) {
  TimerOptions o;
  o.name = name;
  o.period = kPeriod;
  o.callback = [calls] { ++*calls; };
  o.priority = priority;  // the designed field
  return o;
}

TEST(TimerPriority, StarvationShowsAsMissedPeriods) {
  Starved s(OneProcessor());
  std::atomic<int> calls{0};
  Timer t(Counting("starved", &calls, /*priority=*/-1), s.driver());
  const Instant origin = s.Now();
  ASSERT_TRUE(t.Schedule().ok());
  for (int k = 1; k <= kPeriods; ++k) s.AdvanceTo(origin + kPeriod * k);
  const TimerStatistics starved = t.GetStatistics();
  EXPECT_GT(starved.missed_periods, 0u)
      << "a timer that got " << calls.load() << " calls in " << kPeriods
      << " periods reports no missed period (fires " << starved.fires
      << ", overruns " << starved.overruns << ")";
  // Exactly: call 1 was queued at the first period and never began; each
  // later period came due while it waited, and is counted once.
  EXPECT_EQ(starved.fires, 0u);
  EXPECT_EQ(starved.missed_periods, static_cast<uint64_t>(kPeriods - 1));
  s.StopSpinner();
  t.Stop();
}

TEST(TimerPriority, TimerAboveTheSpinnerGetsEveryCall) {
  Starved s(OneProcessor());
  std::atomic<int> calls{0};
  Timer t(Counting("urgent", &calls, kSpinnerPriority + 1), s.driver());
  const Instant origin = s.Now();
  ASSERT_TRUE(t.Schedule().ok());
  for (int k = 1; k <= kPeriods; ++k) {
    s.AdvanceTo(origin + kPeriod * k);
    if (!AwaitCalls(t, k)) {
      ADD_FAILURE() << "priority-" << kSpinnerPriority + 1 << " timer starved by a "
                    << "priority-" << kSpinnerPriority << " spinner: " << calls.load()
                    << " calls after " << k << " periods";
      break;
    }
  }
  EXPECT_EQ(calls.load(), kPeriods);
  EXPECT_EQ(t.GetStatistics().missed_periods, 0u);
  t.Stop();
  s.StopSpinner();
}

TEST(TimerPriority, ConfPriorityOfATaskNamedLikeTheTimerApplies) {
  Starved s(OneProcessor("imu_poll", kSpinnerPriority + 2));
  std::atomic<int> calls{0};
  Timer t(Counting("imu_poll", &calls, /*priority=*/-1), s.driver());
  const Instant origin = s.Now();
  ASSERT_TRUE(t.Schedule().ok());
  for (int k = 1; k <= kPeriods; ++k) {
    s.AdvanceTo(origin + kPeriod * k);
    if (!AwaitCalls(t, k)) {
      ADD_FAILURE() << "timer \"imu_poll\" (conf priority " << kSpinnerPriority + 2
                    << ") starved: " << calls.load() << " calls after " << k
                    << " periods";
      break;
    }
  }
  EXPECT_EQ(calls.load(), kPeriods);
  t.Stop();
  s.StopSpinner();
}

}  // namespace
}  // namespace cyber
