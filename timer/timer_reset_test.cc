// Timer::Reset() and what Start()/Schedule() do on a running timer, on
// simulated time: the watchdog pattern (a timeout re-armed on every
// message) must count from the latest Reset(), in every state the timer can
// be in when the message comes (armed, its call queued, its call running,
// stopped), and from every caller (another thread, the callback itself).

#include <atomic>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/testing/holding_dispatcher.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

constexpr absl::Duration kTick = kTimerResolution;

TimerOptions Oneshot(absl::Duration delay, std::function<void()> cb) {
  TimerOptions o;
  o.name = "watchdog";
  o.period = delay;
  o.oneshot = true;
  o.callback = std::move(cb);
  return o;
}

TimerOptions Periodic(absl::Duration period, std::function<void(const TimerEvent&)> cb) {
  TimerOptions o;
  o.name = "poller";
  o.period = period;
  o.event_callback = std::move(cb);
  return o;
}

TEST(TimerResetTest, ScheduleOnARunningOneshotKeepsItsDeadline) {
  SimulatedTimerSystem sim;
  std::vector<Instant> fired;
  Timer t(Oneshot(absl::Milliseconds(150), [&] { fired.push_back(sim.Now()); }),
          &sim.driver());
  const Instant start = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(100));
  ASSERT_TRUE(t.Schedule().ok());  // documented: no restart
  t.Start();                       // the Cyber spelling: the same
  sim.RunFor(absl::Milliseconds(200));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0], start + absl::Milliseconds(150));
}

TEST(TimerResetTest, ResetRestartsTheCountdownOfAnArmedOneshot) {
  SimulatedTimerSystem sim;
  std::vector<Instant> fired;
  Timer t(Oneshot(absl::Milliseconds(150), [&] { fired.push_back(sim.Now()); }),
          &sim.driver());
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(100) + absl::Microseconds(500));  // off the grid
  const Instant reset_at = sim.Now();
  ASSERT_TRUE(t.Reset().ok());
  EXPECT_TRUE(t.IsRunning());
  sim.RunFor(absl::Milliseconds(149));
  EXPECT_TRUE(fired.empty()) << "fired at the old deadline, or early";
  sim.RunFor(absl::Milliseconds(10));
  ASSERT_EQ(fired.size(), 1u);
  // now + 150 ms, rounded up to the tick: never early, at most a tick late.
  EXPECT_GE(fired[0], reset_at + absl::Milliseconds(150));
  EXPECT_LT(fired[0], reset_at + absl::Milliseconds(150) + kTick);
  EXPECT_FALSE(t.IsRunning());
}

TEST(TimerResetTest, AWatchdogResetOnEveryMessageFiresOnlyWhenTheMessagesStop) {
  SimulatedTimerSystem sim;
  std::vector<Instant> fired;
  Timer watchdog(Oneshot(absl::Milliseconds(150), [&] { fired.push_back(sim.Now()); }),
                 &sim.driver());
  ASSERT_TRUE(watchdog.Schedule().ok());
  Instant last_message;
  for (int i = 0; i < 100; ++i) {  // 20 Hz fixes for 5 s
    sim.RunFor(absl::Milliseconds(50));
    last_message = sim.Now();
    ASSERT_TRUE(watchdog.Reset().ok());
  }
  EXPECT_TRUE(fired.empty());
  sim.RunFor(absl::Seconds(1));  // the GPS stops
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0], last_message + absl::Milliseconds(150));  // on the tick grid
}

TEST(TimerResetTest, ResetOnAStoppedTimerStartsIt) {
  SimulatedTimerSystem sim;
  int fired = 0;
  Timer t(Oneshot(absl::Milliseconds(20), [&] { ++fired; }), &sim.driver());
  ASSERT_TRUE(t.Reset().ok());
  sim.RunFor(absl::Milliseconds(30));
  EXPECT_EQ(fired, 1);
  t.Stop();
  ASSERT_TRUE(t.Reset().ok());
  sim.RunFor(absl::Milliseconds(30));
  EXPECT_EQ(fired, 2);
}

TEST(TimerResetTest, ResetGivesAPeriodicTimerANewPhaseFromNow) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  Timer t(Periodic(absl::Milliseconds(10), [&](const TimerEvent& e) { events.push_back(e); }),
          &sim.driver());
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(35));
  ASSERT_EQ(events.size(), 3u);
  sim.RunFor(absl::Milliseconds(3));  // 38 ms: a tick boundary
  const Instant reset_at = sim.Now();
  ASSERT_TRUE(t.Reset().ok());
  sim.RunFor(absl::Milliseconds(25));
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[3].expected_time, reset_at + absl::Milliseconds(10));
  EXPECT_EQ(events[4].expected_time, reset_at + absl::Milliseconds(20));
  EXPECT_EQ(events[3].actual_time, events[3].expected_time);
  EXPECT_EQ(t.GetStatistics().missed_periods, 0u);
}

TEST(TimerResetTest, ResetFromItsOwnPeriodicCallbackArmsWhenTheCallEnds) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  int running = 0;
  int overlaps = 0;
  std::unique_ptr<Timer> t;
  Instant reset_at;
  t = std::make_unique<Timer>(
      Periodic(absl::Milliseconds(10),
               [&](const TimerEvent& e) {
                 if (++running > 1) ++overlaps;
                 events.push_back(e);
                 if (events.size() == 2) {
                   sim.clock().Advance(absl::Milliseconds(4));  // work
                   reset_at = sim.Now();
                   ASSERT_TRUE(t->Reset().ok());
                   sim.clock().Advance(absl::Milliseconds(3));  // more work
                 }
                 --running;
               }),
      &sim.driver());
  ASSERT_TRUE(t->Schedule().ok());
  sim.RunFor(absl::Milliseconds(100));
  EXPECT_EQ(overlaps, 0);
  ASSERT_GE(events.size(), 4u);
  // The reset happened at 24 ms, inside call 2 (which ran until 27 ms); the
  // new schedule starts on the tick boundary at or after 24 ms, so its
  // calls are expected at 34 and 44 ms, and are on time.
  EXPECT_EQ(events[2].expected_time, reset_at + absl::Milliseconds(10));
  EXPECT_EQ(events[3].expected_time, reset_at + absl::Milliseconds(20));
  EXPECT_EQ(events[2].actual_time, events[2].expected_time);
}

TEST(TimerResetTest, ResetFromItsOwnOneshotCallbackRunsItAgain) {
  SimulatedTimerSystem sim;
  std::vector<Instant> fired;
  std::unique_ptr<Timer> t;
  t = std::make_unique<Timer>(Oneshot(absl::Milliseconds(20),
                                      [&] {
                                        fired.push_back(sim.Now());
                                        if (fired.size() < 3) {
                                          ASSERT_TRUE(t->Reset().ok());
                                        }
                                      }),
                              &sim.driver());
  const Instant start = sim.Now();
  ASSERT_TRUE(t->Schedule().ok());
  sim.RunFor(absl::Milliseconds(200));
  ASSERT_EQ(fired.size(), 3u);
  EXPECT_EQ(fired[1], start + absl::Milliseconds(40));
  EXPECT_EQ(fired[2], start + absl::Milliseconds(60));
  EXPECT_FALSE(t->IsRunning());
}


TEST(TimerResetTest, ResetWhileTheCallIsQueuedDropsItAndCountsFromNow) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  HoldingDispatcher dispatcher;
  TimerSystem::Options options;
  options.name = "held";
  options.run_thread = false;
  TimerSystem driver(&clock, &dispatcher, options);
  std::vector<Instant> fired;
  Timer t(Oneshot(absl::Milliseconds(10), [&] { fired.push_back(clock.Now()); }), &driver);
  ASSERT_TRUE(t.Schedule().ok());
  clock.Advance(absl::Milliseconds(10));
  driver.Step(clock.Now());
  ASSERT_EQ(dispatcher.held.size(), 1u);  // queued, not begun
  const Instant reset_at = clock.Now();
  ASSERT_TRUE(t.Reset().ok());
  dispatcher.RunHeld();  // the stale run drops out
  EXPECT_TRUE(fired.empty());
  EXPECT_TRUE(t.IsRunning());
  clock.Advance(absl::Milliseconds(10));
  driver.Step(clock.Now());
  dispatcher.RunHeld();
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0], reset_at + absl::Milliseconds(10));
  EXPECT_EQ(t.GetStatistics().fires, 1u);
}

// A Stop() from another thread waits for the running call; the call resets
// its own timer meanwhile. The stop wins, as it does over Start().
TEST(TimerResetTest, AStopThatWaitsWinsOverAResetFromTheCall) {
  SimulatedTimerSystem sim;
  std::atomic<int> calls{0};
  std::unique_ptr<Timer> t;
  std::thread stopper;
  t = std::make_unique<Timer>(
      Periodic(absl::Milliseconds(10),
               [&](const TimerEvent&) {
                 if (++calls != 1) return;
                 stopper = std::thread([&] { t->Stop(); });
                 // IsRunning() turns false when the Stop() has registered.
                 while (t->IsRunning()) std::this_thread::yield();
                 ASSERT_TRUE(t->Reset().ok());
               }),
      &sim.driver());
  ASSERT_TRUE(t->Schedule().ok());
  sim.RunFor(absl::Milliseconds(10));
  stopper.join();
  EXPECT_FALSE(t->IsRunning());
  sim.RunFor(absl::Milliseconds(100));
  EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace timer
}  // namespace cyber
