// The periodic schedule and its overrun policies, without threads, clocks or
// a wheel: every call is armed for its exact instant, so a run's end is all
// the schedule needs.

#include "timer/periodic_schedule.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace cyber {
namespace timer {
namespace {

const Instant kEpoch = Instant() + absl::Hours(1);

Instant At(int64_t ms) { return kEpoch + absl::Milliseconds(ms); }

TimerOptions Periodic(int64_t period_ms, OverrunPolicy policy, int max_burst = 3) {
  TimerOptions o;
  o.period = absl::Milliseconds(period_ms);
  o.overrun_policy = policy;
  o.max_burst = max_burst;
  return o;
}

PeriodicSchedule::Next RunEndedAt(PeriodicSchedule& s, Instant end,
                                  const TimerOptions& o) {
  return s.AfterRun(end, o);
}

TEST(PeriodicScheduleTest, PhaseLockedOverTenThousandOnTimeCalls) {
  const TimerOptions o = Periodic(10, OverrunPolicy::kSkip);
  PeriodicSchedule s;
  s.Start(At(0));
  for (int i = 0; i < 10000; ++i) {
    const Instant expected = s.Expected(s.call(), o.period);
    // Each run ends 3 ms after its expected instant: on time for the next.
    const PeriodicSchedule::Next next = RunEndedAt(s, expected + absl::Milliseconds(3), o);
    ASSERT_FALSE(next.overrun) << "call " << i;
    ASSERT_EQ(next.skipped, 0);
  }
  EXPECT_EQ(s.call(), 10001);
  // No drift: the k-th expected instant is origin + k * period exactly.
  EXPECT_EQ(s.Expected(s.call(), o.period), At(100010));
}

TEST(PeriodicScheduleTest, SkipMakesOneLateCallForTheLatestMissedPeriod) {
  const TimerOptions o = Periodic(10, OverrunPolicy::kSkip);
  PeriodicSchedule s;
  s.Start(At(0));
  // Call 1 (10 ms) ran until 31 ms: calls 2 (20) and 3 (30) cannot fire at
  // their instants. The late call for 3 at 31 ms is 9 ms before call 4
  // (40 ms), at least half a period: it stays, call 2 is skipped.
  const PeriodicSchedule::Next next = RunEndedAt(s, At(31), o);
  EXPECT_TRUE(next.overrun);
  EXPECT_EQ(next.skipped, 1);
  EXPECT_EQ(s.call(), 3);
  EXPECT_EQ(s.Expected(s.call(), o.period), At(30));  // the phase is kept
}

TEST(PeriodicScheduleTest, SkipDropsALateCallTooCloseToTheNextOnPhaseCall) {
  const TimerOptions o = Periodic(10, OverrunPolicy::kSkip);
  PeriodicSchedule s;
  s.Start(At(0));
  // Ran until 36 ms: a late call then would be 4 ms before call 4
  // (40 ms), less than half a period: calls 2 and 3 are skipped.
  const PeriodicSchedule::Next next = RunEndedAt(s, At(36), o);
  EXPECT_TRUE(next.overrun);
  EXPECT_EQ(next.skipped, 2);
  EXPECT_EQ(s.call(), 4);
  EXPECT_EQ(s.Expected(s.call(), o.period), At(40));
}

TEST(PeriodicScheduleTest, SkipNeverSchedulesTwoCallsCloserThanHalfAPeriod) {
  for (int64_t period_us : {500, 1000, 3000, 4000, 5000, 7000, 10000, 33000}) {
    TimerOptions o = Periodic(0, OverrunPolicy::kSkip);
    o.period = absl::Microseconds(period_us);
    for (int64_t end_us = period_us; end_us < 12 * period_us; end_us += 100) {
      PeriodicSchedule s;
      s.Start(At(0));
      const Instant end = At(0) + absl::Microseconds(end_us);
      const PeriodicSchedule::Next next = s.AfterRun(end, o);
      // The next call fires at its instant, or at once if that has passed.
      const Instant fires = std::max(s.Expected(s.call(), o.period), end);
      EXPECT_GE(fires, end);
      if (!next.overrun) continue;
      const Instant then = s.Expected(s.call() + 1, o.period);
      EXPECT_GE(then - fires, o.period / 2) << "period " << period_us << " us, end " << end_us;
      EXPECT_GE(next.skipped, 0);
    }
  }
}

TEST(PeriodicScheduleTest, ACallExpectedAtTheRunsEndIsOnTime) {
  const TimerOptions o = Periodic(10, OverrunPolicy::kSkip);
  PeriodicSchedule s;
  s.Start(At(0));
  EXPECT_FALSE(RunEndedAt(s, At(20), o).overrun);  // call 2 is due right now
  EXPECT_EQ(s.call(), 2);
  PeriodicSchedule t;
  t.Start(At(0));
  EXPECT_TRUE(RunEndedAt(t, At(20) + absl::Nanoseconds(1), o).overrun);
}

TEST(PeriodicScheduleTest, SubTickPeriodsArePhaseLocked) {
  for (absl::Duration period : {absl::Microseconds(500), absl::Milliseconds(1),
                                absl::Microseconds(1500)}) {
    TimerOptions o = Periodic(0, OverrunPolicy::kSkip);
    o.period = period;
    PeriodicSchedule s;
    s.Start(At(0));
    for (int i = 0; i < 60000; ++i) {
      // Each run ends a little after its call: on time for the next.
      ASSERT_FALSE(RunEndedAt(s, s.Expected(s.call(), period) + period / 3, o).overrun);
    }
    EXPECT_EQ(s.Expected(s.call(), period), At(0) + period * 60001);
  }
}

TEST(PeriodicScheduleTest, DelayRebasesOnePeriodAfterTheLateRun) {
  const TimerOptions o = Periodic(10, OverrunPolicy::kDelay);
  PeriodicSchedule s;
  s.Start(At(0));
  const PeriodicSchedule::Next next = RunEndedAt(s, At(35), o);
  EXPECT_TRUE(next.overrun);
  EXPECT_EQ(next.skipped, 2);  // calls 2 and 3 of the old phase
  EXPECT_EQ(s.call(), 1);
  EXPECT_EQ(s.origin(), At(35));
  EXPECT_EQ(s.Expected(s.call(), o.period), At(45));
}

TEST(PeriodicScheduleTest, BurstCatchesUpAtMostMaxBurstCalls) {
  const TimerOptions o = Periodic(10, OverrunPolicy::kBurst, /*max_burst=*/3);
  PeriodicSchedule s;
  s.Start(At(0));
  // Ran until 75 ms: calls 2..7 missed (6); the oldest 3 are skipped and
  // calls 5, 6, 7 run back to back (their instants have passed).
  const PeriodicSchedule::Next next = RunEndedAt(s, At(75), o);
  EXPECT_TRUE(next.overrun);
  EXPECT_EQ(next.skipped, 3);
  EXPECT_EQ(s.call(), 5);
  // A short overrun is caught up in full.
  PeriodicSchedule t;
  t.Start(At(0));
  const PeriodicSchedule::Next small = RunEndedAt(t, At(25), o);
  EXPECT_TRUE(small.overrun);
  EXPECT_EQ(small.skipped, 0);
  EXPECT_EQ(t.call(), 2);
}

TEST(PeriodicScheduleTest, ALateDispatchUnderSkipStandsForTheLatestDuePeriod) {
  const TimerOptions skip = Periodic(10, OverrunPolicy::kSkip);
  PeriodicSchedule s;
  s.Start(At(0));
  EXPECT_EQ(s.SkipToLatestDue(At(18), skip), 0);  // nothing later due
  EXPECT_EQ(s.SkipToLatestDue(At(34), skip), 2);  // 2 and 3 were due too
  EXPECT_EQ(s.call(), 3);
  // Other policies and oneshots keep their call.
  PeriodicSchedule d;
  d.Start(At(0));
  EXPECT_EQ(d.SkipToLatestDue(At(34), Periodic(10, OverrunPolicy::kDelay)), 0);
  TimerOptions oneshot = skip;
  oneshot.oneshot = true;
  EXPECT_EQ(d.SkipToLatestDue(At(34), oneshot), 0);
  EXPECT_EQ(d.call(), 1);
}

}  // namespace
}  // namespace timer
}  // namespace cyber
