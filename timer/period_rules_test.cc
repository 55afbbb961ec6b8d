// CheckPeriod: a period must be positive, the words name the object, the
// field and the value, and a Timer refuses exactly what it refuses, in the
// same words.

#include "timer/period_rules.h"

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/timer.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace timer {
namespace {

TEST(PeriodRulesTest, MaxDelayIsTheWheels) {
  for (absl::Duration tick : {kTimerResolution, absl::Milliseconds(1), absl::Microseconds(500)}) {
    TimingWheel wheel(Instant(), tick);
    EXPECT_EQ(MaxDelay(tick), wheel.max_delay()) << tick;
  }
  EXPECT_EQ(MaxDelay(kTimerResolution), kTimerResolution * static_cast<int64_t>(kMaxDelayTicks));
}

TEST(PeriodRulesTest, TheErrorNamesTheObjectTheFieldAndTheValue) {
  const auto check = [&](absl::Duration period) {
    return CheckPeriod("timer component \"imu\"", "interval", period);
  };
  // Any positive period: below the tick, a tick, the wheel's range and
  // beyond it (never), infinite (never).
  for (absl::Duration ok :
       {absl::Nanoseconds(1), absl::Microseconds(500), absl::Milliseconds(1),
        kTimerResolution, MaxDelay(kTimerResolution),
        MaxDelay(kTimerResolution) + kTimerResolution, absl::InfiniteDuration()}) {
    EXPECT_TRUE(check(ok).ok()) << ok;
  }
  absl::Status s = check(absl::ZeroDuration());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "timer component \"imu\": interval 0 must be positive");
  s = check(-absl::Milliseconds(3));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "timer component \"imu\": interval -3ms must be positive");
}

// Schedule()'s status for a timer "poll" of `period` on a simulated 2 ms wheel.
absl::Status ScheduleStatus(absl::Duration period, bool oneshot) {
  SimulatedTimerSystem system;
  TimerOptions o;
  o.name = "poll";
  o.period = period;
  o.oneshot = oneshot;
  o.callback = [] {};
  Timer t(std::move(o), &system.driver());
  absl::Status s = t.Schedule();
  t.Stop();
  return s;
}

// The check the timer runs at every binding, without building a message,
// says what CheckPeriod says.
TEST(PeriodRulesTest, PeriodInRangeAgreesWithCheckPeriod) {
  const absl::Duration max = MaxDelay(kTimerResolution);
  for (absl::Duration p :
       {-absl::InfiniteDuration(), -absl::Milliseconds(5), absl::ZeroDuration(), absl::Nanoseconds(1),
        absl::Milliseconds(1), kTimerResolution - absl::Nanoseconds(1),
        kTimerResolution, absl::Milliseconds(3), absl::Hours(25), max,
        max + absl::Nanoseconds(1), absl::InfiniteDuration()}) {
    EXPECT_EQ(PeriodInRange(p), CheckPeriod("timer \"t\"", "period", p).ok())
        << absl::FormatDuration(p);
  }
}

// A periodic timer refuses exactly what the rule refuses, in the same
// words; a oneshot accepts every delay (<= 0: at once; beyond the range or
// infinite: never).
TEST(PeriodRulesTest, ATimerRefusesWhatTheRuleRefusesInTheSameWords) {
  const absl::Duration max = MaxDelay(kTimerResolution);
  for (absl::Duration period :
       {-absl::InfiniteDuration(), -absl::Milliseconds(5), absl::ZeroDuration(),
        absl::Microseconds(500), absl::Milliseconds(1), kTimerResolution,
        absl::Hours(24), max, max + kTimerResolution, absl::InfiniteDuration()}) {
    const absl::Status rule = CheckPeriod("timer \"poll\"", "period", period);
    EXPECT_EQ(ScheduleStatus(period, /*oneshot=*/false), rule) << period;
    EXPECT_TRUE(ScheduleStatus(period, /*oneshot=*/true).ok()) << period;
  }
}

}  // namespace
}  // namespace timer
}  // namespace cyber
