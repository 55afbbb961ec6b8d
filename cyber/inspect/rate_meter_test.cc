#include "cyber/inspect/rate_meter.h"

#include <cmath>

#include "gtest/gtest.h"

namespace cyber {
namespace inspect {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

TEST(RateMeterTest, NoReportBeforeTwoMessages) {
  RateMeter meter(10);
  EXPECT_FALSE(meter.Report().has_value());
  meter.Add(kStart);
  EXPECT_FALSE(meter.Report().has_value());
  meter.Add(kStart + absl::Milliseconds(10));
  ASSERT_TRUE(meter.Report().has_value());
  EXPECT_DOUBLE_EQ(meter.Report()->average_hz, 100.0);
}

TEST(RateMeterTest, SteadyHundredHertz) {
  RateMeter meter(1000);
  for (int i = 0; i < 500; ++i) meter.Add(kStart + i * absl::Milliseconds(10));
  const RateReport r = *meter.Report();
  EXPECT_NEAR(r.average_hz, 100.0, 1e-9);
  EXPECT_EQ(r.min, absl::Milliseconds(10));
  EXPECT_EQ(r.max, absl::Milliseconds(10));
  EXPECT_LT(r.std_dev, absl::Nanoseconds(1));
  EXPECT_EQ(r.window, 500u);
  EXPECT_EQ(meter.total(), 500u);
}

// One message 4 ms late: its interval is 14 ms, the next 6 ms; the average
// is unchanged, min/max/std see the jitter.
TEST(RateMeterTest, JitterMovesMinMaxNotAverage) {
  RateMeter meter(100);
  for (int i = 0; i < 11; ++i) {
    absl::Time t = kStart + i * absl::Milliseconds(10);
    if (i == 5) t += absl::Milliseconds(4);
    meter.Add(t);
  }
  const RateReport r = *meter.Report();
  EXPECT_NEAR(r.average_hz, 100.0, 1e-9);
  EXPECT_EQ(r.min, absl::Milliseconds(6));
  EXPECT_EQ(r.max, absl::Milliseconds(14));
  // Two of ten intervals 4 ms off the 10 ms mean: sqrt(2 * 16 / 10) ms.
  EXPECT_NEAR(absl::ToDoubleMilliseconds(r.std_dev), std::sqrt(3.2), 1e-6);  // ns resolution
}

// The window forgets: 100 Hz then 50 Hz, a window of 11 sees only 50 Hz.
TEST(RateMeterTest, WindowKeepsOnlyTheLastMessages) {
  RateMeter meter(11);
  absl::Time t = kStart;
  for (int i = 0; i < 50; ++i) meter.Add(t += absl::Milliseconds(10));
  for (int i = 0; i < 10; ++i) meter.Add(t += absl::Milliseconds(20));
  const RateReport r = *meter.Report();
  EXPECT_EQ(r.window, 11u);
  EXPECT_NEAR(r.average_hz, 50.0, 1e-9);
  EXPECT_EQ(r.min, absl::Milliseconds(20));
  EXPECT_EQ(meter.total(), 60u);
}

TEST(RateMeterTest, TimeGoingBackIsAZeroInterval) {
  RateMeter meter(10);
  meter.Add(kStart);
  meter.Add(kStart + absl::Milliseconds(10));
  meter.Add(kStart + absl::Milliseconds(5));
  const RateReport r = *meter.Report();
  EXPECT_EQ(r.min, absl::ZeroDuration());
  EXPECT_NEAR(r.average_hz, 200.0, 1e-9);
}

TEST(RateMeterTest, FormatsCyberRtShape) {
  RateReport r;
  r.average_hz = 99.99512;
  r.min = absl::Microseconds(9500);
  r.max = absl::Microseconds(10500);
  r.std_dev = absl::Microseconds(120);
  r.window = 1000;
  EXPECT_EQ(FormatRate(r),
            "average rate: 99.995\n\tmin: 0.009500s max: 0.010500s std dev: 0.000120s "
            "window: 1000\n");
}

}  // namespace
}  // namespace inspect
}  // namespace cyber
