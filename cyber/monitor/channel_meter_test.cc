#include "cyber/monitor/channel_meter.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace monitor {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

TEST(ChannelMeterTest, FirstTakeOnlyStartsTheInterval) {
  ChannelMeter meter(/*keep_latest=*/false);
  meter.Record("abc");
  EXPECT_FALSE(meter.Take(kStart).has_value());
}

TEST(ChannelMeterTest, RatesOverTheIntervalBetweenTakes) {
  ChannelMeter meter(/*keep_latest=*/false);
  meter.Record("before the first take");
  ASSERT_FALSE(meter.Take(kStart).has_value());
  for (int i = 0; i < 10; ++i) meter.Record(std::string(100, 'x'));
  std::optional<MeterReading> r = meter.Take(kStart + absl::Milliseconds(500));
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->hz, 20.0);
  EXPECT_DOUBLE_EQ(r->bytes_per_second, 2000.0);
  EXPECT_EQ(r->total_messages, 11u);
  // Nothing since: zero, not the previous figure.
  r = meter.Take(kStart + absl::Seconds(1));
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->hz, 0.0);
  // A take at the same instant measures nothing and keeps the interval.
  EXPECT_FALSE(meter.Take(kStart + absl::Seconds(1)).has_value());
}

TEST(ChannelMeterTest, KeepsTheLatestPayloadOnlyWhenAsked) {
  ChannelMeter none(/*keep_latest=*/false);
  none.Record("a");
  EXPECT_FALSE(none.Latest().has_value());
  ChannelMeter latest(/*keep_latest=*/true);
  EXPECT_FALSE(latest.Latest().has_value());
  latest.Record("a");
  latest.Record("bc");
  EXPECT_EQ(latest.Latest(), std::optional<std::string>("bc"));
  EXPECT_EQ(latest.total_messages(), 2u);
}

TEST(ChannelMeterTest, RecordsFromSeveralThreadsAllCount) {
  ChannelMeter meter(/*keep_latest=*/true);
  meter.Take(kStart);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&meter] {
      for (int i = 0; i < 1000; ++i) meter.Record("xy");
    });
  }
  for (std::thread& t : threads) t.join();
  std::optional<MeterReading> r = meter.Take(kStart + absl::Seconds(1));
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->hz, 4000.0);
  EXPECT_DOUBLE_EQ(r->bytes_per_second, 8000.0);
}

}  // namespace
}  // namespace monitor
}  // namespace cyber
