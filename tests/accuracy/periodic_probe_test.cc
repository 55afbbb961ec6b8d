#include "tests/accuracy/periodic_probe.h"

#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace accuracy {
namespace {

constexpr absl::Duration kPeriod = absl::Milliseconds(20);
const Instant kOrigin = Instant::FromEpoch(absl::Seconds(100));

timer::TimerEvent Call(int64_t k, absl::Duration late, int64_t missed = 0) {
  timer::TimerEvent e;
  e.expected_time = kOrigin + kPeriod * k;
  e.actual_time = e.expected_time + late;
  e.missed_periods = missed;
  return e;
}

// Far in the past: the waits below must not block, the state is already set.
const Instant kAlreadyPast = Instant::FromEpoch(absl::ZeroDuration());

TEST(PeriodicProbeTest, OriginFromFirstCallEvenAfterSkippedPeriods) {
  PeriodicProbe probe({kPeriod, /*calls=*/3, std::nullopt}, nullptr);
  EXPECT_FALSE(probe.WaitForStart(kAlreadyPast).has_value());
  // The first call is for k = 3: two periods were skipped before it.
  EXPECT_FALSE(probe.OnCall(Call(3, absl::Microseconds(70), /*missed=*/2)));
  const auto start = probe.WaitForStart(kAlreadyPast);
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(start->origin, kOrigin);
  EXPECT_EQ(start->first_index, 3);
}

TEST(PeriodicProbeTest, RecordsPlannedCallsThenDone) {
  PeriodicProbe probe({kPeriod, /*calls=*/3, std::nullopt}, nullptr);
  probe.OnCall(Call(1, absl::Microseconds(50)));
  probe.OnCall(Call(2, absl::Microseconds(60)));
  EXPECT_FALSE(probe.WaitUntilDone(kAlreadyPast));
  probe.OnCall(Call(3, absl::Microseconds(70)));
  EXPECT_TRUE(probe.WaitUntilDone(kAlreadyPast));
  probe.OnCall(Call(4, absl::Microseconds(80)));  // beyond the plan
  const std::vector<Fire> fires = probe.TakeFires();
  ASSERT_EQ(fires.size(), 3u);
  EXPECT_EQ(fires[0].index, 1);
  EXPECT_EQ(fires[2].index, 3);
  EXPECT_EQ(fires[2].lateness(), absl::Microseconds(70));
  EXPECT_FALSE(fires[0].tick.has_value());  // no wheel given
}

TEST(PeriodicProbeTest, OneOverrunAtThePlannedPositionAndIndicesAfterSkips) {
  PeriodicProbe probe({kPeriod, /*calls=*/20, /*overrun_at=*/5}, nullptr);
  for (int64_t k = 1; k <= 5; ++k) {
    EXPECT_FALSE(probe.OnCall(Call(k, absl::Microseconds(50))));
  }
  EXPECT_TRUE(probe.OnCall(Call(6, absl::Microseconds(50))));  // position 5
  // kSkip after a 10-period overrun: one late call for k = 16, 9 skipped.
  EXPECT_FALSE(probe.OnCall(Call(16, absl::Milliseconds(2), /*missed=*/9)));
  EXPECT_FALSE(probe.OnCall(Call(17, absl::Microseconds(50))));
  EXPECT_EQ(probe.overrun_index(), 6);
  const std::vector<Fire> fires = probe.TakeFires();
  ASSERT_EQ(fires.size(), 8u);
  EXPECT_EQ(fires[6].index, 16);
  EXPECT_EQ(fires[6].missed_before, 9);
  EXPECT_EQ(fires[7].index, 17);
}

}  // namespace
}  // namespace accuracy
}  // namespace cyber
