#include "timer/latency_histogram.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace timer {
namespace {

TEST(LatencyHistogramTest, EmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(0.5), absl::ZeroDuration());
  EXPECT_EQ(h.max(), absl::ZeroDuration());
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int ns = 0; ns < 8; ++ns) h.Record(absl::Nanoseconds(ns));
  EXPECT_EQ(h.Percentile(0.0), absl::Nanoseconds(0));
  EXPECT_EQ(h.Percentile(1.0), absl::Nanoseconds(7));
  EXPECT_EQ(h.max(), absl::Nanoseconds(7));
}

TEST(LatencyHistogramTest, PercentilesWithinOneEighthOfTheTruth) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> dist(10.0, 2.0);
  LatencyHistogram h;
  std::vector<int64_t> values;
  for (int i = 0; i < 100000; ++i) {
    const int64_t v = static_cast<int64_t>(dist(rng));
    values.push_back(v);
    h.Record(absl::Nanoseconds(v));
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const int64_t truth = values[static_cast<size_t>(q * values.size()) - 1];
    const int64_t got = absl::ToInt64Nanoseconds(h.Percentile(q));
    EXPECT_GE(got, truth) << q;  // an upper bound...
    EXPECT_LE(got, truth + truth / 8 + 1) << q;  // ...within 12.5%
  }
  EXPECT_EQ(h.max(), absl::Nanoseconds(values.back()));
  EXPECT_EQ(h.count(), 100000u);
}

TEST(LatencyHistogramTest, NegativeDurationsCountAsZeroAndHugeOnesFit) {
  LatencyHistogram h;
  h.Record(absl::Milliseconds(-3));
  h.Record(absl::Hours(24 * 365));
  EXPECT_EQ(h.Percentile(0.5), absl::ZeroDuration());
  EXPECT_EQ(h.max(), absl::Hours(24 * 365));
  EXPECT_EQ(h.Percentile(1.0), absl::Hours(24 * 365));
}

TEST(LatencyHistogramTest, ValuesPastTheTopBucketReportTheExactMaximum) {
  LatencyHistogram h;
  for (int i = 0; i < 98; ++i) h.Record(absl::Microseconds(100));
  h.Record(absl::Seconds(200));  // both past 2^37 ns
  h.Record(absl::Seconds(300));
  EXPECT_LE(h.Percentile(0.98), absl::Microseconds(100) * 9 / 8);
  EXPECT_EQ(h.Percentile(0.99), absl::Seconds(300));
  EXPECT_EQ(h.Percentile(1.0), absl::Seconds(300));
}

TEST(LatencyHistogramTest, AFullBucketHalvesAllAndKeepsThePercentiles) {
  // 8-bit counters: the 1 us bucket fills after 255 samples, many times over.
  BasicLatencyHistogram<uint8_t> h;
  for (int i = 0; i < 3000; ++i) {
    h.Record(absl::Microseconds(1));
    if (i % 3 == 0) h.Record(absl::Milliseconds(1));  // a quarter of all
  }
  EXPECT_EQ(h.count(), 4000u);
  EXPECT_GE(h.Percentile(0.5), absl::Microseconds(1));
  EXPECT_LE(h.Percentile(0.5), absl::Nanoseconds(1125));
  EXPECT_GE(h.Percentile(0.9), absl::Milliseconds(1));
  EXPECT_LE(h.Percentile(0.9), absl::Microseconds(1125));
  EXPECT_EQ(h.max(), absl::Milliseconds(1));
}

TEST(LatencyHistogramTest, IsSmallEnoughToKeepTwoPerTimer) {
  EXPECT_LE(sizeof(LatencyHistogram), 1200u);
}

}  // namespace
}  // namespace timer
}  // namespace cyber
