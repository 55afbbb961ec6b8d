#include "tests/accuracy/fire_record.h"

#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace accuracy {
namespace {

TEST(SummarizeTest, EmptyIsAllZero) {
  const Lateness s = Summarize({});
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.p99, absl::ZeroDuration());
  EXPECT_EQ(s.max, absl::ZeroDuration());
}

TEST(SummarizeTest, NearestRankPercentilesOfOneToThousand) {
  std::vector<absl::Duration> samples;
  for (int i = 1000; i >= 1; --i) samples.push_back(absl::Microseconds(i));
  const Lateness s = Summarize(samples);
  EXPECT_EQ(s.count, 1000);
  EXPECT_EQ(s.early, 0);
  EXPECT_EQ(s.min, absl::Microseconds(1));
  EXPECT_EQ(s.p50, absl::Microseconds(500));
  EXPECT_EQ(s.p90, absl::Microseconds(900));
  EXPECT_EQ(s.p99, absl::Microseconds(990));
  EXPECT_EQ(s.p999, absl::Microseconds(999));
  EXPECT_EQ(s.max, absl::Microseconds(1000));
  EXPECT_EQ(s.mean, absl::Nanoseconds(500500));
}

TEST(SummarizeTest, CountsEarlySamples) {
  const Lateness s = Summarize({absl::Microseconds(-3), absl::ZeroDuration(),
                                absl::Microseconds(7)});
  EXPECT_EQ(s.early, 1);
  EXPECT_EQ(s.min, absl::Microseconds(-3));
  EXPECT_EQ(s.p50, absl::ZeroDuration());
}

TEST(FireTest, LatenessAndPastTick) {
  Fire on_tick;
  on_tick.expected = Instant::FromEpoch(absl::Milliseconds(10));
  on_tick.actual = Instant::FromEpoch(absl::Microseconds(10080));
  on_tick.tick = on_tick.expected;
  Fire rounded;  // due mid-tick, served on the next tick
  rounded.expected = Instant::FromEpoch(absl::Microseconds(10500));
  rounded.actual = Instant::FromEpoch(absl::Microseconds(12090));
  rounded.tick = Instant::FromEpoch(absl::Milliseconds(12));
  Fire floor;  // no tick
  floor.expected = Instant::FromEpoch(absl::Milliseconds(3));
  floor.actual = Instant::FromEpoch(absl::Microseconds(3050));

  const std::vector<Fire> fires = {on_tick, rounded, floor};
  EXPECT_EQ(LatenessOf(fires),
            (std::vector<absl::Duration>{absl::Microseconds(80),
                                         absl::Microseconds(1590),
                                         absl::Microseconds(50)}));
  EXPECT_EQ(PastTickOf(fires),
            (std::vector<absl::Duration>{absl::Microseconds(80),
                                         absl::Microseconds(90)}));
}

}  // namespace
}  // namespace accuracy
}  // namespace cyber
