// A periodic timer starved by a higher-priority routine on its only
// processor shows the periods it misses while the starvation lasts: a
// monitor (mainboard's status, a health component) reading its statistics
// sees it, instead of fires=0 missed_periods=0 until the routine lets go.
// The real scheduler on the real clock (its early hand-over is what hid
// it). Nothing is timed: the test waits (up to test::kTestWaitLimit, 30 s)
// for 5 missed periods, which take 60 ms on a quiet machine, while the
// timer has still not run once.

#include <atomic>
#include <chrono>
#include <thread>

#include "cyber/common/test_waits.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/timer.h"
#include "timer/timer_system.h"

namespace cyber {
namespace scheduler {
namespace {

TEST(StarvedTimerTest, MissedPeriodsShowWhileAHigherPriorityRoutinePolls) {
  Scheduler::Options o;
  o.name = "starve";
  o.config = DefaultSchedulerConfig(1);
  Scheduler sched(std::move(o));
  timer::TimerSystem timers(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(&timers);

  std::atomic<bool> release{false};
  std::atomic<bool> polling{false};
  ASSERT_TRUE(sched.CreateTask("poller", [&] {
    polling = true;
    while (!release.load()) CRoutine::Yield();
  }, /*priority=*/5).ok());
  ASSERT_TRUE(test::Eventually([&] { return polling.load(); }));

  std::atomic<int> calls{0};
  TimerOptions t_options;
  t_options.name = "health";
  t_options.period = absl::Milliseconds(10);
  t_options.callback = [&] { ++calls; };
  Timer t(t_options, &timers);
  ASSERT_TRUE(t.Schedule().ok());
  // While the poller holds the processor: missed periods show.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(test::Eventually(
      [&] { return t.GetStatistics().missed_periods >= 5; }))
      << "missed_periods " << t.GetStatistics().missed_periods << " after "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start).count()
      << " s of starvation";
  EXPECT_EQ(calls.load(), 0);  // still starved: the count came as it passed
  release = true;
  EXPECT_TRUE(test::Eventually([&] { return calls.load() >= 1; }));
  t.Stop();
  sched.Shutdown();
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
