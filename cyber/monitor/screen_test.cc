#include "cyber/monitor/screen.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cyber {
namespace monitor {
namespace {

MonitorSnapshot TwoChannels() {
  MonitorSnapshot s;
  s.domain = "domain 42 (CYBER_DOMAIN_ID=42)";
  ChannelRow imu;
  imu.name = "/sensor/imu";
  imu.type_name = "sensor_polling.ImuReading";
  imu.writers = 1;
  imu.readers = 2;
  imu.hz = 100.04;
  imu.received_hz = 99.0;
  imu.bytes_per_second = 6600;
  imu.lost = 3;
  ChannelRow lidar;
  lidar.name = "/sensor/lidar";
  lidar.type_name = "sensor_polling.LidarScan";
  lidar.writers = 1;
  s.channels = {imu, lidar};
  ProcessBlock p;
  p.label = "pollers@h:1";
  p.has_status = true;
  p.uptime = absl::Seconds(75);
  p.clock = "steady";
  ComponentRow c;
  c.name = "imu";
  c.class_name = "ImuPoller";
  c.timer = true;
  c.configured_hz = 100;
  c.achieved_hz = 99.9;
  c.lateness_p99 = absl::Microseconds(250);
  c.timers.push_back(TimerRow{"extra", 5, 5.0, 50, 0, 0});
  p.components = {c};
  s.processes = {p};
  return s;
}

void ExpectShape(const Frame& f, int width, int height) {
  ASSERT_EQ(f.lines.size(), static_cast<size_t>(height));
  for (const std::string& l : f.lines) EXPECT_LE(l.size(), static_cast<size_t>(width)) << l;
}

TEST(ScreenTest, ChannelListColumnsAndSelection) {
  NavState nav;
  nav.channel_row = 1;
  const Frame f = Render(TwoChannels(), nav, 120, 10);
  ExpectShape(f, 120, 10);
  EXPECT_TRUE(absl::StrContains(f.lines[0], "domain 42")) << f.lines[0];
  EXPECT_TRUE(absl::StrContains(f.lines[1], "Channel")) << f.lines[1];
  EXPECT_TRUE(absl::StrContains(f.lines[1], "Bandwidth")) << f.lines[1];
  EXPECT_TRUE(absl::StrContains(f.lines[2], "/sensor/imu")) << f.lines[2];
  EXPECT_TRUE(absl::StrContains(f.lines[2], "100.0")) << f.lines[2];
  EXPECT_TRUE(absl::StrContains(f.lines[2], "99.0")) << f.lines[2];
  EXPECT_TRUE(absl::StrContains(f.lines[2], "6.6 KB/s")) << f.lines[2];
  EXPECT_TRUE(absl::StrContains(f.lines[3], "/sensor/lidar")) << f.lines[3];
  EXPECT_EQ(f.highlight, 3);
  EXPECT_TRUE(absl::StrContains(f.lines[9], "q quit")) << f.lines[9];
}

TEST(ScreenTest, ScrollsToKeepTheSelectionShown) {
  MonitorSnapshot s;
  for (int i = 0; i < 20; ++i) {
    ChannelRow r;
    r.name = "/c" + std::to_string(100 + i);
    s.channels.push_back(r);
  }
  NavState nav;
  nav.channel_row = 15;
  const Frame f = Render(s, nav, 80, 8);  // 5 rows shown
  ExpectShape(f, 80, 8);
  ASSERT_EQ(f.highlight, 6);
  EXPECT_TRUE(absl::StartsWith(f.lines[6], "/c115")) << f.lines[6];
  EXPECT_TRUE(absl::StartsWith(f.lines[2], "/c111")) << f.lines[2];
}

TEST(ScreenTest, NarrowTerminalCutsLongNames) {
  MonitorSnapshot s = TwoChannels();
  s.channels[0].name = "/a/very/long/channel/name/that/does/not/fit/in/its/column";
  const Frame f = Render(s, NavState(), 60, 6);
  ExpectShape(f, 60, 6);
  EXPECT_TRUE(absl::StrContains(f.lines[2], "~")) << f.lines[2];
}

TEST(ScreenTest, EmptyDomainSaysWhereItLookedAndWhy) {
  MonitorSnapshot s;
  s.domain = "domain 7 (CYBER_DOMAIN_ID=7)";
  s.why_empty = "no process announced itself\nmainboard always does";
  const Frame f = Render(s, NavState(), 80, 8);
  ExpectShape(f, 80, 8);
  EXPECT_EQ(f.highlight, -1);
  EXPECT_EQ(f.lines[2], "No channel found in domain 7 (CYBER_DOMAIN_ID=7).");
  EXPECT_EQ(f.lines[3], "no process announced itself");
  EXPECT_EQ(f.lines[4], "mainboard always does");
}

TEST(ScreenTest, LongExplanationsAreWrappedBetweenWords) {
  MonitorSnapshot s;
  s.domain = "domain 7";
  s.why_empty = "one two three four five six seven eight nine ten eleven twelve";
  const Frame f = Render(s, NavState(), 20, 10);
  ExpectShape(f, 20, 10);
  EXPECT_EQ(f.lines[2], "No channel found in");
  EXPECT_EQ(f.lines[3], "domain 7.");
  EXPECT_EQ(f.lines[4], "one two three four");
  EXPECT_EQ(f.lines[5], "five six seven eight");
  EXPECT_EQ(f.lines[6], "nine ten eleven");
}

TEST(ScreenTest, ProcessViewListsComponentsAndTimers) {
  NavState nav;
  nav.view = View::kProcesses;
  nav.process_line = 1;
  const Frame f = Render(TwoChannels(), nav, 120, 8);
  ExpectShape(f, 120, 8);
  EXPECT_TRUE(absl::StrContains(f.lines[1], "Late p99")) << f.lines[1];
  EXPECT_TRUE(absl::StartsWith(f.lines[2], "pollers@h:1  up 1m15s")) << f.lines[2];
  EXPECT_TRUE(absl::StrContains(f.lines[3], "ImuPoller")) << f.lines[3];
  EXPECT_TRUE(absl::StrContains(f.lines[3], "250 us")) << f.lines[3];
  EXPECT_TRUE(absl::StrContains(f.lines[3], "99.9")) << f.lines[3];
  EXPECT_TRUE(absl::StrContains(f.lines[4], "timer extra")) << f.lines[4];
  EXPECT_EQ(f.highlight, 3);
}

TEST(ScreenTest, MessageViewScrolls) {
  MonitorSnapshot s = TwoChannels();
  MessagePanel m;
  m.channel = "/sensor/imu";
  m.type_name = "sensor_polling.ImuReading";
  m.received = 12;
  m.hz = 100;
  m.text = "seq: 1\nstamp_ns: 2\naccel {\n  x: 1\n}\n";
  m.has_message = true;
  s.message = m;
  NavState nav;
  nav.view = View::kMessage;
  nav.open_channel = "/sensor/imu";
  Frame f = Render(s, nav, 80, 6);
  ExpectShape(f, 80, 6);
  EXPECT_TRUE(absl::StrContains(f.lines[0], "/sensor/imu  sensor_polling.ImuReading"));
  EXPECT_TRUE(absl::StrContains(f.lines[1], "received 12")) << f.lines[1];
  EXPECT_EQ(f.lines[2], "seq: 1");
  EXPECT_EQ(f.lines[4], "accel {");
  EXPECT_EQ(f.highlight, -1);
  nav.message_scroll = 2;
  f = Render(s, nav, 80, 6);
  EXPECT_EQ(f.lines[2], "accel {");
  EXPECT_EQ(f.lines[3], "  x: 1");
  EXPECT_EQ(MessageLines(m).size(), 5u);
}

TEST(ScreenTest, BatchTextHasEveryRow) {
  const std::string text = BatchText(TwoChannels(), 120);
  EXPECT_TRUE(absl::StrContains(text, "/sensor/imu")) << text;
  EXPECT_TRUE(absl::StrContains(text, "/sensor/lidar")) << text;
  EXPECT_TRUE(absl::StrContains(text, "pollers@h:1")) << text;
  EXPECT_TRUE(absl::StrContains(text, "timer extra")) << text;
}

TEST(ScreenTest, Formats) {
  EXPECT_EQ(FormatBandwidth(980), "980 B/s");
  EXPECT_EQ(FormatBandwidth(12345), "12.3 KB/s");
  EXPECT_EQ(FormatBandwidth(1500000), "1.50 MB/s");
  EXPECT_EQ(FormatHz(std::nullopt), "-");
  EXPECT_EQ(FormatHz(9.96), "10.0");
}

}  // namespace
}  // namespace monitor
}  // namespace cyber
