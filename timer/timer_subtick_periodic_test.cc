// Periodic timers of any positive period (issue 24, item 2), on simulated
// time: below the tick (1 ms, 500 us, 1.5 ms) and between ticks (3, 5, 7 ms)
// alike, the schedule starts at s, the first tick boundary at or after
// Schedule(), and call k runs at exactly s + k * period: on the simulated
// clock actual_time == expected_time for every call, never early, no drift,
// nothing skipped. A 1 kHz loop (1 ms) is 1,000 calls per simulated second,
// on the modern surface and on Cyber RT's Timer(1, cb, false). A period of
// zero or less stays an error naming the timer and the value.
//
// The modern surface runs on a SimulatedTimerSystem (timer/testing); the
// Cyber surface, which takes no TimerSystem, inside a SimulatedGraph's
// runtime.

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cyber/common/runtime_scope.h"
#include "cyber/simulation/simulated_graph.h"
#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "tests/reference/timer_model.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

constexpr absl::Duration kTick = kTimerResolution;

// The first tick boundary at or after `t` on the grid of a system whose
// epoch (its clock's reading when it was made) is `epoch`, by the reference
// model's arithmetic (independent of the wheel's).
Instant TickCeil(Instant epoch, Instant t) {
  return reference::TickGrid(epoch, kTick).CeilInstant(t);
}

TimerOptions Periodic(const std::string& name, absl::Duration period,
                      std::vector<TimerEvent>* events) {
  TimerOptions o;
  o.name = name;
  o.period = period;
  o.event_callback = [events](const TimerEvent& e) { events->push_back(e); };
  return o;
}

struct Case {
  absl::Duration period;
  absl::Duration offset;  // Schedule() this long after a tick boundary
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << "period " << absl::FormatDuration(c.period) << ", scheduled "
      << absl::FormatDuration(c.offset) << " after a tick boundary";
}

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  return "period_" + std::to_string(absl::ToInt64Microseconds(info.param.period)) +
         "us_at_" + std::to_string(absl::ToInt64Microseconds(info.param.offset)) + "us";
}

class SubTickPeriodicTest : public testing::TestWithParam<Case> {};

TEST_P(SubTickPeriodicTest, EveryCallIsExactlyOnItsPhaseForOneSecond) {
  const absl::Duration period = GetParam().period;
  SimulatedTimerSystem sim;
  const Instant epoch = sim.Now();
  sim.RunFor(absl::Milliseconds(10) + GetParam().offset);
  std::vector<TimerEvent> events;
  std::vector<Instant> now_in_callback;
  TimerOptions o = Periodic("fast", period, &events);
  o.event_callback = [&](const TimerEvent& e) {
    events.push_back(e);
    now_in_callback.push_back(sim.Now());
  };
  Timer t(o, &sim.driver());
  const Instant scheduled = sim.Now();
  const absl::Status s = t.Schedule();
  ASSERT_TRUE(s.ok()) << s;
  const Instant start = TickCeil(epoch, scheduled);
  const int64_t n = absl::Seconds(1) / period;  // calls in one second
  sim.RunUntil(start + period * n + period / 2);
  t.Stop();
  ASSERT_EQ(events.size(), static_cast<size_t>(n));
  for (int64_t k = 1; k <= n; ++k) {
    const TimerEvent& e = events[k - 1];
    ASSERT_EQ(e.expected_time, start + period * k) << "call " << k;
    ASSERT_EQ(e.actual_time, e.expected_time) << "call " << k;
    ASSERT_EQ(now_in_callback[k - 1], e.expected_time) << "call " << k;
    ASSERT_EQ(e.missed_periods, 0) << "call " << k;
  }
  EXPECT_GE(events[0].actual_time, scheduled + period) << "first call early";
  const TimerStatistics stats = t.GetStatistics();
  EXPECT_EQ(stats.fires, static_cast<uint64_t>(n));
  EXPECT_EQ(stats.early_fires, 0u);
  EXPECT_EQ(stats.missed_periods, 0u);
  EXPECT_EQ(stats.overruns, 0u);
  EXPECT_EQ(stats.lateness_max, absl::ZeroDuration());
}

INSTANTIATE_TEST_SUITE_P(
    AnyPositivePeriod, SubTickPeriodicTest,
    testing::Values(Case{absl::Milliseconds(1), absl::ZeroDuration()},
                    Case{absl::Milliseconds(1), absl::Microseconds(700)},
                    Case{absl::Microseconds(500), absl::ZeroDuration()},
                    Case{absl::Microseconds(500), absl::Microseconds(1300)},
                    Case{absl::Microseconds(1500), absl::ZeroDuration()},
                    Case{absl::Microseconds(1500), absl::Microseconds(300)},
                    Case{absl::Milliseconds(3), absl::ZeroDuration()},
                    Case{absl::Milliseconds(3), absl::Microseconds(1100)},
                    Case{absl::Milliseconds(5), absl::ZeroDuration()},
                    Case{absl::Milliseconds(7), absl::Microseconds(1999)}),
    CaseName);

TEST(SubTickPeriodicTest, OneMillisecondForSixtySimulatedSecondsIsSixtyThousandCalls) {
  SimulatedTimerSystem sim;
  std::vector<Instant> expected, actual;
  expected.reserve(60001);
  actual.reserve(60001);
  TimerOptions o;
  o.name = "one_khz";
  o.period = absl::Milliseconds(1);
  o.event_callback = [&](const TimerEvent& e) {
    expected.push_back(e.expected_time);
    actual.push_back(e.actual_time);
  };
  Timer t(o, &sim.driver());
  const Instant start = sim.Now();  // on a tick boundary
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(start + absl::Seconds(60));
  t.Stop();
  ASSERT_EQ(actual.size(), 60000u);
  for (int64_t k = 1; k <= 60000; ++k) {
    ASSERT_EQ(expected[k - 1], start + absl::Milliseconds(k)) << "call " << k;
    ASSERT_EQ(actual[k - 1], expected[k - 1]) << "call " << k;
  }
  EXPECT_EQ(t.GetStatistics().missed_periods, 0u);
  EXPECT_EQ(t.GetStatistics().early_fires, 0u);
}

TEST(SubTickPeriodicTest, ResetRestartsASubTickScheduleFromTheNextTickBoundary) {
  SimulatedTimerSystem sim;
  const Instant epoch = sim.Now();
  std::vector<TimerEvent> events;
  Timer t(Periodic("fast", absl::Milliseconds(1), &events), &sim.driver());
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunFor(absl::Milliseconds(10) + absl::Microseconds(700));
  ASSERT_EQ(events.size(), 10u);
  const Instant reset_at = sim.Now();
  ASSERT_TRUE(t.Reset().ok());
  const Instant start = TickCeil(epoch, reset_at);  // 12 ms
  sim.RunUntil(start + absl::Milliseconds(5));
  t.Stop();
  ASSERT_EQ(events.size(), 15u);
  for (int k = 1; k <= 5; ++k) {
    EXPECT_EQ(events[9 + k].expected_time, start + absl::Milliseconds(k)) << k;
    EXPECT_EQ(events[9 + k].actual_time, events[9 + k].expected_time) << k;
  }
}

TEST(SubTickPeriodicTest, APeriodOfZeroOrLessIsAnErrorNamingTheTimerAndTheValue) {
  SimulatedTimerSystem sim;
  for (absl::Duration bad : {absl::ZeroDuration(), -absl::Milliseconds(5),
                             -absl::Microseconds(500), -absl::Nanoseconds(1)}) {
    SCOPED_TRACE(absl::FormatDuration(bad));
    std::vector<TimerEvent> events;
    Timer t(TimerOptions(), &sim.driver());
    const absl::Status configured = t.Configure(Periodic("imu", bad, &events));
    EXPECT_EQ(configured.code(), absl::StatusCode::kInvalidArgument) << configured;
    EXPECT_NE(configured.message().find("\"imu\""), std::string::npos) << configured;
    EXPECT_NE(configured.message().find("period " + absl::FormatDuration(bad)),
              std::string::npos)
        << configured;
    const absl::Status scheduled = t.Schedule();
    EXPECT_EQ(scheduled.code(), absl::StatusCode::kInvalidArgument) << scheduled;
    EXPECT_FALSE(t.IsRunning());
    sim.RunFor(absl::Seconds(1));
    EXPECT_TRUE(events.empty());
  }
}

// --- Cyber RT's Timer(1, cb, false): 1 kHz ----------------------------------

TEST(SubTickPeriodicCyberTest, OneMillisecondTimerRunsAtOneKilohertzOnSimulatedTime) {
  SimulatedGraph graph;
  std::vector<Instant> calls;
  std::unique_ptr<Timer> t;
  const Instant start = graph.Now();  // on a tick boundary
  {
    ScopedRuntime enter(graph.runtime().scope());
    t = std::make_unique<Timer>(1, [&] { calls.push_back(graph.Now()); }, false);
    t->Start();
  }
  ASSERT_TRUE(t->IsRunning()) << "Timer(1, cb, false) refused";
  graph.RunFor(absl::Seconds(1));
  ASSERT_EQ(calls.size(), 1000u);
  for (int k = 1; k <= 1000; ++k) {
    ASSERT_EQ(calls[k - 1], start + absl::Milliseconds(k)) << "call " << k;
  }
  graph.RunFor(absl::Seconds(1));
  EXPECT_EQ(calls.size(), 2000u);
  t->Stop();
  EXPECT_EQ(t->GetStatistics().early_fires, 0u);
  t.reset();
}

}  // namespace
}  // namespace timer
}  // namespace cyber
