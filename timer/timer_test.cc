// Timer semantics, deterministically on a SimulatedTimerSystem: callbacks run
// on the tick thread at exactly their tick's instant, and "work" inside a
// callback is simulated by advancing the clock.

#include "timer/timer.h"

#include <atomic>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/testing/timer_options_for_test.h"

namespace cyber {
namespace timer {
namespace {

using timer_test::Oneshot;

constexpr absl::Duration kTick = kTimerResolution;

TimerOptions EventTimer(const std::string& name, absl::Duration period,
                        std::function<void(const TimerEvent&)> cb,
                        OverrunPolicy policy = OverrunPolicy::kSkip) {
  TimerOptions o;
  o.name = name;
  o.period = period;
  o.event_callback = std::move(cb);
  o.overrun_policy = policy;
  return o;
}

// k-th expected time of a schedule started at `origin`.
Instant Expected(Instant origin, absl::Duration period, int64_t k) {
  return origin + period * k;
}

TEST(TimerTest, TenThousandPeriodsStayWithinOneTickDespiteVaryingRunTimes) {
  SimulatedTimerSystem sim;
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> run_us(0, 8000);
  std::vector<TimerEvent> events;
  events.reserve(10000);
  Timer t(EventTimer("imu", absl::Milliseconds(10),
                     [&](const TimerEvent& e) {
                       events.push_back(e);
                       sim.clock().Advance(absl::Microseconds(run_us(rng)));
                     }),
          &sim.driver());
  const Instant origin = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(origin + absl::Milliseconds(10) * 10000);
  t.Stop();
  ASSERT_EQ(events.size(), 10000u);
  for (int k = 1; k <= 10000; ++k) {
    const TimerEvent& e = events[k - 1];
    ASSERT_EQ(e.expected_time, Expected(origin, absl::Milliseconds(10), k));
    const absl::Duration late = e.actual_time - e.expected_time;
    ASSERT_GE(late, absl::ZeroDuration()) << "early at k=" << k;
    ASSERT_LT(late, kTick) << "more than a tick late at k=" << k;
    ASSERT_EQ(e.missed_periods, 0);
  }
  const TimerStatistics s = t.GetStatistics();
  EXPECT_EQ(s.fires, 10000u);
  EXPECT_EQ(s.overruns, 0u);
  EXPECT_LT(s.lateness_max, kTick);
  EXPECT_LE(s.run_time_max, absl::Milliseconds(8));
}

// Every timer keeps counters and exact maxima; percentiles only on request.
TEST(TimerTest, PercentilesOnlyWhereTheOptionsAskForThem) {
  SimulatedTimerSystem sim;
  // Calls 1..10 run 1..10 ms (in simulated time), later ones 0 ms.
  const auto work = [&sim](int* k) {
    return [&sim, k](const TimerEvent&) {
      ++*k;
      if (*k <= 10) sim.clock().Advance(absl::Milliseconds(*k));
    };
  };
  int plain_calls = 0, detailed_calls = 0;
  Timer plain(EventTimer("plain", absl::Milliseconds(20), work(&plain_calls)),
              &sim.driver());
  TimerOptions o = EventTimer("detailed", absl::Milliseconds(20),
                              work(&detailed_calls));
  o.latency_percentiles = true;
  Timer detailed(o, &sim.driver());
  ASSERT_TRUE(plain.Schedule().ok());
  ASSERT_TRUE(detailed.Schedule().ok());
  sim.RunFor(absl::Milliseconds(20) * 20);
  plain.Stop();
  detailed.Stop();
  ASSERT_GE(plain_calls, 10);
  ASSERT_GE(detailed_calls, 10);

  const TimerStatistics p = plain.GetStatistics();
  EXPECT_EQ(p.fires, static_cast<uint64_t>(plain_calls));
  EXPECT_FALSE(p.percentiles);
  EXPECT_EQ(p.run_time_max, absl::Milliseconds(10));
  EXPECT_EQ(p.lateness_p50, absl::ZeroDuration());
  EXPECT_EQ(p.lateness_p99, absl::ZeroDuration());
  EXPECT_EQ(p.run_time_p99, absl::ZeroDuration());

  const TimerStatistics d = detailed.GetStatistics();
  EXPECT_EQ(d.fires, static_cast<uint64_t>(detailed_calls));
  EXPECT_TRUE(d.percentiles);
  EXPECT_EQ(d.run_time_max, absl::Milliseconds(10));
  // p99 of ~20 run times whose largest is 10 ms: that one, as a bucket
  // bound at most 1/8 above it.
  EXPECT_GE(d.run_time_p99, absl::Milliseconds(10));
  EXPECT_LE(d.run_time_p99, absl::Milliseconds(10) * 9 / 8);
  // Both timers share the ticks, so the second one of a tick runs after
  // the first one's work: lateness is measured, not assumed zero.
  EXPECT_GE(d.lateness_p99, d.lateness_p50);
  EXPECT_LE(d.lateness_p99, d.lateness_max + d.lateness_max / 8);
}

// The configuration lives in the timer (no snapshot per call): a callback
// that replaces its own timer's options keeps running with its own
// captures intact (ASan would see them freed otherwise), the new callback
// runs from the next start on, and the old one is destroyed once its call
// has ended.
TEST(TimerTest, CallbackThatReconfiguresItsOwnTimerKeepsItsCaptures) {
  SimulatedTimerSystem sim;
  Timer* self = nullptr;
  std::vector<std::string> log;
  auto alive = std::make_shared<int>(0);
  std::weak_ptr<int> watch = alive;
  TimerOptions first;
  first.name = "self_config";
  first.period = absl::Milliseconds(4);
  first.oneshot = true;
  first.callback = [&self, &log, alive, tag = std::string(64, 'a')] {
    TimerOptions second;
    second.period = absl::Milliseconds(6);
    second.oneshot = true;
    second.callback = [&log] { log.push_back("second"); };
    ASSERT_TRUE(self->Configure(std::move(second)).ok());
    ASSERT_TRUE(self->Schedule().ok());
    // Still this callback's own captures, after its options were replaced.
    log.push_back(tag.substr(0, 1) + std::to_string(*alive));
  };
  Timer t(std::move(first), &sim.driver());
  self = &t;
  alive.reset();  // now only the first callback holds it
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(4));
  EXPECT_EQ(log, std::vector<std::string>({"a0"}));
  EXPECT_TRUE(watch.expired()) << "the replaced callback outlived its call";
  sim.RunFor(absl::Milliseconds(6));
  EXPECT_EQ(log, std::vector<std::string>({"a0", "second"}));
  EXPECT_EQ(t.name(), "self_config");  // an empty name keeps the old one
}

// A Timer without a name is "timer#<n>": errors name it, and Configure()
// without a name keeps whatever name the timer had.
TEST(TimerTest, AutomaticAndKeptNames) {
  SimulatedTimerSystem sim;
  Timer unnamed;
  EXPECT_EQ(unnamed.name().rfind("timer#", 0), 0u) << unnamed.name();
  const absl::Status s = unnamed.Schedule();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find(unnamed.name()), std::string::npos) << s;

  Timer named(Oneshot("request_timeout", absl::Milliseconds(10), [] {}),
              &sim.driver());
  ASSERT_TRUE(named.Configure(Oneshot("", absl::Milliseconds(10), nullptr)).code() ==
              absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(named.name(), "request_timeout");
  const absl::Status bad = named.Schedule();
  EXPECT_NE(bad.message().find("\"request_timeout\""), std::string::npos) << bad;
}

class OddPeriodTest : public ::testing::TestWithParam<int> {};

TEST_P(OddPeriodTest, KeepsTheExactAveragePeriod) {
  const absl::Duration period = absl::Milliseconds(GetParam());
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  Timer t(EventTimer("odd", period,
                     [&](const TimerEvent& e) { events.push_back(e); }),
          &sim.driver());
  const Instant origin = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  constexpr int kN = 3000;
  sim.RunUntil(origin + period * kN);
  t.Stop();
  ASSERT_EQ(events.size(), static_cast<size_t>(kN));
  for (int k = 1; k <= kN; ++k) {
    const absl::Duration late = events[k - 1].actual_time - Expected(origin, period, k);
    ASSERT_GE(late, absl::ZeroDuration());
    ASSERT_LT(late, kTick);
  }
  // Average over the run: exact up to one tick of end-point rounding,
  // divided by the number of periods; no accumulated drift.
  const absl::Duration span = events.back().actual_time - events.front().actual_time;
  const absl::Duration avg = span / (kN - 1);
  EXPECT_LT(absl::AbsDuration(avg - period), kTick / (kN - 1) + absl::Nanoseconds(1));
}

INSTANTIATE_TEST_SUITE_P(NotMultiplesOfTheTick, OddPeriodTest,
                         ::testing::Values(5, 7, 3));

TEST(TimerTest, SkipPolicyFiresOnceLateThenBackOnPhase) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  Timer t(EventTimer("lidar", absl::Milliseconds(20),
                     [&](const TimerEvent& e) {
                       events.push_back(e);
                       if (events.size() == 3) {
                         sim.clock().Advance(absl::Milliseconds(200));
                       }
                     }),
          &sim.driver());
  const Instant origin = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(origin + absl::Milliseconds(600));
  t.Stop();
  // Calls 1..3 on phase (20, 40, 60 ms); call 3 runs until 260 ms. Periods
  // 80..240 are skipped, one late call for 260 happens at once, then 280...
  ASSERT_GE(events.size(), 6u);
  EXPECT_EQ(events[3].expected_time, origin + absl::Milliseconds(260));
  EXPECT_EQ(events[3].missed_periods, 9);  // 80, 100, ..., 240
  EXPECT_EQ(events[3].last_run_duration, absl::Milliseconds(200));
  for (size_t i = 4; i < events.size(); ++i) {
    EXPECT_EQ(events[i].expected_time - events[i - 1].expected_time,
              absl::Milliseconds(20));
    EXPECT_EQ(events[i].missed_periods, 0);
  }
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GE(events[i].actual_time - events[i - 1].actual_time,
              absl::Milliseconds(10))
        << "two fires closer than half a period at " << i;
  }
  for (const TimerEvent& e : events) {
    EXPECT_GE(e.actual_time, e.expected_time);
  }
  const TimerStatistics s = t.GetStatistics();
  EXPECT_EQ(s.overruns, 1u);
  EXPECT_EQ(s.missed_periods, 9u);
  EXPECT_EQ(s.fires, events.size());
}

TEST(TimerTest, SkipPolicyDropsTheLateCallWhenThePhaseIsTooClose) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  Timer t(EventTimer("close", absl::Milliseconds(20),
                     [&](const TimerEvent& e) {
                       events.push_back(e);
                       // Ends at 20 + 55 = 75 ms: the next on-phase call at
                       // 80 ms is only 5 ms away, so no late call for 60.
                       if (events.size() == 1) sim.clock().Advance(absl::Milliseconds(55));
                     }),
          &sim.driver());
  const Instant origin = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(origin + absl::Milliseconds(90));
  t.Stop();
  ASSERT_EQ(events.size(), 2u);  // 20, then 80 (40 and 60 skipped)
  EXPECT_EQ(events[1].expected_time, origin + absl::Milliseconds(80));
  EXPECT_EQ(events[1].missed_periods, 2);
}

TEST(TimerTest, OneTickPeriodRecoversItsPhaseAfterALateRun) {
  // A 2 ms timer whose 5th call runs 2.1 ms (past the next call): one late
  // call at once, then back on its own phase, not a period behind
  // (regression: a late call armed for a processed tick slid to the next).
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  Timer t(EventTimer("fast", absl::Milliseconds(2),
                     [&](const TimerEvent& e) {
                       events.push_back(e);
                       if (events.size() == 5) sim.clock().Advance(absl::Microseconds(2100));
                     }),
          &sim.driver());
  const Instant origin = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(origin + absl::Milliseconds(40));
  t.Stop();
  ASSERT_GE(events.size(), 15u);
  // Call 5 (10 ms) ends at 12.1 ms: the call for 12 ms runs late at once
  // (1.9 ms before 14 ms: at least half a period), then 14 ms on phase.
  EXPECT_EQ(events[5].expected_time, origin + absl::Milliseconds(12));
  EXPECT_EQ(events[5].actual_time, origin + absl::Microseconds(12100));
  EXPECT_EQ(events[6].expected_time, origin + absl::Milliseconds(14));
  for (size_t i = 6; i < events.size(); ++i) {
    EXPECT_EQ(events[i].actual_time, events[i].expected_time) << i;
  }
  EXPECT_EQ(t.GetStatistics().overruns, 1u);
}

TEST(TimerTest, DelayPolicyRebasesOnePeriodAfterTheOverrun) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  Timer t(EventTimer("delay", absl::Milliseconds(20),
                     [&](const TimerEvent& e) {
                       events.push_back(e);
                       if (events.size() == 2) sim.clock().Advance(absl::Milliseconds(50));
                     },
                     OverrunPolicy::kDelay),
          &sim.driver());
  const Instant origin = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(origin + absl::Milliseconds(200));
  t.Stop();
  // Second call at 40 ms ends at 90 ms; then 110, 130, ...
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events[2].expected_time, origin + absl::Milliseconds(110));
  EXPECT_EQ(events[3].expected_time, origin + absl::Milliseconds(130));
  EXPECT_EQ(events[2].missed_periods, 2);  // 60 and 80 never called
}

TEST(TimerTest, BurstPolicyCatchesUpBackToBackCapped) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  TimerOptions o = EventTimer("burst", absl::Milliseconds(10),
                              [&](const TimerEvent& e) {
                                events.push_back(e);
                                if (events.size() == 1) sim.clock().Advance(absl::Milliseconds(75));
                              },
                              OverrunPolicy::kBurst);
  o.max_burst = 3;
  Timer t(o, &sim.driver());
  const Instant origin = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(origin + absl::Milliseconds(120));
  t.Stop();
  // Call 1 (10 ms) ends at 85 ms: periods 20..80 (7) were missed; the three
  // latest (60, 70, 80) are caught up back to back, 20..50 skipped; then 90.
  ASSERT_GE(events.size(), 6u);
  EXPECT_EQ(events[1].expected_time, origin + absl::Milliseconds(60));
  EXPECT_EQ(events[1].missed_periods, 4);
  EXPECT_EQ(events[2].expected_time, origin + absl::Milliseconds(70));
  EXPECT_EQ(events[3].expected_time, origin + absl::Milliseconds(80));
  EXPECT_EQ(events[4].expected_time, origin + absl::Milliseconds(90));
  // The catch-up calls are back to back: one tick apart at most.
  EXPECT_LE(events[3].actual_time - events[1].actual_time, 2 * kTick);
  EXPECT_EQ(events[4].actual_time, origin + absl::Milliseconds(90));
}

TEST(TimerTest, OneshotFiresOnceAndCanBeStartedAgain) {
  SimulatedTimerSystem sim;
  std::vector<Instant> fired;
  Timer t(Oneshot("timeout", absl::Milliseconds(7), [&] { fired.push_back(sim.Now()); }),
          &sim.driver());
  const Instant start = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  EXPECT_TRUE(t.IsRunning());
  sim.RunFor(absl::Milliseconds(50));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_GE(fired[0], start + absl::Milliseconds(7));
  EXPECT_LT(fired[0], start + absl::Milliseconds(7) + kTick);
  EXPECT_FALSE(t.IsRunning());
  const Instant restart = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(50));
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_GE(fired[1], restart + absl::Milliseconds(7));
}

TEST(TimerTest, CancelledOneshotNeverFires) {
  SimulatedTimerSystem sim;
  int fired = 0;
  Timer t(Oneshot("request_timeout", absl::Milliseconds(200), [&] { ++fired; }),
          &sim.driver());
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(150));
  t.Stop();  // the answer came
  sim.RunFor(absl::Seconds(10));
  EXPECT_EQ(fired, 0);
}

TEST(TimerTest, StopFromInsideItsOwnCallbackReturnsAndEndsTheTimer) {
  SimulatedTimerSystem sim;
  int fired = 0;
  std::unique_ptr<Timer> t;
  t = std::make_unique<Timer>(EventTimer("self_stop", absl::Milliseconds(10),
                                         [&](const TimerEvent&) {
                                           if (++fired == 3) t->Stop();
                                         }),
                              &sim.driver());
  ASSERT_TRUE(t->Schedule().ok());
  sim.RunFor(absl::Milliseconds(200));  // would hang if Stop deadlocked
  EXPECT_EQ(fired, 3);
  EXPECT_FALSE(t->IsRunning());
}

TEST(TimerTest, DestroyingTheTimerFromItsOwnCallbackIsSafe) {
  SimulatedTimerSystem sim;
  int fired = 0;
  std::unique_ptr<Timer> t;
  t = std::make_unique<Timer>(EventTimer("self_destroy", absl::Milliseconds(10),
                                         [&](const TimerEvent&) {
                                           ++fired;
                                           t.reset();
                                         }),
                              &sim.driver());
  ASSERT_TRUE(t->Schedule().ok());
  sim.RunFor(absl::Milliseconds(100));
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(t, nullptr);
}

TEST(TimerTest, StartAfterStopStartsANewScheduleFromNow) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  Timer t(EventTimer("restart", absl::Milliseconds(10),
                     [&](const TimerEvent& e) { events.push_back(e); }),
          &sim.driver());
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(35));
  t.Stop();
  ASSERT_EQ(events.size(), 3u);
  sim.RunFor(absl::Milliseconds(3));
  const Instant restart = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(25));
  ASSERT_EQ(events.size(), 5u);
  // The new schedule starts at the first tick boundary at or after the
  // restart (35 + 3 = 38 ms is one; the epoch is tick-aligned).
  EXPECT_EQ(events[3].expected_time, restart + absl::Milliseconds(10));
  EXPECT_EQ(events[4].expected_time, restart + absl::Milliseconds(20));
  EXPECT_EQ(events[3].actual_time, events[3].expected_time);
}

TEST(TimerTest, PeriodicScheduleStartsOnATickBoundaryNeverEarly) {
  SimulatedTimerSystem sim;
  sim.RunFor(absl::Microseconds(2700));  // off the tick grid
  std::vector<TimerEvent> events;
  Timer t(EventTimer("aligned", absl::Milliseconds(10),
                     [&](const TimerEvent& e) { events.push_back(e); }),
          &sim.driver());
  const Instant scheduled = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(45));
  t.Stop();
  ASSERT_EQ(events.size(), 4u);
  // Origin = next tick boundary (4 ms after the sim start), not 2.7 ms.
  const Instant origin = scheduled + absl::Microseconds(1300);
  for (int k = 1; k <= 4; ++k) {
    EXPECT_EQ(events[k - 1].expected_time, origin + absl::Milliseconds(10) * k);
    EXPECT_EQ(events[k - 1].actual_time, events[k - 1].expected_time);  // on the tick
  }
  EXPECT_GE(events[0].actual_time - scheduled, absl::Milliseconds(10));
}

TEST(TimerTest, DestructorStops) {
  SimulatedTimerSystem sim;
  int fired = 0;
  {
    Timer t(EventTimer("scoped", absl::Milliseconds(10),
                       [&](const TimerEvent&) { ++fired; }),
            &sim.driver());
    ASSERT_TRUE(t.Schedule().ok());
    sim.RunFor(absl::Milliseconds(25));
  }
  sim.RunFor(absl::Seconds(1));
  EXPECT_EQ(fired, 2);
}

TEST(TimerTest, ThrowingCallbackIsCountedAndThePeriodicTimerKeepsRunning) {
  SimulatedTimerSystem sim;
  int calls = 0;
  Timer t(EventTimer("flaky", absl::Milliseconds(10),
                     [&](const TimerEvent&) {
                       ++calls;
                       if (calls % 2 == 0) throw std::runtime_error("sensor read failed");
                       if (calls == 5) throw 42;  // not a std::exception
                     }),
          &sim.driver());
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(100));
  const std::string log = ::testing::internal::GetCapturedStderr();
  t.Stop();
  EXPECT_EQ(calls, 10);
  const TimerStatistics s = t.GetStatistics();
  EXPECT_EQ(s.fires, 10u);
  EXPECT_EQ(s.exceptions, 6u);  // 2, 4, 5, 6, 8, 10
  EXPECT_NE(log.find("timer \"flaky\": callback threw: sensor read failed"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("non-std::exception"), std::string::npos) << log;
}

TEST(TimerTest, CallbacksMayArmAndStopOtherTimers) {
  SimulatedTimerSystem sim;
  std::vector<std::unique_ptr<Timer>> spawned;
  int child_fires = 0;
  Timer parent(EventTimer("parent", absl::Milliseconds(10),
                          [&](const TimerEvent&) {
                            auto child = std::make_unique<Timer>(
                                Oneshot("child", absl::Milliseconds(4),
                                        [&] { ++child_fires; }),
                                &sim.driver());
                            ASSERT_TRUE(child->Schedule().ok());
                            spawned.push_back(std::move(child));
                          }),
               &sim.driver());
  ASSERT_TRUE(parent.Schedule().ok());
  sim.RunFor(absl::Milliseconds(105));
  parent.Stop();
  sim.RunFor(absl::Milliseconds(10));
  EXPECT_EQ(spawned.size(), 10u);
  EXPECT_EQ(child_fires, 10);
}

TEST(TimerTest, ACallbackArmingThousandsOfTimersLosesNoneAndFiresNoneEarly) {
  SimulatedTimerSystem sim;
  constexpr int kChildren = 5000;
  std::vector<std::unique_ptr<Timer>> children;
  std::vector<int> fired(kChildren, 0);
  std::vector<Instant> deadline(kChildren);
  std::vector<Instant> fired_at(kChildren);
  Timer parent(Oneshot("spawner", absl::Milliseconds(4), [&] {
                 for (int i = 0; i < kChildren; ++i) {
                   const absl::Duration delay = absl::Microseconds(2000 + 997 * i);
                   deadline[i] = sim.Now() + delay;
                   children.push_back(std::make_unique<Timer>(
                       Oneshot("child", delay, [&, i] {
                         ++fired[i];
                         fired_at[i] = sim.Now();
                       }),
                       &sim.driver()));
                   ASSERT_TRUE(children.back()->Schedule().ok());
                 }
               }),
               &sim.driver());
  ASSERT_TRUE(parent.Schedule().ok());
  sim.RunFor(absl::Seconds(6));
  ASSERT_EQ(children.size(), static_cast<size_t>(kChildren));
  for (int i = 0; i < kChildren; ++i) {
    ASSERT_EQ(fired[i], 1) << "child " << i;
    ASSERT_GE(fired_at[i], deadline[i]) << "child " << i << " fired early";
    ASSERT_LT(fired_at[i] - deadline[i], kTick) << "child " << i;
  }
}

TEST(TimerTest, OneshotScheduledFromItsOwnCallbackFiresAgain) {
  // Regression (tests/fuzz/timer_ops_fuzzer, also the soak tool): the
  // oneshot was still "running" inside its own callback, so Schedule()
  // there returned OK, did nothing, and the timer never fired again.
  SimulatedTimerSystem sim;
  std::vector<Instant> fired;
  std::vector<bool> running_inside;
  absl::Status restarted = absl::UnknownError("not called");
  std::unique_ptr<Timer> t;
  t = std::make_unique<Timer>(Oneshot("rearming", absl::Milliseconds(10),
                                      [&] {
                                        fired.push_back(sim.Now());
                                        running_inside.push_back(t->IsRunning());
                                        if (fired.size() < 3) restarted = t->Schedule();
                                      }),
                              &sim.driver());
  const Instant start = sim.Now();  // on the tick grid
  ASSERT_TRUE(t->Schedule().ok());
  sim.RunFor(absl::Milliseconds(100));
  EXPECT_TRUE(restarted.ok()) << restarted;
  ASSERT_EQ(fired.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(fired[i], start + absl::Milliseconds(10) * (i + 1)) << i;
    EXPECT_FALSE(running_inside[i]) << "a oneshot is done once its call begins";
  }
  EXPECT_FALSE(t->IsRunning());
  EXPECT_EQ(t->GetStatistics().fires, 3u);
}

TEST(TimerTest, TheMaximumPeriodIsAcceptedOffTheTickGridAndAfterALongIdleWheel) {
  // Regression (tests/fuzz/timer_ops_fuzzer): the wheel measured the maximum
  // delay from its last processed tick, which an idle (tickless) wheel does
  // not advance, so Schedule() of a valid period failed with OutOfRange:
  // always for the maximum period off the tick grid, and for a 24 h timer
  // after the wheel had been idle for 75+ days.
  SimulatedTimerSystem sim;
  const absl::Duration max = sim.driver().wheel().max_delay();
  sim.RunFor(absl::Microseconds(2700));  // off the tick grid
  Timer longest(EventTimer("longest", max, [](const TimerEvent&) {}), &sim.driver());
  EXPECT_TRUE(longest.Schedule().ok());
  Timer longest_oneshot(Oneshot("longest_oneshot", max, [] {}), &sim.driver());
  EXPECT_TRUE(longest_oneshot.Schedule().ok());
  longest.Stop();
  longest_oneshot.Stop();
  sim.RunFor(absl::Hours(24 * 99));  // nothing armed: the wheel stays behind
  std::vector<TimerEvent> events;
  Timer daily(EventTimer("daily", absl::Hours(24),
                         [&](const TimerEvent& e) { events.push_back(e); }),
              &sim.driver());
  const Instant scheduled = sim.Now();
  ASSERT_TRUE(daily.Schedule().ok());
  sim.RunUntil(scheduled + absl::Hours(24) + absl::Milliseconds(5));
  daily.Stop();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_GE(events[0].expected_time, scheduled + absl::Hours(24));
  EXPECT_LT(events[0].expected_time, scheduled + absl::Hours(24) + kTick);
  EXPECT_EQ(events[0].actual_time, events[0].expected_time);
}

// --- Bad input: a clear error naming the timer and the value ---------------

struct BadCase {
  const char* what;
  TimerOptions options;
  absl::StatusCode code;
  const char* message;
};

TEST(TimerTest, BadOptionsAreRejectedWithClearErrors) {
  SimulatedTimerSystem sim;
  auto base = [] {
    TimerOptions o;
    o.name = "imu_poll";
    o.period = absl::Milliseconds(10);
    o.callback = [] {};
    return o;
  };
  std::vector<BadCase> cases;
  {
    TimerOptions o = base();
    o.period = absl::ZeroDuration();
    cases.push_back({"zero", o, absl::StatusCode::kInvalidArgument,
                     "timer \"imu_poll\": period 0 must be positive"});
  }
  {
    TimerOptions o = base();
    o.period = absl::Milliseconds(-5);
    cases.push_back({"negative", o, absl::StatusCode::kInvalidArgument,
                     "period -5ms must be positive"});
  }
  {
    TimerOptions o = base();
    o.callback = nullptr;
    cases.push_back({"no callback", o, absl::StatusCode::kInvalidArgument,
                     "timer \"imu_poll\": callback is empty"});
  }
  {
    TimerOptions o = base();
    o.overrun_policy = OverrunPolicy::kBurst;
    o.max_burst = 0;
    cases.push_back({"burst 0", o, absl::StatusCode::kInvalidArgument,
                     "max_burst 0 must be at least 1"});
  }
  for (const BadCase& c : cases) {
    Timer t(TimerOptions(), &sim.driver());
    const absl::Status configured = t.Configure(c.options);
    EXPECT_EQ(configured.code(), c.code) << c.what << ": " << configured;
    EXPECT_NE(configured.message().find(c.message), std::string::npos)
        << c.what << ": " << configured;
    // Schedule() reports the same error; nothing runs.
    const absl::Status scheduled = t.Schedule();
    EXPECT_EQ(scheduled, configured) << c.what;
    EXPECT_FALSE(t.IsRunning()) << c.what;
  }
  // The 24 h promise holds.
  TimerOptions day = base();
  day.period = absl::Hours(24);
  Timer t(day, &sim.driver());
  EXPECT_TRUE(t.Schedule().ok());
}

TEST(TimerTest, EmptyOptionsAreAnError) {
  SimulatedTimerSystem sim;
  Timer t(TimerOptions(), &sim.driver());
  const absl::Status s = t.Schedule();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // An unnamed timer gets a unique name, used in its errors.
  EXPECT_NE(s.message().find("timer \"timer#"), std::string::npos) << s;
}

TEST(TimerTest, TwentyFourHourPeriodicFiresOnTheDot) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  Timer t(EventTimer("daily", absl::Hours(24),
                     [&](const TimerEvent& e) { events.push_back(e); }),
          &sim.driver());
  const Instant origin = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(origin + absl::Hours(72));
  t.Stop();
  ASSERT_EQ(events.size(), 3u);
  for (int k = 1; k <= 3; ++k) {
    EXPECT_EQ(events[k - 1].expected_time, origin + absl::Hours(24) * k);
    EXPECT_LT(events[k - 1].actual_time - events[k - 1].expected_time, kTick);
  }
  // Tickless: three days cost a few hundred wake-ups (the cascades down
  // the wheel's levels plus the final approach), not 500 per second.
  EXPECT_LT(sim.driver().stats().wakeups, 20000u);
}

TEST(TimerTest, OneHundredMillisecondTimerWakesTheTickThreadTenTimesASecond) {
  SimulatedTimerSystem sim;
  int fires = 0;
  Timer t(EventTimer("slow", absl::Milliseconds(100),
                     [&](const TimerEvent&) { ++fires; }),
          &sim.driver());
  ASSERT_TRUE(t.Schedule().ok());
  const uint64_t before = sim.driver().stats().wakeups;
  sim.RunFor(absl::Seconds(10));
  const uint64_t wakeups = sim.driver().stats().wakeups - before;
  t.Stop();
  EXPECT_EQ(fires, 100);
  // One wake per call plus the occasional cascade: target <= 11/s.
  EXPECT_LE(wakeups, 110u);
}

// A dispatcher that refuses everything, then accepts (inline).
class RefusingDispatcher : public Dispatcher {
 public:
  using Dispatcher::Dispatch;
  bool Dispatch(std::function<void()> task, int /*priority*/) override {
    if (refuse_.load()) return false;
    task();
    return true;
  }
  std::atomic<bool> refuse_{true};
};

TEST(TimerTest, DispatchRefusalIsCountedAndThePeriodicTimerStillReArms) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  RefusingDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher);
  std::vector<TimerEvent> events;
  Timer t(EventTimer("refused", absl::Milliseconds(10),
                     [&](const TimerEvent& e) { events.push_back(e); }),
          &driver);
  const Instant origin = clock.Now();
  ASSERT_TRUE(t.Schedule().ok());
  auto run_until = [&](Instant end) {
    while (true) {
      driver.AwaitIdle();
      const Instant next = driver.PlannedWake();
      if (next > end) break;
      clock.AdvanceTo(next);
    }
  };
  run_until(origin + absl::Milliseconds(35));
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(t.GetStatistics().dispatch_refusals, 3u);
  dispatcher.refuse_ = false;
  run_until(origin + absl::Milliseconds(55));
  t.Stop();
  ASSERT_EQ(events.size(), 2u);  // 40 and 50 ms: still on phase
  EXPECT_EQ(events[0].expected_time, origin + absl::Milliseconds(40));
  EXPECT_EQ(events[0].missed_periods, 3);
  EXPECT_EQ(t.GetStatistics().missed_periods, 3u);
}

TEST(TimerTest, RefusedOneshotRetriesUntilAccepted) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  RefusingDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher);
  int fired = 0;
  Timer t(Oneshot("retry", absl::Milliseconds(10), [&] { ++fired; }), &driver);
  ASSERT_TRUE(t.Schedule().ok());
  for (int i = 0; i < 5; ++i) {
    driver.AwaitIdle();
    clock.AdvanceTo(driver.PlannedWake());
  }
  driver.AwaitIdle();
  EXPECT_EQ(fired, 0);
  EXPECT_GE(t.GetStatistics().dispatch_refusals, 4u);
  dispatcher.refuse_ = false;
  clock.AdvanceTo(driver.PlannedWake());
  driver.AwaitIdle();
  EXPECT_EQ(fired, 1);  // not lost
}

}  // namespace
}  // namespace timer
}  // namespace cyber
