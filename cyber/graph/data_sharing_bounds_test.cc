#include "cyber/graph/data_sharing_bounds.h"

#include "cyber/graph/graph_snapshot.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace graph {
namespace {

using ::testing::HasSubstr;

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
