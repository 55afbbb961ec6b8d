// CheckPeriod: the limits come from the wheel, the words name the object,
// the field and the value, and a Timer refuses exactly what it refuses, in
// the same words.

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
  const absl::Duration max = MaxDelay(kTimerResolution);
  const auto check = [&](absl::Duration period) {
    return CheckPeriod("timer component \"imu\"", "interval", period, kTimerResolution, max);
  };
  EXPECT_TRUE(check(kTimerResolution).ok());
  EXPECT_TRUE(check(max).ok());

  absl::Status s = check(absl::ZeroDuration());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "timer component \"imu\": interval 0 must be positive (the minimum is the 2ms "
            "resolution)");
  s = check(-absl::Milliseconds(3));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "timer component \"imu\": interval -3ms must be positive (the minimum is the "
            "2ms resolution)");
  s = check(kTimerResolution - absl::Nanoseconds(1));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "timer component \"imu\": interval 1.999999ms is below the 2ms resolution");
  s = check(max + kTimerResolution);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(),
            "timer component \"imu\": interval 2386h5m34.594s exceeds the maximum "
            "2386h5m34.592s");
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
       {-absl::Milliseconds(5), absl::ZeroDuration(), absl::Nanoseconds(1),
        absl::Milliseconds(1), kTimerResolution - absl::Nanoseconds(1),
        kTimerResolution, absl::Milliseconds(3), absl::Hours(25), max,
        max + absl::Nanoseconds(1), absl::InfiniteDuration()}) {
    EXPECT_EQ(PeriodInRange(p, kTimerResolution, max),
              CheckPeriod("timer \"t\"", "period", p, kTimerResolution, max).ok())
        << absl::FormatDuration(p);
  }
}

TEST(PeriodRulesTest, ATimerRefusesWhatTheRuleRefusesInTheSameWords) {
  const absl::Duration max = MaxDelay(kTimerResolution);
  for (bool oneshot : {false, true}) {
    const char* field = oneshot ? "delay" : "period";
    for (absl::Duration period :
         {absl::ZeroDuration(), absl::Milliseconds(1), kTimerResolution, absl::Hours(24),
          max, max + kTimerResolution}) {
      // A oneshot's delay below one tick is another issue's to change.
      if (oneshot && period < kTimerResolution) continue;
      const absl::Status rule = CheckPeriod("timer \"poll\"", field, period, kTimerResolution, max);
      const absl::Status timer = ScheduleStatus(period, oneshot);
      EXPECT_EQ(timer, rule) << field << " " << period;
    }
  }
}

}  // namespace
}  // namespace timer
}  // namespace cyber
