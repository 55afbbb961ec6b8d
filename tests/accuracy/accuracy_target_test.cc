#include "tests/accuracy/accuracy_target.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace accuracy {
namespace {

// `n` fires late by base, base + step, base + 2 * step, ... (so p50 and p99
// are known), each on its own expected instant; `tick_after` puts the tick
// the deadline rounds up to that long after it.
std::vector<Fire> Fires(int n, absl::Duration base, absl::Duration step,
                        absl::Duration tick_after = absl::ZeroDuration()) {
  std::vector<Fire> out;
  const Instant zero;
  for (int i = 0; i < n; ++i) {
    Fire f;
    f.index = i;
    f.expected = zero + absl::Milliseconds(i);
    f.actual = f.expected + base + step * i;
    f.tick = f.expected + tick_after;
    out.push_back(f);
  }
  return out;
}

ScenarioResult Periodic(absl::Duration timer_base, absl::Duration floor_base,
                        absl::Duration timer_step, absl::Duration floor_step) {
  ScenarioResult r;
  r.kind = ScenarioKind::kPeriodic;
  r.period = absl::Milliseconds(3);
  r.timer = Fires(100, timer_base, timer_step);
  r.floor = Fires(100, floor_base, floor_step);
  return r;
}

TEST(CheckTargetTest, PeriodicWithinBothAllowancesMeets) {
  // p50: 50 + 49 = 99 us vs 90 + 49 = 139 us; p99: 148 us vs 188 us.
  const TargetCheck c =
      CheckTarget(Periodic(absl::Microseconds(50), absl::Microseconds(90),
                           absl::Microseconds(1), absl::Microseconds(1)));
  EXPECT_EQ(c.verdict, TargetVerdict::kMeets) << c.why;
  EXPECT_EQ(c.basis, TargetBasis::kLateness);
  EXPECT_EQ(c.p50_over_floor, absl::Microseconds(-40));
  EXPECT_NEAR(c.p99_ratio, 148.0 / 188.0, 1e-9);
  EXPECT_EQ(c.rule, "p50 <= floor + 10us, p99 <= 1.2x floor");
  EXPECT_EQ(c.why, "");
}

TEST(CheckTargetTest, PeriodicMissesEachPartAndSaysWhich) {
  // p50: 60 + 49 * 2 = 158 us vs 49 + 49 = 98 us; p99: 256 us vs 147 us.
  const TargetCheck c =
      CheckTarget(Periodic(absl::Microseconds(60), absl::Microseconds(49),
                           absl::Microseconds(2), absl::Microseconds(1)));
  EXPECT_EQ(c.verdict, TargetVerdict::kMisses);
  EXPECT_EQ(c.why, "p50 +60.0us > +10us, p99 1.74x > 1.2x");
}

TEST(CheckTargetTest, PeriodicRoundedUpToTheTickIsJudgedOnLateness) {
  // Every call 1 ms late, served 50 us past its tick: the target is about
  // lateness (issue 24: periodic calls are exact), so it misses.
  ScenarioResult r = Periodic(absl::Microseconds(1050), absl::Microseconds(50),
                              absl::ZeroDuration(), absl::ZeroDuration());
  r.timer = Fires(100, absl::Microseconds(1050), absl::ZeroDuration(),
                  absl::Milliseconds(1));
  const TargetCheck c = CheckTarget(r);
  EXPECT_EQ(c.verdict, TargetVerdict::kMisses);
  EXPECT_EQ(c.p50_over_floor, absl::Milliseconds(1));
}

TEST(CheckTargetTest, TickOneshotIsComparedPastItsTickWithoutATarget) {
  ScenarioResult r;
  r.kind = ScenarioKind::kOneshot;
  r.precision = timer::TimerPrecision::kTick;
  r.timer = Fires(100, absl::Microseconds(1100), absl::ZeroDuration(),
                  absl::Milliseconds(1));
  r.floor = Fires(100, absl::Microseconds(80), absl::ZeroDuration());
  const TargetCheck c = CheckTarget(r);
  EXPECT_EQ(c.verdict, TargetVerdict::kNoTarget);
  EXPECT_EQ(c.basis, TargetBasis::kPastTick);
  EXPECT_EQ(c.p50_over_floor, absl::Microseconds(20));
  EXPECT_EQ(c.rule, "");
}

TEST(CheckTargetTest, ExactOneshotHasOnlyTheP50Target) {
  ScenarioResult r;
  r.kind = ScenarioKind::kOneshot;
  r.precision = timer::TimerPrecision::kExact;
  // p50 85 us vs 80 us; the two slowest calls make p99 1000 us vs 80 us.
  r.timer = Fires(100, absl::Microseconds(85), absl::ZeroDuration());
  r.timer[98].actual = r.timer[98].expected + absl::Milliseconds(1);
  r.timer[99].actual = r.timer[99].expected + absl::Milliseconds(1);
  r.floor = Fires(100, absl::Microseconds(80), absl::ZeroDuration());
  const TargetCheck c = CheckTarget(r);  // p99 12.5x: not a target here
  EXPECT_EQ(c.verdict, TargetVerdict::kMeets) << c.why;
  EXPECT_EQ(c.rule, "p50 <= floor + 10us");
  EXPECT_NEAR(c.p99_ratio, 12.5, 1e-9);
}

TEST(CheckTargetTest, RefusedAndFailedAreNotJudged) {
  ScenarioResult refused;
  refused.kind = ScenarioKind::kPeriodic;
  refused.period = absl::Milliseconds(1);
  refused.refused = true;
  refused.error = "timer \"periodic_1ms\": period 1ms is below the 2ms resolution";
  TargetCheck c = CheckTarget(refused);
  EXPECT_EQ(c.verdict, TargetVerdict::kRefused);
  EXPECT_TRUE(std::isnan(c.p99_ratio));
  EXPECT_STREQ(TargetVerdictName(c.verdict), "refused");

  ScenarioResult tick_oneshot = refused;  // refused without a target too
  tick_oneshot.kind = ScenarioKind::kOneshot;
  tick_oneshot.precision = timer::TimerPrecision::kTick;
  EXPECT_EQ(CheckTarget(tick_oneshot).verdict, TargetVerdict::kRefused);

  ScenarioResult stuck = Periodic(absl::Microseconds(50), absl::Microseconds(50),
                                  absl::ZeroDuration(), absl::ZeroDuration());
  stuck.error = "the last recorded call did not come";
  EXPECT_EQ(CheckTarget(stuck).verdict, TargetVerdict::kFailed);
}

TEST(CheckTargetTest, OverrunAndIdleHaveNoTarget) {
  ScenarioResult overrun =
      Periodic(absl::Microseconds(50), absl::Microseconds(50),
               absl::ZeroDuration(), absl::ZeroDuration());
  overrun.overrun = absl::Milliseconds(200);
  EXPECT_EQ(CheckTarget(overrun).verdict, TargetVerdict::kNoTarget);
  ScenarioResult idle;
  EXPECT_EQ(CheckTarget(idle).verdict, TargetVerdict::kNoTarget);
}

}  // namespace
}  // namespace accuracy
}  // namespace cyber
