// cyber::Time and cyber::Duration: Cyber RT's value types, as ported code
// uses them (conversions, arithmetic, printing, the two "now"s).

#include "cyber/time/time.h"

#include <sstream>

#include "absl/time/clock.h"
#include "cyber/time/duration.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

TEST(DurationTest, ConvertsBetweenSecondsNanosecondsAndAbsl) {
  EXPECT_EQ(Duration(0.5).ToNanosecond(), 500000000);
  EXPECT_DOUBLE_EQ(Duration(int64_t{250000000}).ToSecond(), 0.25);
  EXPECT_EQ(Duration(uint32_t{2}, uint32_t{7}).ToNanosecond(), 2000000007);
  EXPECT_EQ(Duration(-1.5).ToNanosecond(), -1500000000);
  EXPECT_EQ(Duration(0.01).ToAbsl(), absl::Milliseconds(10));
  EXPECT_EQ(Duration::FromAbsl(absl::Microseconds(3)).ToNanosecond(), 3000);
  EXPECT_TRUE(Duration().IsZero());
}

TEST(DurationTest, ArithmeticAndComparisons) {
  Duration d(1.0);
  d += Duration(0.5);
  EXPECT_EQ(d, Duration(1.5));
  d -= Duration(2.0);
  EXPECT_EQ(d, Duration(-0.5));
  EXPECT_EQ(-d, Duration(0.5));
  EXPECT_EQ(Duration(0.2) * 3.0, Duration(0.6));
  EXPECT_LT(Duration(0.1), Duration(0.2));
  EXPECT_GE(Duration(0.2), Duration(0.2));
  EXPECT_NE(Duration(0.2), Duration(0.3));
}

TEST(DurationTest, PrintsSecondsWithNanoseconds) {
  std::ostringstream os;
  os << Duration(1.5) << " " << Duration(int64_t{-7});
  EXPECT_EQ(os.str(), "1.500000000 -0.000000007");
}

TEST(DurationTest, SleepWaitsAtLeastTheSpanAndReturnsAtOnceWhenNotPositive) {
  const absl::Time before = absl::Now();
  Duration(0.02).Sleep();
  EXPECT_GE(absl::Now() - before, absl::Milliseconds(20) - absl::Microseconds(100));
  Duration(-1.0).Sleep();  // returns at once (no assertion on speed)
  Duration().Sleep();
}

TEST(TimeTest, ConstructsFromSecondsAndParts) {
  EXPECT_EQ(Time(1.5).ToNanosecond(), 1500000000u);
  EXPECT_EQ(Time(uint32_t{3}, uint32_t{4}).ToNanosecond(), 3000000004u);
  EXPECT_EQ(Time(uint64_t{2500}).ToMicrosecond(), 2u);
  EXPECT_DOUBLE_EQ(Time(uint64_t{1500000000}).ToSecond(), 1.5);
  EXPECT_TRUE(Time(-3.0).IsZero());  // clamped to the epoch
  EXPECT_LT(Time::MIN, Time::MAX);
}

TEST(TimeTest, DifferencesAreDurations) {
  const Time a(10.0);
  const Time b = a + Duration(0.25);
  EXPECT_EQ(b - a, Duration(0.25));
  EXPECT_EQ(a - b, Duration(-0.25));
  EXPECT_EQ(b - Duration(0.25), a);
  Time c = a;
  c += Duration(1.0);
  c -= Duration(0.5);
  EXPECT_EQ(c, Time(10.5));
  EXPECT_GT(c, a);
}

TEST(TimeTest, NowIsTheWallClockAndMonoTimeNeverGoesBack) {
  const int64_t wall = absl::GetCurrentTimeNanos();
  const Time now = Time::Now();
  // The same clock: within a generous second of each other.
  EXPECT_LT(std::llabs(static_cast<int64_t>(now.ToNanosecond()) - wall), 1000000000LL);
  const Time m1 = Time::MonoTime();
  const Time m2 = Time::MonoTime();
  EXPECT_LE(m1, m2);
  EXPECT_GT(m1.ToNanosecond(), 0u);
}

TEST(TimeTest, ToStringIsUtcWithNanoseconds) {
  EXPECT_EQ(Time(uint32_t{0}, uint32_t{5}).ToString(), "1970-01-01 00:00:00.000000005");
  // 2026-11-24 00:00:00 UTC.
  EXPECT_EQ(Time(uint32_t{1795478400}, uint32_t{123456789}).ToString(),
            "2026-11-24 00:00:00.123456789");
  std::ostringstream os;
  os << Time(uint32_t{0}, uint32_t{0});
  EXPECT_EQ(os.str(), "1970-01-01 00:00:00.000000000");
}

TEST(TimeTest, SleepUntilThePastReturnsAtOnce) {
  Time::SleepUntil(Time(1.0));
  const absl::Time before = absl::Now();
  Time::SleepUntil(Time::Now() + Duration(0.01));
  EXPECT_GE(absl::Now() - before, absl::Milliseconds(10) - absl::Microseconds(100));
}

}  // namespace
}  // namespace cyber
