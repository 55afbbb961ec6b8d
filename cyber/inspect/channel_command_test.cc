// cyber_channel's argument parsing and info's formatting on views built by
// hand (a udp link and a type conflict, which one host's processes cannot
// show; data-sharing bounds that drop messages); the commands against processes: inspect_cross_process_test.

#include "cyber/inspect/channel_command.h"

#include "absl/strings/str_join.h"
#include "cyber/inspect/node_command.h"
#include "cyber/inspect/service_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace inspect {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string ParseError(const std::vector<std::string>& args) {
  return std::string(ParseChannelArgs(args).status().message());
}

TEST(ParseChannelArgsTest, Spellings) {
  auto echo = ParseChannelArgs({"echo", "/sensor/imu", "-n", "3", "-f", "accel.x"});
  ASSERT_TRUE(echo.ok()) << echo.status();
  EXPECT_EQ(echo->command, "echo");
  EXPECT_THAT(echo->channels, ElementsAre("/sensor/imu"));
  EXPECT_EQ(echo->count, 3);
  EXPECT_EQ(echo->field, "accel.x");

  auto bw = ParseChannelArgs({"bw", "/a", "/b", "-w", "50"});
  ASSERT_TRUE(bw.ok()) << bw.status();
  EXPECT_THAT(bw->channels, ElementsAre("/a", "/b"));
  EXPECT_EQ(bw->window, 50u);
  EXPECT_EQ(bw->count, 0);
}

TEST(ParseChannelArgsTest, ErrorsSayWhatIsWrong) {
  EXPECT_THAT(ParseError({}), HasSubstr("no command given"));
  EXPECT_THAT(ParseError({"show"}), HasSubstr("unknown command \"show\""));
  EXPECT_THAT(ParseError({"list", "/a"}), HasSubstr("list takes no channel"));
  EXPECT_THAT(ParseError({"info"}), HasSubstr("info takes one channel"));
  EXPECT_THAT(ParseError({"hz", "/a", "/b"}), HasSubstr("hz takes one channel"));
  EXPECT_THAT(ParseError({"bw"}), HasSubstr("bw takes one channel or more"));
  EXPECT_THAT(ParseError({"info", "/a", "-n", "3"}), HasSubstr("flag -n does not apply to info"));
  EXPECT_THAT(ParseError({"hz", "/a", "-f", "x"}), HasSubstr("flag -f does not apply to hz"));
  EXPECT_THAT(ParseError({"hz", "/a", "-w", "1"}), HasSubstr("2 messages or more"));
  EXPECT_THAT(ParseError({"echo", "/a", "-n", "-1"}), HasSubstr("is not a count > 0"));
}

TEST(ParseNodeAndServiceArgsTest, Spellings) {
  EXPECT_EQ(ParseNodeArgs({"info", "imu"})->node, "imu");
  EXPECT_FALSE(ParseNodeArgs({"info"}).ok());
  EXPECT_FALSE(ParseNodeArgs({"ls"}).ok());
  auto call = ParseServiceArgs({"call", "/map/lookup", "x: 1", "--timeout", "250ms"});
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->service, "/map/lookup");
  EXPECT_EQ(call->request, "x: 1");
  EXPECT_EQ(call->timeout, absl::Milliseconds(250));
  EXPECT_EQ(ParseServiceArgs({"call", "/s"})->request, "");
  EXPECT_EQ(ParseServiceArgs({"call", "/s"})->timeout, absl::Seconds(1));
  EXPECT_THAT(std::string(ParseServiceArgs({"info", "/s", "--timeout", "1s"}).status().message()),
              HasSubstr("--timeout does not apply to info"));
  EXPECT_THAT(std::string(ParseServiceArgs({"call", "/s", "x", "--timeout", "0"}).status().message()),
              HasSubstr("not a duration > 0"));
}

graph::ChannelEndpointView Endpoint(const std::string& node, const std::string& process,
                                    const std::string& host, const std::string& type) {
  graph::ChannelEndpointView e;
  e.node = node;
  e.process_label = process + "@" + host + ":1";
  e.host = host;
  e.type_name = type;
  e.qos = ChannelQos();
  return e;
}

TEST(FormatChannelInfoTest, LinksPerProcessPairAndConflicts) {
  graph::ChannelView c;
  c.name = "/scan";
  c.type_name = "lidar.Scan";
  c.writers = {Endpoint("driver", "drivers", "robot", "lidar.Scan")};
  c.readers = {Endpoint("planner", "planning", "robot", "lidar.Scan"),
               Endpoint("mapper", "planning", "robot", "lidar.Scan"),
               Endpoint("viewer", "laptop_view", "laptop", "lidar.OldScan")};
  c.readers[2].qos.reset();
  c.readers[2].in_process_only = false;
  c.type_conflict = true;
  c.conflict_details = {"laptop_view@laptop:1 reads lidar.OldScan: field 2 \"ranges\" is float, "
                        "lidar.Scan's is double"};
  const std::string info = FormatChannelInfo(c);
  EXPECT_THAT(info, HasSubstr("/scan\n\ttype: lidar.Scan\n\twriters (1):\n"
                              "\t\tdriver in drivers@robot:1  type: lidar.Scan  qos: "));
  EXPECT_THAT(info, HasSubstr("\treaders (3):\n"));
  EXPECT_THAT(info, HasSubstr("viewer in laptop_view@laptop:1  type: lidar.OldScan  qos: in "
                              "process only\n"));
  // Two nodes of one process: one link; another host: udp.
  EXPECT_THAT(info, HasSubstr("\tlinks (2):\n"
                              "\t\tdrivers@robot:1 -> laptop_view@laptop:1: udp\n"
                              "\t\tdrivers@robot:1 -> planning@robot:1: shm\n"));
  EXPECT_THAT(info, HasSubstr("\ttype conflict:\n\t\tlaptop_view@laptop:1 reads lidar.OldScan"));
  EXPECT_THAT(info, Not(HasSubstr("data sharing")));
}

// A reader bounded for data sharing below its writer's messages: the
// graph names the pair, and info shows it.
TEST(FormatChannelInfoTest, DataSharingBoundsThatDropMessages) {
  graph::ChannelView c;
  c.name = "/cloud";
  c.type_name = "lidar.Cloud";
  c.writers = {Endpoint("driver", "drivers", "robot", "lidar.Cloud"),
               Endpoint("replay", "drivers", "robot", "lidar.Cloud")};
  c.readers = {Endpoint("mapper", "mapping", "robot", "lidar.Cloud"),
               Endpoint("viewer", "laptop_view", "laptop", "lidar.Cloud"),
               Endpoint("echo", "drivers", "robot", "lidar.Cloud")};
  c.writers[0].qos->data_sharing_max_bytes = 4 << 20;
  c.writers[1].qos->data_sharing_max_bytes = 4 << 20;
  c.readers[0].qos->data_sharing_max_bytes = 1 << 20;  // drops: 4 MiB > 1 MiB
  // No bound: receives everything. Same process: the bus, not DDS.
  c.readers[2].qos->data_sharing_max_bytes = 1 << 20;
  c.bound_mismatches = graph::DataSharingBoundMismatches(c);
  ASSERT_EQ(c.bound_mismatches.size(), 2u) << absl::StrJoin(c.bound_mismatches, "\n");
  EXPECT_THAT(c.bound_mismatches[0],
              HasSubstr("reader mapping@robot:1 (mapper) has data_sharing_max_bytes 1048576 and "
                        "writer drivers@robot:1 (driver) has 4194304"));
  EXPECT_THAT(c.bound_mismatches[1], HasSubstr("writer drivers@robot:1 (replay) has 4194304"));
  const std::string info = FormatChannelInfo(c);
  EXPECT_THAT(info, HasSubstr("\tdata sharing bounds that drop messages:\n\t\tchannel \"/cloud\": "
                              "reader mapping@robot:1 (mapper)"));

  // Bounded alike: nothing to say.
  c.readers[0].qos->data_sharing_max_bytes = 4 << 20;
  EXPECT_THAT(graph::DataSharingBoundMismatches(c), IsEmpty());
  // A reader of another type is the type conflict's business, not this.
  c.readers[0].qos->data_sharing_max_bytes = 1;
  c.readers[0].type_name = "lidar.OldCloud";
  EXPECT_THAT(graph::DataSharingBoundMismatches(c), IsEmpty());
}

}  // namespace
}  // namespace inspect
}  // namespace cyber
