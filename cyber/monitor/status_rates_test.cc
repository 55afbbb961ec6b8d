#include "cyber/monitor/status_rates.h"

#include "gtest/gtest.h"

namespace cyber {
namespace monitor {
namespace {

constexpr int64_t kSecond = 1000 * 1000 * 1000;

graph::ProcessStatus Status(uint64_t sequence, int64_t uptime_ns, uint64_t sent,
                            uint64_t received) {
  graph::ProcessStatus s;
  s.set_sequence(sequence);
  s.set_uptime_ns(uptime_ns);
  graph::ChannelCounts* c = s.add_channels();
  c->set_channel("/sensor/imu");
  c->set_sent(sent);
  c->set_received(received);
  return s;
}

TEST(StatusRatesTest, NoRateFromOneStatus) {
  StatusRates rates;
  rates.Update("p", Status(1, kSecond, 100, 0));
  EXPECT_FALSE(rates.Channel("p", "/sensor/imu").has_value());
  EXPECT_FALSE(rates.Channel("other", "/sensor/imu").has_value());
}

TEST(StatusRatesTest, RateIsTheCountsDeltaOverTheUptimeDelta) {
  StatusRates rates;
  rates.Update("p", Status(1, kSecond, 100, 5));
  // 1.25 s later: 125 more sent (100 Hz), 25 more received (20 Hz).
  rates.Update("p", Status(2, kSecond + kSecond * 5 / 4, 225, 30));
  std::optional<ChannelRate> r = rates.Channel("p", "/sensor/imu");
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->sent_hz, 100.0);
  EXPECT_DOUBLE_EQ(r->received_hz, 20.0);
  EXPECT_FALSE(rates.Channel("p", "/sensor/lidar").has_value());
}

TEST(StatusRatesTest, TheSameStatusAgainChangesNothing) {
  StatusRates rates;
  rates.Update("p", Status(1, kSecond, 0, 0));
  rates.Update("p", Status(2, 2 * kSecond, 50, 0));
  rates.Update("p", Status(2, 2 * kSecond, 50, 0));  // read again at the next refresh
  ASSERT_TRUE(rates.Channel("p", "/sensor/imu").has_value());
  EXPECT_DOUBLE_EQ(rates.Channel("p", "/sensor/imu")->sent_hz, 50.0);
}

TEST(StatusRatesTest, ALostStatusLengthensTheInterval) {
  StatusRates rates;
  rates.Update("p", Status(1, kSecond, 0, 0));
  rates.Update("p", Status(3, 3 * kSecond, 200, 0));  // status 2 lost
  EXPECT_DOUBLE_EQ(rates.Channel("p", "/sensor/imu")->sent_hz, 100.0);
}

TEST(StatusRatesTest, ARestartedProcessStartsAfresh) {
  StatusRates rates;
  rates.Update("p", Status(7, 7 * kSecond, 700, 0));
  rates.Update("p", Status(8, 8 * kSecond, 800, 0));
  rates.Update("p", Status(1, kSecond, 10, 0));  // same label, counters from zero
  EXPECT_FALSE(rates.Channel("p", "/sensor/imu").has_value());
  rates.Update("p", Status(2, 2 * kSecond, 110, 0));
  EXPECT_DOUBLE_EQ(rates.Channel("p", "/sensor/imu")->sent_hz, 100.0);
}

TEST(StatusRatesTest, AChannelNewInTheIntervalCountsFromZero) {
  StatusRates rates;
  graph::ProcessStatus first;
  first.set_sequence(1);
  first.set_uptime_ns(kSecond);
  rates.Update("p", first);
  rates.Update("p", Status(2, 2 * kSecond, 40, 0));
  EXPECT_DOUBLE_EQ(rates.Channel("p", "/sensor/imu")->sent_hz, 40.0);
}

TEST(StatusRatesTest, RetainForgetsProcessesThatLeft) {
  StatusRates rates;
  rates.Update("a", Status(1, kSecond, 0, 0));
  rates.Update("a", Status(2, 2 * kSecond, 10, 0));
  rates.Update("b", Status(1, kSecond, 0, 0));
  rates.Update("b", Status(2, 2 * kSecond, 10, 0));
  rates.Retain({"b"});
  EXPECT_FALSE(rates.Channel("a", "/sensor/imu").has_value());
  EXPECT_TRUE(rates.Channel("b", "/sensor/imu").has_value());
}

TEST(StatusRatesTest, TimerRateFromFires) {
  auto status = [](uint64_t seq, int64_t uptime, uint64_t fires) {
    graph::ProcessStatus s;
    s.set_sequence(seq);
    s.set_uptime_ns(uptime);
    graph::ComponentStatus* c = s.add_components();
    c->set_name("imu");
    graph::TimerStatus* t = c->add_timers();
    t->set_name("poll");
    t->set_fires(fires);
    return s;
  };
  StatusRates rates;
  rates.Update("p", status(1, kSecond, 1000));
  EXPECT_FALSE(rates.TimerHz("p", "imu", "poll").has_value());
  rates.Update("p", status(2, 3 * kSecond, 1200));
  ASSERT_TRUE(rates.TimerHz("p", "imu", "poll").has_value());
  EXPECT_DOUBLE_EQ(*rates.TimerHz("p", "imu", "poll"), 100.0);
  EXPECT_FALSE(rates.TimerHz("p", "imu", "other").has_value());
}

}  // namespace
}  // namespace monitor
}  // namespace cyber
