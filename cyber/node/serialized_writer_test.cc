// SerializedWriter: bytes in, the channel's message out to every reader;
// the errors name node, channel and type.

#include "cyber/node/serialized_writer.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "cyber/common/test_waits.h"
#include "cyber/node/node.h"
#include "cyber/transport/channel_bus.h"
#include "google/protobuf/duration.pb.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/scheduler.h"

namespace cyber {
namespace {

using google::protobuf::Duration;

scheduler::Scheduler::Options OneProcessor() {
  scheduler::Scheduler::Options o;
  o.config = scheduler::DefaultSchedulerConfig(1);
  return o;
}

TEST(SerializedWriterTest, DeliversTheParsedMessageToEveryReader) {
  scheduler::Scheduler sched(OneProcessor());
  ChannelBus bus;
  Node graph("graph", &sched, &bus);
  Node replay("replay", &sched, &bus);
  std::mutex mu;
  std::vector<int64_t> seen;
  auto reader = graph.TryCreateReader<Duration>(
      "/d",
      [&](const std::shared_ptr<const Duration>& d) {
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(d->seconds());
      },
      8);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = replay.TryCreateSerializedWriter("/d");
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->type_name(), "google.protobuf.Duration");
  EXPECT_EQ((*writer)->channel_name(), "/d");

  for (int64_t s : {7, 8}) {
    Duration d;
    d.set_seconds(s);
    EXPECT_TRUE((*writer)->Write(d.SerializeAsString()));
  }
  EXPECT_FALSE((*writer)->Write("\xff\xff\xff"));  // not a Duration
  ASSERT_TRUE(test::Eventually([&] {
    std::lock_guard<std::mutex> lock(mu);
    return seen.size() == 2;
  }));
  EXPECT_EQ(seen, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ((*writer)->stats().written, 2u);
  EXPECT_EQ((*writer)->stats().refused, 1u);

  // It counts as a writer of its node on the channel.
  bool listed = false;
  for (const ChannelTopology& t : bus.Topology()) {
    if (t.channel == "/d") listed = t.writers == std::vector<std::string>{"replay"};
  }
  EXPECT_TRUE(listed);

  replay.Shutdown();
  EXPECT_FALSE((*writer)->Write(Duration().SerializeAsString()));
  graph.Shutdown();
}

TEST(SerializedWriterTest, AChannelNobodyUsedHasNoKnownType) {
  scheduler::Scheduler sched(OneProcessor());
  ChannelBus bus;
  Node replay("replay", &sched, &bus);
  auto writer = replay.TryCreateSerializedWriter("/nobody");
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(writer.status().message(), "\"/nobody\""));
  EXPECT_TRUE(absl::StrContains(writer.status().message(), "\"replay\""));
}

struct Plain {
  int x = 0;
};

TEST(SerializedWriterTest, AChannelOfAPlainTypeIsRefused) {
  scheduler::Scheduler sched(OneProcessor());
  ChannelBus bus;
  Node graph("graph", &sched, &bus);
  auto reader = graph.TryCreateReader<Plain>("/plain", [](const std::shared_ptr<const Plain>&) {});
  ASSERT_TRUE(reader.ok());
  auto writer = graph.TryCreateSerializedWriter("/plain");
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(writer.status().message(), "Plain"));
  graph.Shutdown();
}

}  // namespace
}  // namespace cyber
