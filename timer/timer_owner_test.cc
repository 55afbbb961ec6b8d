// TimerOwner adopts the timers the installing execution configures while
// its ScopedTimerOwner lives, whichever surface configures them, once each,
// and keeps their statistics readable after the Timer is gone; timers
// configured outside the scope, or by another thread, are not adopted. On
// a simulated timer system with an inline dispatcher: exact counts.

#include "timer/timer_owner.h"

#include <memory>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

TimerOptions Every(absl::Duration period, const std::string& name = "") {
  TimerOptions o;
  o.name = name;
  o.period = period;
  o.callback = [] {};
  return o;
}

TEST(TimerOwnerTest, AdoptsWhatTheScopeConfiguresOnceEach) {
  SimulatedTimerSystem sim;
  TimerOwner owner;
  Timer before(Every(absl::Milliseconds(4), "before"), &sim.driver());  // not adopted
  std::unique_ptr<Timer> named;
  Timer cyber_style;  // made outside, configured inside: adopted
  {
    const ScopedTimerOwner scope(&owner);
    named = std::make_unique<Timer>(Every(absl::Milliseconds(10), "named"), &sim.driver());
    cyber_style.SetTimerOption(TimerOption(20, [] {}, false));
    // Configured again: one record, with the new period.
    ASSERT_TRUE(named->Configure(Every(absl::Milliseconds(5), "named")).ok());
    // A bad configuration is not adopted.
    Timer bad(Every(absl::ZeroDuration(), "bad"), &sim.driver());
    // Another thread's timer is not this scope's.
    std::thread([&] { Timer other(Every(absl::Milliseconds(4), "other"), &sim.driver()); })
        .join();
  }
  Timer after(Every(absl::Milliseconds(4), "after"), &sim.driver());  // not adopted

  ASSERT_TRUE(named->Schedule().ok());
  sim.RunFor(absl::Milliseconds(100));
  std::vector<OwnedTimer> timers = owner.Timers();
  ASSERT_EQ(timers.size(), 2u);
  EXPECT_EQ(timers[0].name, "named");
  EXPECT_EQ(timers[0].period, absl::Milliseconds(5));
  EXPECT_FALSE(timers[0].oneshot);
  EXPECT_EQ(timers[0].statistics.fires, 20u);
  EXPECT_EQ(timers[1].name, cyber_style.name());
  EXPECT_EQ(timers[1].period, absl::Milliseconds(20));
  EXPECT_EQ(timers[1].statistics.fires, 0u);  // never started

  // Destroyed, its last statistics stay.
  named.reset();
  timers = owner.Timers();
  ASSERT_EQ(timers.size(), 2u);
  EXPECT_EQ(timers[0].statistics.fires, 20u);
}

TEST(TimerOwnerTest, ScopesNestAndNullOwnsNothing) {
  SimulatedTimerSystem sim;
  TimerOwner outer;
  TimerOwner inner;
  {
    const ScopedTimerOwner a(&outer);
    Timer t1(Every(absl::Milliseconds(4), "t1"), &sim.driver());
    {
      const ScopedTimerOwner b(&inner);
      Timer t2(Every(absl::Milliseconds(4), "t2"), &sim.driver());
      {
        const ScopedTimerOwner none(nullptr);
        Timer t3(Every(absl::Milliseconds(4), "t3"), &sim.driver());
      }
    }
    Timer t4(Every(absl::Milliseconds(4), "t4"), &sim.driver());
  }
  std::vector<OwnedTimer> o = outer.Timers();
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].name, "t1");
  EXPECT_EQ(o[1].name, "t4");
  std::vector<OwnedTimer> i = inner.Timers();
  ASSERT_EQ(i.size(), 1u);
  EXPECT_EQ(i[0].name, "t2");
}

}  // namespace
}  // namespace timer
}  // namespace cyber
