#include "cyber/transport/dds/dds_qos.h"

#include "gtest/gtest.h"

namespace cyber {
namespace dds {
namespace {

namespace fdds = eprosima::fastdds::dds;

TEST(DdsQosTest, DefaultIsReliableVolatileKeepLast16) {
  const fdds::DataWriterQos w = WriterQos(ChannelQos{});
  EXPECT_EQ(w.reliability().kind, fdds::RELIABLE_RELIABILITY_QOS);
  EXPECT_EQ(w.durability().kind, fdds::VOLATILE_DURABILITY_QOS);
  EXPECT_EQ(w.history().kind, fdds::KEEP_LAST_HISTORY_QOS);
  EXPECT_EQ(w.history().depth, 16);
  EXPECT_EQ(w.resource_limits().max_samples, 16);
  const fdds::DataReaderQos r = ReaderQos(ChannelQos{});
  EXPECT_EQ(r.reliability().kind, fdds::RELIABLE_RELIABILITY_QOS);
  EXPECT_EQ(r.history().depth, 16);
}

TEST(DdsQosTest, EveryFieldMaps) {
  ChannelQos q;
  q.history = ChannelQos::History::kKeepAll;
  q.depth = 100;
  q.reliability = ChannelQos::Reliability::kBestEffort;
  q.durability = ChannelQos::Durability::kTransientLocal;
  const fdds::DataReaderQos r = ReaderQos(q);
  EXPECT_EQ(r.reliability().kind, fdds::BEST_EFFORT_RELIABILITY_QOS);
  EXPECT_EQ(r.durability().kind, fdds::TRANSIENT_LOCAL_DURABILITY_QOS);
  EXPECT_EQ(r.history().kind, fdds::KEEP_ALL_HISTORY_QOS);
  EXPECT_EQ(r.resource_limits().max_samples, 100);
  EXPECT_EQ(r.resource_limits().allocated_samples, 16);  // grows on demand
}

TEST(DdsQosTest, SensorDataIsBestEffortKeepLast5) {
  const fdds::DataWriterQos w = WriterQos(ChannelQos::SensorData());
  EXPECT_EQ(w.reliability().kind, fdds::BEST_EFFORT_RELIABILITY_QOS);
  EXPECT_EQ(w.history().depth, 5);
}

// Repairs within a keep-last depth on a lossy link: the loss scenario of
// tools/hosts/scenarios.sh shows what Fast-DDS's defaults lose.
TEST(DdsQosTest, ReliableRepairsAreFast) {
  const fdds::DataWriterQos w = WriterQos(ChannelQos{});
  EXPECT_EQ(w.reliable_writer_qos().times.heartbeatPeriod,
            eprosima::fastrtps::Duration_t(0, 10'000'000));
  EXPECT_EQ(w.reliable_writer_qos().times.nackResponseDelay, eprosima::fastrtps::Duration_t(0, 0));
  const fdds::DataReaderQos r = ReaderQos(ChannelQos{});
  EXPECT_EQ(r.reliable_reader_qos().times.heartbeatResponseDelay,
            eprosima::fastrtps::Duration_t(0, 0));
}

TEST(DdsQosTest, DepthZeroIsTreatedAsOne) {
  ChannelQos q;
  q.depth = 0;
  EXPECT_EQ(WriterQos(q).history().depth, 1);
}

// Data sharing only where the channel asks for it, with room beyond the
// history for a sample a reader still reads.
TEST(DdsQosTest, DataSharingOnlyWithABound) {
  ChannelQos plain;
  EXPECT_EQ(WriterQos(plain).data_sharing().kind(), fdds::OFF);
  EXPECT_EQ(ReaderQos(plain).data_sharing().kind(), fdds::OFF);
  ChannelQos shared;
  shared.data_sharing_max_bytes = 1 << 20;
  EXPECT_EQ(WriterQos(shared).data_sharing().kind(), fdds::AUTO);
  EXPECT_EQ(ReaderQos(shared).data_sharing().kind(), fdds::AUTO);
  EXPECT_EQ(WriterQos(shared).resource_limits().extra_samples, kExtraSharedSamples);
  EXPECT_NE(plain, shared);
  EXPECT_EQ(shared.ToString(), "reliable, volatile, keep last 16, data sharing up to 1048576 bytes");
}

}  // namespace
}  // namespace dds
}  // namespace cyber
