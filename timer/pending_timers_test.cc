// A timer system's pending user timers (tick_driver.h): PendingTimers(),
// the max_pending_timers cap and CancelAll(). Deterministic on simulated
// clocks, except the two races (threads against the cap's last slot, and
// starts racing CancelAll), which assert counts only.

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/timer_system.h"
#include "timer/testing/holding_dispatcher.h"
#include "timer/testing/timer_options_for_test.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

using timer_test::Oneshot;
using timer_test::Periodic;

constexpr absl::Duration kMs = absl::Milliseconds(1);

TimerSystem::Options ThreadFree(const std::string& name, size_t cap = 0) {
  TimerSystem::Options o;
  o.name = name;
  o.run_thread = false;
  o.max_pending_timers = cap;
  return o;
}

// --- PendingTimers() ---------------------------------------------------------

TEST(PendingTimersTest, CountsTimersWhoseScheduleIsOn) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  HoldingDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher, ThreadFree("count"));
  EXPECT_EQ(driver.PendingTimers(), 0u);

  Timer a(Oneshot("a", 10 * kMs), &driver);
  Timer b(Oneshot("b", 30 * kMs), &driver);
  size_t pending_in_call = 0;
  Timer p(Periodic("p", 20 * kMs,
                   [&] { pending_in_call = driver.PendingTimers(); }),
          &driver);
  EXPECT_EQ(driver.PendingTimers(), 0u);  // constructed, not started
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  ASSERT_TRUE(p.Schedule().ok());
  EXPECT_EQ(driver.PendingTimers(), 3u);
  ASSERT_TRUE(a.Schedule().ok());  // already on: still one
  ASSERT_TRUE(a.Reset().ok());     // a new countdown: still one
  EXPECT_EQ(driver.PendingTimers(), 3u);

  // a is due: queued, still pending; its call begins: a is done.
  clock.Advance(10 * kMs);
  driver.Step(clock.Now());
  ASSERT_EQ(dispatcher.held.size(), 1u);
  EXPECT_EQ(driver.PendingTimers(), 3u);
  dispatcher.RunHeld();
  EXPECT_EQ(a.phase(), TimerPhase::kFired);
  EXPECT_EQ(driver.PendingTimers(), 2u);
  // p is due: pending while queued, while it runs and after.
  clock.Advance(10 * kMs);
  driver.Step(clock.Now());
  ASSERT_EQ(dispatcher.held.size(), 1u);
  EXPECT_EQ(driver.PendingTimers(), 2u);
  dispatcher.RunHeld();
  EXPECT_EQ(pending_in_call, 2u);  // b, and p itself while it runs
  EXPECT_EQ(driver.PendingTimers(), 2u);

  b.Stop();
  EXPECT_EQ(driver.PendingTimers(), 1u);
  {
    Timer c(Oneshot("c", 10 * kMs), &driver);
    ASSERT_TRUE(c.Schedule().ok());
    EXPECT_EQ(driver.PendingTimers(), 2u);
  }  // destroyed while scheduled
  EXPECT_EQ(driver.PendingTimers(), 1u);
  ASSERT_TRUE(p.Configure(Periodic("p", 20 * kMs)).ok());
  EXPECT_EQ(driver.PendingTimers(), 0u);
  EXPECT_EQ(driver.wheel().size(), 0u);
}

// --- The cap -----------------------------------------------------------------

TEST(PendingTimersTest, TheCapRefusesTheStartThatWouldExceedIt) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  InlineDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher, ThreadFree("capped", 2));
  EXPECT_EQ(driver.max_pending_timers(), 2u);
  Timer r1(Oneshot("req_1", 10 * kMs), &driver);
  Timer r2(Oneshot("req_2", 20 * kMs), &driver);
  Timer r3(Oneshot("req_3", 30 * kMs), &driver);
  ASSERT_TRUE(r1.Schedule().ok());
  ASSERT_TRUE(r2.Schedule().ok());

  const absl::Status refused = r3.Schedule();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(),
            "timer \"req_3\": timer system \"capped\" has 2 pending timers, "
            "its cap (max_pending_timers 2); not started");
  EXPECT_EQ(r3.phase(), TimerPhase::kNotStarted);
  EXPECT_FALSE(r3.IsRunning());
  EXPECT_EQ(r3.Reset().code(), absl::StatusCode::kResourceExhausted);
  r3.Start();  // the Cyber surface logs it (AERROR) and does not start
  EXPECT_FALSE(r3.IsRunning());
  EXPECT_EQ(driver.PendingTimers(), 2u);

  // A pending timer's Reset() keeps its slot: not refused.
  ASSERT_TRUE(r1.Reset().ok());
  EXPECT_EQ(driver.PendingTimers(), 2u);

  // A slot freed by a cancel lets the next start in.
  EXPECT_TRUE(r2.Cancel());
  ASSERT_TRUE(r3.Schedule().ok());
  EXPECT_EQ(driver.PendingTimers(), 2u);
  // And one freed by a call: r1 fires (its call begins: no longer pending).
  EXPECT_EQ(r2.Schedule().code(), absl::StatusCode::kResourceExhausted);
  clock.Advance(10 * kMs);
  driver.Step(clock.Now());
  EXPECT_EQ(r1.phase(), TimerPhase::kFired);
  ASSERT_TRUE(r2.Schedule().ok());

  // Settable at run time; lowering it stops nothing.
  driver.set_max_pending_timers(1);
  EXPECT_EQ(driver.PendingTimers(), 2u);
  const absl::Status lowered = r1.Schedule();
  EXPECT_EQ(lowered.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(lowered.message(),
            "timer \"req_1\": timer system \"capped\" has 2 pending timers, "
            "its cap (max_pending_timers 1); not started");
  driver.set_max_pending_timers(0);  // no cap
  ASSERT_TRUE(r1.Schedule().ok());
  EXPECT_EQ(driver.PendingTimers(), 3u);
}

// A periodic timer restarted from its own call (a restart pending) takes a
// slot too, and is refused like any start when there is none.
TEST(PendingTimersTest, ARestartFromTheCallTakesASlot) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  InlineDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher, ThreadFree("capped", 1));
  Timer other(Oneshot("other", 100 * kMs), &driver);
  absl::Status restart;
  std::unique_ptr<Timer> t;
  t = std::make_unique<Timer>(Oneshot("again", 10 * kMs,
                                      [&] {
                                        // Its call began: its slot is free,
                                        // and `other` takes it.
                                        ASSERT_TRUE(other.Schedule().ok());
                                        restart = t->Schedule();
                                      }),
                              &driver);
  ASSERT_TRUE(t->Schedule().ok());
  clock.Advance(10 * kMs);
  driver.Step(clock.Now());
  EXPECT_EQ(restart.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(t->phase(), TimerPhase::kFired);
  EXPECT_EQ(driver.PendingTimers(), 1u);
}

// Exact under races: threads start timers of their own against the last
// slot; exactly one gets it, every round.
TEST(PendingTimersTest, TwoStartsRacingForTheLastSlotNeverBothGetIn) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  InlineDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher, ThreadFree("race", 3));
  Timer held1(Oneshot("held1", absl::Seconds(10)), &driver);
  Timer held2(Oneshot("held2", absl::Seconds(10)), &driver);
  ASSERT_TRUE(held1.Schedule().ok());
  ASSERT_TRUE(held2.Schedule().ok());  // cap - 1 pending
  constexpr int kRounds = 200;
  for (int round = 0; round < kRounds; ++round) {
    Timer x(Oneshot("x", absl::Seconds(10)), &driver);
    Timer y(Oneshot("y", absl::Seconds(10)), &driver);
    std::atomic<int> ready{0};
    bool x_ok = false, y_ok = false;
    auto racer = [&ready](Timer* t, bool* ok) {
      ++ready;
      while (ready.load() < 2) {
      }
      *ok = t->Schedule().ok();
    };
    std::thread tx(racer, &x, &x_ok);
    std::thread ty(racer, &y, &y_ok);
    tx.join();
    ty.join();
    ASSERT_NE(x_ok, y_ok) << "round " << round;
    ASSERT_EQ(driver.PendingTimers(), 3u) << "round " << round;
  }  // x and y destroyed: their slot is free again
}

// --- CancelAll() -------------------------------------------------------------

TEST(PendingTimersTest, CancelAllCancelsEveryPendingTimerOfItsDriverOnly) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  HoldingDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher, ThreadFree("all"));
  TimerSystem elsewhere(&clock, &dispatcher, ThreadFree("elsewhere"));
  std::atomic<int> cancels{0};
  int calls = 0;
  const auto with_hook = [&](TimerOptions o) {
    o.on_cancel = [&cancels] { ++cancels; };
    return o;
  };
  std::vector<std::unique_ptr<Timer>> pending;
  for (int i = 0; i < 3; ++i) {
    pending.push_back(std::make_unique<Timer>(
        with_hook(Oneshot("armed", (20 + i) * kMs, [&] { ++calls; })),
        &driver));
  }
  pending.push_back(std::make_unique<Timer>(
      with_hook(Periodic("periodic", 50 * kMs, [&] { ++calls; })), &driver));
  Timer queued(with_hook(Oneshot("queued", 10 * kMs, [&] { ++calls; })),
               &driver);
  Timer stopped(with_hook(Oneshot("stopped", 10 * kMs)), &driver);
  Timer other(with_hook(Oneshot("other", 10 * kMs, [&] { ++calls; })),
              &elsewhere);
  for (auto& t : pending) ASSERT_TRUE(t->Schedule().ok());
  ASSERT_TRUE(queued.Schedule().ok());
  ASSERT_TRUE(stopped.Schedule().ok());
  stopped.Stop();
  ASSERT_EQ(cancels.load(), 1);
  ASSERT_TRUE(other.Schedule().ok());
  clock.Advance(10 * kMs);
  driver.Step(clock.Now());
  ASSERT_EQ(dispatcher.held.size(), 1u);  // `queued`'s call
  ASSERT_EQ(driver.PendingTimers(), 5u);

  EXPECT_EQ(driver.CancelAll(), 5u);
  EXPECT_EQ(cancels.load(), 1 + 5);
  EXPECT_EQ(driver.PendingTimers(), 0u);
  for (auto& t : pending) EXPECT_EQ(t->phase(), TimerPhase::kCancelled);
  EXPECT_EQ(queued.phase(), TimerPhase::kCancelled);
  EXPECT_EQ(stopped.phase(), TimerPhase::kCancelled);
  dispatcher.RunHeld();  // the queued call drops out
  clock.Advance(100 * kMs);
  driver.Step(clock.Now());
  dispatcher.RunHeld();
  EXPECT_EQ(calls, 0);
  // Another driver's timers are not its business.
  EXPECT_EQ(elsewhere.PendingTimers(), 1u);
  EXPECT_EQ(other.phase(), TimerPhase::kScheduled);
  EXPECT_EQ(driver.CancelAll(), 0u);  // nothing left

  // They are cancelled, not destroyed: they start again.
  ASSERT_TRUE(pending[0]->Schedule().ok());
  EXPECT_EQ(driver.PendingTimers(), 1u);
  EXPECT_EQ(driver.CancelAll(), 1u);
  EXPECT_EQ(elsewhere.CancelAll(), 1u);
  EXPECT_EQ(cancels.load(), 1 + 5 + 2);
}

// From a callback on the same driver: its own running periodic timer is
// cancelled without waiting for itself (as Stop() from the callback).
TEST(PendingTimersTest, CancelAllFromACallbackCancelsItsOwnTimerToo) {
  SimulatedTimerSystem sim;
  size_t cancelled = 0;
  int calls = 0;
  Timer a(Oneshot("a", 100 * kMs), &sim.driver());
  Timer b(Oneshot("b", 200 * kMs), &sim.driver());
  Timer self(Periodic("self", 10 * kMs,
                      [&] {
                        ++calls;
                        cancelled = sim.driver().CancelAll();
                      }),
             &sim.driver());
  ASSERT_TRUE(a.Schedule().ok());
  ASSERT_TRUE(b.Schedule().ok());
  ASSERT_TRUE(self.Schedule().ok());
  sim.RunFor(300 * kMs);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cancelled, 3u);
  EXPECT_EQ(sim.driver().PendingTimers(), 0u);
  EXPECT_EQ(self.phase(), TimerPhase::kCancelled);
}

TEST(PendingTimersTest, CancelAllFindsManyTimersOverEveryStripe) {
  SimulatedTimerSystem sim;
  constexpr int kTimers = 5000;
  std::vector<std::unique_ptr<Timer>> timers;
  std::atomic<int> cancels{0};
  for (int i = 0; i < kTimers; ++i) {
    TimerOptions o = Oneshot("t", (10 + i % 1000) * kMs);
    o.on_cancel = [&cancels] { ++cancels; };
    timers.push_back(std::make_unique<Timer>(std::move(o), &sim.driver()));
    ASSERT_TRUE(timers.back()->Schedule().ok());
  }
  EXPECT_EQ(sim.driver().PendingTimers(), static_cast<size_t>(kTimers));
  EXPECT_EQ(sim.driver().CancelAll(), static_cast<size_t>(kTimers));
  EXPECT_EQ(cancels.load(), kTimers);
  EXPECT_EQ(sim.driver().PendingTimers(), 0u);
  EXPECT_EQ(sim.driver().wheel().size(), 0u);
}

// Starts racing a CancelAll() may or may not be cancelled by it; either
// way the count stays exact: what it cancelled plus what is left pending
// is what was started.
TEST(PendingTimersTest, StartsRacingCancelAllKeepTheCountExact) {
  SimulatedTimerSystem sim;
  constexpr int kTimers = 2000;
  std::vector<std::unique_ptr<Timer>> timers;
  for (int i = 0; i < kTimers; ++i) {
    timers.push_back(
        std::make_unique<Timer>(Oneshot("t", absl::Seconds(10)), &sim.driver()));
  }
  std::atomic<bool> go{false};
  std::thread starter([&] {
    while (!go.load()) {
    }
    for (auto& t : timers) ASSERT_TRUE(t->Schedule().ok());
  });
  go = true;
  const size_t cancelled = sim.driver().CancelAll();
  starter.join();
  size_t scheduled = 0;
  for (auto& t : timers) {
    if (t->phase() == TimerPhase::kScheduled) ++scheduled;
  }
  EXPECT_EQ(cancelled + scheduled, static_cast<size_t>(kTimers));
  EXPECT_EQ(sim.driver().PendingTimers(), scheduled);
}

}  // namespace
}  // namespace timer
}  // namespace cyber
