#include "cyber/transport/channel_report.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

RemotePeer Peer(const std::string& process, int64_t pid) {
  RemotePeer p;
  p.host = "robot";
  p.pid = pid;
  p.process = process;
  return p;
}

TEST(ChannelReportTest, ListsLocalAndRemoteEndsAndCounts) {
  ChannelTopology imu;
  imu.channel = "/sensor/imu";
  imu.type_name = "sensor_polling.ImuReading";
  imu.writers = {"imu"};
  ChannelTopology plain;
  plain.channel = "/debug";
  plain.type_name = "DebugStruct";
  plain.writers = {"a"};
  plain.readers = {"b"};
  RemoteChannelStats s;
  s.channel = "/sensor/imu";
  s.type_name = "sensor_polling.ImuReading";
  s.sent = 1000;
  s.lost = 2;
  s.latency_p99_ns = 410'000;
  s.remote_readers = {Peer("fusion", 7)};
  s.type_conflicts = {"old_fusion (host robot, pid 9) reads sensor_polling.OldImu"};
  const std::string table = ChannelTable({imu, plain}, {s});
  EXPECT_TRUE(absl::StrContains(table, "fusion@robot:7")) << table;
  EXPECT_TRUE(absl::StrContains(table, "1000")) << table;
  EXPECT_TRUE(absl::StrContains(table, "0.41")) << table;
  EXPECT_TRUE(absl::StrContains(table, "1/0")) << table;
  EXPECT_TRUE(absl::StrContains(table, "(in-process)")) << table;
  EXPECT_TRUE(absl::StrContains(table, "type conflict on /sensor/imu: old_fusion")) << table;
  const std::string line = ChannelStatusLine({s});
  EXPECT_EQ(line, "/sensor/imu →1 ↑1000 drop 2 p99 0.41 ms TYPE CONFLICT");
}

// Only conflicts that last are live status; ended ones are history, in the
// table only.
TEST(ChannelReportTest, EndedTypeConflictsAreCountedNotFlagged) {
  RemoteChannelStats s;
  s.channel = "/sensor/imu";
  s.type_name = "sensor_polling.ImuReading";
  s.received = 40;
  s.remote_writers = {Peer("imu_driver", 8)};
  s.type_conflicts_ended = 2;
  const std::string table = ChannelTable({}, {s});
  EXPECT_TRUE(absl::StrContains(table, "  2 type conflicts on /sensor/imu ended\n")) << table;
  EXPECT_FALSE(absl::StrContains(table, "type conflict on")) << table;
  EXPECT_EQ(ChannelStatusLine({s}), "/sensor/imu ←1 ↓40");
}

TEST(ChannelReportTest, NothingToSayIsEmpty) {
  EXPECT_EQ(ChannelTable({}, {}), "");
  EXPECT_EQ(ChannelStatusLine({}), "");
  EXPECT_EQ(LostPeersLine({}), "");
}

TEST(ChannelReportTest, LostPeersAreNamed) {
  EXPECT_EQ(LostPeersLine({Peer("fusion", 7), Peer("planner", 9)}),
            "peers lost: fusion@robot:7,planner@robot:9");
}

}  // namespace
}  // namespace cyber
