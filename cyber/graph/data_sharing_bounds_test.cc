#include "cyber/graph/data_sharing_bounds.h"

#include "cyber/graph/graph_snapshot.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace graph {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

BoundedEndpoint Writer(uint32_t bound) { return {"pollers@vm:27 (lidar)", bound}; }
BoundedEndpoint Reader(uint32_t bound) { return {"fusion@vm:28 (fusion)", bound}; }

TEST(DataSharingBoundMismatchTest, AReaderWithoutABoundReceivesEverything) {
  EXPECT_EQ(DataSharingBoundMismatch("/lidar", Writer(0), Reader(0)), std::nullopt);
  EXPECT_EQ(DataSharingBoundMismatch("/lidar", Writer(1 << 20), Reader(0)), std::nullopt);
}

TEST(DataSharingBoundMismatchTest, AWriterBoundedToAtMostTheReadersBoundLosesNothing) {
  EXPECT_EQ(DataSharingBoundMismatch("/lidar", Writer(1 << 20), Reader(1 << 20)), std::nullopt);
  EXPECT_EQ(DataSharingBoundMismatch("/lidar", Writer(4096), Reader(1 << 20)), std::nullopt);
}

TEST(DataSharingBoundMismatchTest, AnUnboundedWriterOfABoundedReaderIsNamed) {
  std::optional<std::string> said = DataSharingBoundMismatch("/lidar", Writer(0), Reader(1 << 20));
  ASSERT_TRUE(said.has_value());
  EXPECT_THAT(*said, HasSubstr("channel \"/lidar\""));
  EXPECT_THAT(*said, HasSubstr("reader fusion@vm:28 (fusion) has data_sharing_max_bytes 1048576"));
  EXPECT_THAT(*said, HasSubstr("writer pollers@vm:27 (lidar) has none"));
  EXPECT_THAT(*said, HasSubstr("over 1048576 bytes are dropped"));
}

TEST(DataSharingBoundMismatchTest, AWriterBoundedToMoreThanTheReaderIsNamed) {
  std::optional<std::string> said =
      DataSharingBoundMismatch("/lidar", Writer(4 << 20), Reader(1 << 20));
  ASSERT_TRUE(said.has_value());
  EXPECT_THAT(*said, HasSubstr("writer pollers@vm:27 (lidar) has 4194304"));
  EXPECT_THAT(*said, HasSubstr("over 1048576 bytes"));
}

// The one pair loop both the graph and the announcer use: writers with
// readers, in two processes, of one type.
TEST(DataSharingBoundMismatchesAmongTest, PairsWritersWithReadersOfOtherProcessesAndOneType) {
  const std::vector<AnnouncedEndpoint> endpoints = {
      {"pollers@vm:27", "lidar", "pb.Cloud", /*writer=*/true, 0},
      // Same process as the writer: never a pair, whatever the bounds.
      {"pollers@vm:27", "monitor", "pb.Cloud", /*writer=*/false, 4096},
      // Another type on the channel: not this writer's reader.
      {"fusion@vm:28", "legacy", "pb.OldCloud", /*writer=*/false, 4096},
      // Bounded readers elsewhere: both named, in order.
      {"fusion@vm:28", "fusion", "pb.Cloud", /*writer=*/false, 4096},
      {"mapping@vm:29", "mapper", "pb.Cloud", /*writer=*/false, 8192},
      // Unbounded reader elsewhere: loses nothing.
      {"viewer@vm:30", "viewer", "pb.Cloud", /*writer=*/false, 0},
  };
  std::vector<std::string> said = DataSharingBoundMismatchesAmong("/lidar", endpoints);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_THAT(said[0], HasSubstr("reader fusion@vm:28 (fusion) has data_sharing_max_bytes 4096 "
                                 "and writer pollers@vm:27 (lidar) has none"));
  EXPECT_THAT(said[1], HasSubstr("reader mapping@vm:29 (mapper) has data_sharing_max_bytes 8192"));

  // The same pair announced twice (two graphs that overlap) is said once.
  std::vector<AnnouncedEndpoint> twice = endpoints;
  twice.push_back(endpoints[3]);
  EXPECT_EQ(DataSharingBoundMismatchesAmong("/lidar", twice), said);

  // A writer bounded to at most every reader's bound: nothing.
  std::vector<AnnouncedEndpoint> fitting = endpoints;
  fitting[0].data_sharing_max_bytes = 4096;
  EXPECT_THAT(DataSharingBoundMismatchesAmong("/lidar", fitting), IsEmpty());
  EXPECT_THAT(DataSharingBoundMismatchesAmong("/lidar", {}), IsEmpty());
}

// The bound travels in the processes' graphs.
TEST(DataSharingBoundMismatchTest, TheBoundCrossesTheGraphProto) {
  ChannelQos qos = ChannelQos::SensorData();
  qos.data_sharing_max_bytes = 6 << 20;
  EXPECT_EQ(FromProto(ToProto(qos)), qos);
  EXPECT_EQ(FromProto(ToProto(ChannelQos{})), ChannelQos{});
}

}  // namespace
}  // namespace graph
}  // namespace cyber
