// Contract pinned (croutine.h: SleepFor parks the routine until a timing-wheel
// entry wakes it at the deadline, never earlier; cancellation is what ends a
// parked routine early): a sleep longer than the wheel's maximum delay
// (~99.4 days) or an infinite one is still a sleep. The routine stays parked
// — an Async future is not ready — until the deadline (100 days: woken at
// exactly that instant, never before) or until RemoveTask / the scheduler's
// Shutdown() cancels it; a cancelled Async never delivers a value.
//
// Simulated clock (a TimerSystem on a SimulatedClock as the scheduler's
// timer driver), so 100 days pass in a moment, and a scheduler with ONE
// processor: a probe routine dispatched after the sleeper can only finish
// once the sleeper has switched out (parked or ended), which makes "is it
// still asleep?" a deterministic question.

#include <atomic>
#include <chrono>
#include <future>
#include <string>

#include "cyber/common/test_waits.h"
#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"

namespace cyber {
namespace scheduler {
namespace {

using test::Eventually;

constexpr absl::Duration kHundredDays = absl::Hours(24 * 100);
constexpr absl::Duration kTick = timer::kTimerResolution;

Scheduler::Options OneProcessor() {
  Scheduler::Options o;
  o.name = "long_sleep";
  o.config = DefaultSchedulerConfig(1);
  return o;
}

// A scheduler whose SleepFor runs on simulated time.
struct SimScheduler {
  SimScheduler() : clock(Instant() + absl::Hours(1)), sched(OneProcessor()),
                   driver(&clock, &sched) {
    sched.SetTimerSystem(&driver);
  }
  ~SimScheduler() { sched.Shutdown(); }  // before the driver goes away

  // Moves simulated time to `t` and waits until everything due by then,
  // including the routines it woke, has run (one processor, FIFO).
  void AdvanceTo(Instant t) {
    clock.AdvanceTo(t);
    driver.AwaitIdle();
    Drain();
  }
  // Returns once every routine queued so far has run or switched out.
  void Drain() { sched.Async([] {}).get(); }

  SimulatedClock clock;
  Scheduler sched;
  timer::TimerSystem driver;
};

// Describes a future that should still be pending.
template <typename T>
std::string Pending(std::future<T>& f) {
  if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return "";
  try {
    f.get();
    return "the sleep returned (woke early)";
  } catch (const std::future_error& e) {
    return std::string("the routine ended at once, future: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("the routine threw: ") + e.what();
  }
}

TEST(LongSleep, HundredDaySleepWakesExactlyAfterHundredDays) {
  SimScheduler s;
  const Instant start = s.clock.Now();
  const Instant deadline = start + kHundredDays;  // on a tick: start is the epoch
  auto woke = s.sched.Async([&s] {
    CRoutine::SleepFor(kHundredDays);
    return s.clock.Now();
  });
  s.Drain();
  std::string state = Pending(woke);
  ASSERT_EQ(state, "") << "right after SleepFor(100 days): " << state;
  for (const Instant t : {start + absl::Seconds(1), start + absl::Hours(24 * 50),
                          start + absl::Hours(24 * 99) + absl::Hours(12),
                          deadline - kTick}) {
    s.AdvanceTo(t);
    state = Pending(woke);
    ASSERT_EQ(state, "") << "at +" << (t - start) << ": " << state;
  }
  s.AdvanceTo(deadline);
  ASSERT_EQ(woke.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "not woken at the deadline";
  EXPECT_EQ(woke.get(), deadline) << "woken at the wrong instant";
}

TEST(LongSleep, InfiniteSleepStaysAsleepUntilSchedulerShutdownCancelsIt) {
  SimScheduler s;
  std::atomic<bool> returned{false};
  auto slept = s.sched.Async([&returned] {
    CRoutine::SleepFor(absl::InfiniteDuration());
    returned = true;
    return 42;
  });
  s.Drain();
  std::string state = Pending(slept);
  ASSERT_EQ(state, "") << "right after SleepFor(infinite): " << state;
  s.AdvanceTo(s.clock.Now() + kHundredDays + absl::Hours(24 * 10));
  state = Pending(slept);
  ASSERT_EQ(state, "") << "after 110 simulated days: " << state;

  s.sched.Shutdown();  // cancels the parked routine
  ASSERT_EQ(slept.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "Shutdown() did not end the sleeping routine";
  EXPECT_THROW(slept.get(), std::future_error) << "a cancelled sleep delivered a value";
  EXPECT_FALSE(returned.load());
}

TEST(LongSleep, HundredDayAndInfiniteSleepingTasksEndOnlyByRemoveTask) {
  SimScheduler s;
  std::atomic<int> woke{0};       // a SleepFor returned normally
  std::atomic<int> cancelled{0};  // RoutineCancelled came out of SleepFor
  std::atomic<int> ended{0};      // the body's stack was unwound
  struct CountsEnd {
    std::atomic<int>* ended;
    ~CountsEnd() { ++*ended; }
  };
  auto sleeper = [&](absl::Duration d) {
    return [&, d] {
      CountsEnd end{&ended};
      try {
        CRoutine::SleepFor(d);
        ++woke;
      } catch (const RoutineCancelled&) {
        ++cancelled;
        throw;
      }
    };
  };
  ASSERT_TRUE(s.sched.CreateTask("hundred_days", sleeper(kHundredDays)).ok());
  ASSERT_TRUE(s.sched.CreateTask("forever", sleeper(absl::InfiniteDuration())).ok());
  s.Drain();
  EXPECT_EQ(ended.load(), 0) << "right after SleepFor: " << ended.load()
                             << " task(s) ended (cancelled: " << cancelled.load()
                             << ", woke: " << woke.load() << ")";
  s.AdvanceTo(s.clock.Now() + absl::Hours(24 * 10));
  EXPECT_EQ(ended.load(), 0) << "after 10 simulated days";
  EXPECT_EQ(woke.load(), 0);

  ASSERT_TRUE(s.sched.RemoveTask("hundred_days").ok() || ended.load() > 0);
  ASSERT_TRUE(s.sched.RemoveTask("forever").ok() || ended.load() > 0);
  ASSERT_TRUE(Eventually([&] { return ended.load() == 2; }));
  EXPECT_EQ(cancelled.load(), 2);
  EXPECT_EQ(woke.load(), 0);
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
