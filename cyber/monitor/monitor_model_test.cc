#include "cyber/monitor/monitor_model.h"

#include "gtest/gtest.h"

namespace cyber {
namespace monitor {
namespace {

constexpr int64_t kSecond = 1000 * 1000 * 1000;

graph::ChannelEndpointView Endpoint(const std::string& label) {
  graph::ChannelEndpointView e;
  e.process_label = label;
  e.node = "n";
  e.type_name = "sensor_polling.ImuReading";
  return e;
}

graph::ProcessView Process(const std::string& label, uint64_t seq, int64_t uptime,
                           const std::vector<graph::ChannelCounts>& counts) {
  graph::ProcessView p;
  p.label = label;
  p.graph.set_clock("steady");
  p.graph.add_nodes("n");
  graph::ProcessStatus s;
  s.set_sequence(seq);
  s.set_uptime_ns(uptime);
  for (const graph::ChannelCounts& c : counts) *s.add_channels() = c;
  p.status = s;
  return p;
}

graph::ChannelCounts Counts(uint64_t sent, uint64_t received, uint64_t lost = 0,
                            uint64_t undecodable = 0) {
  graph::ChannelCounts c;
  c.set_channel("/sensor/imu");
  c.set_sent(sent);
  c.set_received(received);
  c.set_lost(lost);
  c.set_dropped_undecodable(undecodable);
  return c;
}

// A writer process and two reader processes on /sensor/imu, two statuses
// each one second apart.
class ChannelRowsTest : public testing::Test {
 protected:
  void SetUp() override {
    channel_.name = "/sensor/imu";
    channel_.type_name = "sensor_polling.ImuReading";
    channel_.writers = {Endpoint("pollers@h:1")};
    channel_.readers = {Endpoint("fusion@h:2"), Endpoint("fusion@h:2"), Endpoint("log@h:3")};
    Feed({Process("pollers@h:1", 1, kSecond, {Counts(100, 0)}),
          Process("fusion@h:2", 1, kSecond, {Counts(0, 90, 1, 0)}),
          Process("log@h:3", 1, kSecond, {Counts(0, 95)})});
    Feed({Process("pollers@h:1", 2, 2 * kSecond, {Counts(200, 0)}),
          Process("fusion@h:2", 2, 2 * kSecond, {Counts(0, 190, 2, 3)}),
          Process("log@h:3", 2, 2 * kSecond, {Counts(0, 135)})});
  }
  void Feed(std::vector<graph::ProcessView> processes) {
    processes_ = std::move(processes);
    for (const graph::ProcessView& p : processes_) rates_.Update(p.label, *p.status);
  }

  graph::ChannelView channel_;
  std::vector<graph::ProcessView> processes_;
  StatusRates rates_;
};

TEST_F(ChannelRowsTest, FiguresFromTheStatuses) {
  const std::vector<ChannelRow> rows = BuildChannelRows({channel_}, processes_, rates_, {});
  ASSERT_EQ(rows.size(), 1u);
  const ChannelRow& r = rows[0];
  EXPECT_EQ(r.name, "/sensor/imu");
  EXPECT_EQ(r.type_name, "sensor_polling.ImuReading");
  EXPECT_EQ(r.writers, 1);
  EXPECT_EQ(r.readers, 3);  // endpoints, two nodes of fusion among them
  ASSERT_TRUE(r.hz.has_value());
  EXPECT_DOUBLE_EQ(*r.hz, 100.0);
  // The slowest reading process: log received 40 in the last second.
  ASSERT_TRUE(r.received_hz.has_value());
  EXPECT_DOUBLE_EQ(*r.received_hz, 40.0);
  // Counted once per process, not per endpoint.
  EXPECT_EQ(r.lost, 2u);
  EXPECT_EQ(r.undecodable, 3u);
  EXPECT_FALSE(r.bytes_per_second.has_value());
}

TEST_F(ChannelRowsTest, BandwidthFromTheMeters) {
  std::map<std::string, MeterReading> meters;
  meters["/sensor/imu"] = MeterReading{99, 6600, 500};
  const std::vector<ChannelRow> rows = BuildChannelRows({channel_}, processes_, rates_, meters);
  ASSERT_TRUE(rows[0].bytes_per_second.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].bytes_per_second, 6600.0);
  EXPECT_DOUBLE_EQ(*rows[0].hz, 100.0);  // the statuses' rate wins over the meter's
}

TEST_F(ChannelRowsTest, BandwidthFromTheWritersStatusesWhenTheyCountBytes) {
  graph::ChannelCounts first = Counts(200, 0);
  first.set_bytes_sent(13200);
  graph::ChannelCounts second = Counts(300, 0);
  second.set_bytes_sent(19800);
  rates_.Update("pollers@h:1", *Process("pollers@h:1", 3, 3 * kSecond, {first}).status);
  Feed({Process("pollers@h:1", 4, 4 * kSecond, {second})});
  std::map<std::string, MeterReading> meters;
  meters["/sensor/imu"] = MeterReading{99, 1, 500};
  const std::vector<ChannelRow> rows = BuildChannelRows({channel_}, processes_, rates_, meters);
  ASSERT_TRUE(rows[0].bytes_per_second.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].bytes_per_second, 6600.0);  // the writer's count wins
}

TEST(ChannelRowsNoStatusTest, RateFromTheMeterWhenNoWriterSendsStatuses) {
  graph::ChannelView c;
  c.name = "/x";
  c.writers = {Endpoint("quiet@h:9")};
  graph::ProcessView quiet;
  quiet.label = "quiet@h:9";
  StatusRates rates;
  std::vector<ChannelRow> rows = BuildChannelRows({c}, {quiet}, rates, {});
  EXPECT_FALSE(rows[0].hz.has_value());
  EXPECT_FALSE(rows[0].received_hz.has_value());
  rows = BuildChannelRows({c}, {quiet}, rates, {{"/x", MeterReading{10, 100, 10}}});
  EXPECT_DOUBLE_EQ(*rows[0].hz, 10.0);
}

TEST(ChannelRowsNoStatusTest, InProcessEndpointsAreNotAskedForCounts) {
  graph::ChannelView c;
  c.name = "/local";
  graph::ChannelEndpointView w = Endpoint("p@h:1");
  w.in_process_only = true;
  c.writers = {w};
  StatusRates rates;
  rates.Update("p@h:1", graph::ProcessStatus());
  std::vector<ChannelRow> rows = BuildChannelRows({c}, {}, rates, {});
  EXPECT_EQ(rows[0].writers, 1);
  EXPECT_FALSE(rows[0].hz.has_value());
}

TEST(ProcessBlocksTest, ComponentsAndTimersFromTheStatus) {
  graph::ProcessView p;
  p.label = "pollers@h:1";
  p.graph.set_clock("steady");
  p.graph.add_nodes("imu");
  p.graph.add_nodes("lidar");
  graph::ProcessStatus s;
  s.set_uptime_ns(12 * kSecond);
  graph::ComponentStatus* c = s.add_components();
  c->set_name("imu");
  c->set_class_name("ImuPoller");
  c->set_timer(true);
  c->set_configured_hz(100);
  c->set_achieved_hz(99.5);
  c->set_lateness_p99_ns(120000);
  c->set_overruns(2);
  c->set_missed_periods(1);
  c->set_procs(1200);
  c->add_timers()->set_name("extra");
  p.status = s;
  graph::ProcessView silent;
  silent.label = "old@h:2";

  StatusRates rates;
  const std::vector<ProcessBlock> blocks = BuildProcessBlocks({p, silent}, rates);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].label, "pollers@h:1");
  EXPECT_EQ(blocks[0].nodes, 2);
  EXPECT_TRUE(blocks[0].has_status);
  EXPECT_EQ(blocks[0].uptime, absl::Seconds(12));
  ASSERT_EQ(blocks[0].components.size(), 1u);
  const ComponentRow& imu = blocks[0].components[0];
  EXPECT_EQ(imu.class_name, "ImuPoller");
  EXPECT_DOUBLE_EQ(imu.configured_hz, 100);
  EXPECT_DOUBLE_EQ(imu.achieved_hz, 99.5);
  EXPECT_EQ(imu.lateness_p99, absl::Microseconds(120));
  EXPECT_EQ(imu.overruns, 2u);
  EXPECT_EQ(imu.missed_periods, 1u);
  ASSERT_EQ(imu.timers.size(), 1u);
  EXPECT_FALSE(imu.timers[0].achieved_hz.has_value());
  EXPECT_FALSE(blocks[1].has_status);
  EXPECT_TRUE(blocks[1].components.empty());
  EXPECT_EQ(ProcessLineCount(blocks), 4u);  // 2 headers, a component, a timer
}

}  // namespace
}  // namespace monitor
}  // namespace cyber
