// A runtime's timer system counts the user's pending timers and nothing
// else: a routine's SleepFor arms a wheel entry on the same system, but it
// is not a pending timer (timer/timer_system.h, PendingTimers()). The cap
// comes from Runtime::Options. Simulated clock, no threads: deterministic.

#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/runtime/runtime.h"
#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "timer/timer.h"

namespace cyber {
namespace {

TEST(RuntimePendingTimersTest, RoutineSleepsAreNotPendingTimers) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  Runtime::Options o;
  o.name = "pending";
  o.clock = &clock;
  o.run_threads = false;
  o.max_pending_timers = 1;
  Runtime runtime(o);
  timer::TimerSystem* const timers = runtime.timers();
  EXPECT_EQ(timers->max_pending_timers(), 1u);

  bool woke = false;
  auto done = runtime.scheduler()->Async([&woke] {
    scheduler::CRoutine::SleepFor(absl::Milliseconds(50));
    woke = true;
  });
  runtime.scheduler()->RunReady();  // the routine parks on the wheel
  ASSERT_FALSE(woke);
  EXPECT_EQ(timers->wheel().size(), 1u);
  EXPECT_EQ(timers->PendingTimers(), 0u);

  // A timer is; the sleep does not take the one slot the cap allows.
  TimerOptions t;
  t.name = "timeout";
  t.period = absl::Milliseconds(10);
  t.oneshot = true;
  t.callback = [] {};
  Timer timeout(t, timers);
  ASSERT_TRUE(timeout.Schedule().ok());
  EXPECT_EQ(timers->wheel().size(), 2u);
  EXPECT_EQ(timers->PendingTimers(), 1u);
  t.name = "second";
  Timer second(t, timers);
  EXPECT_EQ(second.Schedule().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(timeout.Cancel());
  EXPECT_EQ(timers->PendingTimers(), 0u);
  EXPECT_EQ(timers->CancelAll(), 0u);  // the sleep is not the user's timer

  // The sleep still ends.
  clock.Advance(absl::Milliseconds(50));
  timers->Step(clock.Now());
  runtime.scheduler()->RunReady();
  EXPECT_TRUE(woke);
  done.get();
  EXPECT_EQ(timers->wheel().size(), 0u);
  runtime.Shutdown();
}

}  // namespace
}  // namespace cyber
