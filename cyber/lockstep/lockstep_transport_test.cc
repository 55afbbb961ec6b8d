#include "cyber/lockstep/lockstep_transport.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cyber/transport/testing/fake_transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace lockstep {
namespace {

using ::testing::ElementsAre;

// A sample from `process` on the transport beneath, sent at `instant_ns`
// with `sequence`.
void Arrive(test::FakeTransport& inner, const std::string& channel, const std::string& process,
            int64_t instant_ns, uint64_t sequence, const std::string& payload) {
  ASSERT_TRUE(inner.Arrive(channel, payload, {process, sequence, instant_ns}))
      << "nothing subscribed to " << channel;
}

// The transport beneath refuses a publish without a stamp: the lockstep
// transport must stamp every message with its simulated instant.
std::shared_ptr<test::FakeTransport> StampedOnlyTransport() {
  test::FakeTransportOptions options;
  options.stamped_only = true;
  return std::make_shared<test::FakeTransport>(options);
}

RemoteEndpoint On(const std::string& channel) {
  RemoteEndpoint e;
  e.channel = channel;
  e.type_name = "t";
  return e;
}

struct Fixture {
  std::shared_ptr<test::FakeTransport> inner = StampedOnlyTransport();
  int64_t now = 0;
  LockstepTransport transport{inner, [this] { return now; }};
  std::vector<std::string> got;
  std::unique_ptr<RemoteSubscription> Read(const std::string& channel) {
    return *transport.Subscribe(On(channel), [this, channel](const RemoteSample& s) {
      got.push_back(channel + ":" + std::string(s.payload));
      return true;
    });
  }
};

TEST(LockstepTransportTest, EveryMessageIsStampedWithTheSimulatedInstantAndCounted) {
  Fixture f;
  std::shared_ptr<RemotePublisher> out = *f.transport.Publisher(On("/a"));
  f.now = 1500;
  ASSERT_TRUE(out->Publish("x").ok());
  f.now = 2500;
  ASSERT_TRUE(out->Publish("y").ok());
  const std::vector<test::FakePublication> sent = f.inner->Publications("/a");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].stamp, absl::UnixEpoch() + absl::Nanoseconds(1500));
  EXPECT_EQ(sent[1].stamp, absl::UnixEpoch() + absl::Nanoseconds(2500));
  std::vector<ChannelCount> counts = f.transport.Counts();
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_TRUE(counts[0].writes());
  EXPECT_FALSE(counts[0].reads());
  EXPECT_EQ(counts[0].sent(), 2u);
}

TEST(LockstepTransportTest, ArrivalsWaitForTheirInstantThenComeInOneOrder) {
  Fixture f;
  auto a = f.Read("/a");
  auto b = f.Read("/b");
  int arrivals = 0;
  f.transport.SetArrivalListener([&arrivals] { ++arrivals; });
  // Wall-clock arrival order differs from the order they must take.
  Arrive(*f.inner, "/b", "zeta", 10, 1, "z1");
  Arrive(*f.inner, "/a", "alpha", 20, 5, "a5");
  Arrive(*f.inner, "/a", "alpha", 10, 4, "a4");
  Arrive(*f.inner, "/a", "beta", 10, 9, "b9");
  EXPECT_EQ(arrivals, 4);
  EXPECT_EQ(f.transport.EarliestQueued(), 10);
  EXPECT_EQ(f.transport.DeliverDue(5), 0u);
  EXPECT_TRUE(f.got.empty());
  EXPECT_EQ(f.transport.DeliverDue(10), 3u);
  // By instant, then writer, then the order each writer's messages came in.
  EXPECT_THAT(f.got, ElementsAre("/a:a4", "/a:b9", "/b:z1"));
  EXPECT_EQ(f.transport.EarliestQueued(), 20);
  EXPECT_EQ(f.transport.DeliverDue(20), 1u);
  EXPECT_THAT(f.got, ElementsAre("/a:a4", "/a:b9", "/b:z1", "/a:a5"));
  EXPECT_EQ(f.transport.EarliestQueued(), -1);
  std::map<std::string, uint64_t> received;
  for (const ChannelCount& c : f.transport.Counts()) {
    EXPECT_TRUE(c.reads());
    received[c.channel()] = c.received();
  }
  EXPECT_EQ(received["/a"], 3u);
  EXPECT_EQ(received["/b"], 1u);
}

// One process's messages of one instant come in the order it sent them,
// across channels, whether the member takes them in one run or as they
// arrive: the two runs of a reader hand over the same sequence.
TEST(LockstepTransportTest, OneWritersMessagesOfAnInstantKeepItsSendOrderAcrossChannels) {
  Fixture together;
  auto a1 = together.Read("/a");
  auto b1 = together.Read("/b");
  Arrive(*together.inner, "/b", "pollers", 10, 1, "lidar");
  Arrive(*together.inner, "/a", "pollers", 10, 1, "imu");
  EXPECT_EQ(together.transport.DeliverDue(10), 2u);

  Fixture apart;
  auto a2 = apart.Read("/a");
  auto b2 = apart.Read("/b");
  Arrive(*apart.inner, "/b", "pollers", 10, 1, "lidar");
  EXPECT_EQ(apart.transport.DeliverDue(10), 1u);
  Arrive(*apart.inner, "/a", "pollers", 10, 1, "imu");
  EXPECT_EQ(apart.transport.DeliverDue(10), 1u);

  EXPECT_THAT(together.got, ElementsAre("/b:lidar", "/a:imu"));
  EXPECT_EQ(together.got, apart.got);
}

// A gathering reader is run with `through`: what arrived after that is
// held back, however early its instant, and counted as arrived, not
// delivered. The arrivals counter comes with the counts.
TEST(LockstepTransportTest, ThroughHoldsBackWhatArrivedLaterAndArrivedIsCountedApart) {
  Fixture f;
  auto a = f.Read("/a");
  auto b = f.Read("/b");
  Arrive(*f.inner, "/b", "lidar", 10, 1, "l1");
  Arrive(*f.inner, "/a", "imu", 10, 1, "i1");
  uint64_t arrivals = 0;
  f.transport.Counts(false, &arrivals);
  EXPECT_EQ(arrivals, 2u);
  Arrive(*f.inner, "/a", "imu", 10, 2, "i2");  // after the counts: a later step's
  EXPECT_EQ(f.transport.DeliverDue(10, arrivals), 2u);
  EXPECT_THAT(f.got, ElementsAre("/a:i1", "/b:l1")) << "writer order, not arrival order";
  EXPECT_EQ(f.transport.EarliestQueued(), 10) << "i2 still waits";
  std::map<std::string, std::pair<uint64_t, uint64_t>> counts;  // channel -> (arrived, received)
  for (const ChannelCount& c : f.transport.Counts(false, &arrivals)) {
    counts[c.channel()] = {c.arrived(), c.received()};
  }
  EXPECT_EQ(arrivals, 3u);
  EXPECT_EQ(counts["/a"], std::make_pair(uint64_t{2}, uint64_t{1}));
  EXPECT_EQ(counts["/b"], std::make_pair(uint64_t{1}, uint64_t{1}));
  EXPECT_EQ(f.transport.DeliverDue(10, arrivals), 1u);
  EXPECT_THAT(f.got, ElementsAre("/a:i1", "/b:l1", "/a:i2"));
}

// The delivery digest follows what was handed over and in which order.
TEST(LockstepTransportTest, TheDeliveryDigestDiffersWithTheOrder) {
  auto run = [](bool imu_first, uint64_t* delivered) {
    Fixture f;
    auto a = f.Read("/a");
    auto b = f.Read("/b");
    Arrive(*f.inner, "/a", "imu", 10, 1, "i1");
    if (!imu_first) f.transport.DeliverDue(10);
    Arrive(*f.inner, "/b", "lidar", 10, 1, "l1");
    if (!imu_first) f.transport.DeliverDue(10);
    f.transport.DeliverDue(10);
    return f.transport.DeliveryDigest(delivered);
  };
  uint64_t n1 = 0, n2 = 0;
  EXPECT_EQ(run(true, &n1), run(true, &n2));
  EXPECT_EQ(n1, 2u);
  // Handed over one by one as they came: imu, then lidar -- the same order.
  EXPECT_EQ(run(true, &n1), run(false, &n2));
  Fixture empty;
  EXPECT_NE(run(true, &n1), empty.transport.DeliveryDigest());
  Fixture reversed;
  auto a = reversed.Read("/a");
  auto b = reversed.Read("/b");
  Arrive(*reversed.inner, "/b", "lidar", 10, 1, "l1");
  reversed.transport.DeliverDue(10);
  Arrive(*reversed.inner, "/a", "imu", 10, 1, "i1");
  reversed.transport.DeliverDue(10);
  EXPECT_NE(reversed.transport.DeliveryDigest(), run(true, &n1)) << "lidar before imu";
}

TEST(LockstepTransportTest, AClosedReaderGetsNothingButItsMessagesStillCount) {
  Fixture f;
  auto a = f.Read("/a");
  Arrive(*f.inner, "/a", "alpha", 10, 1, "a1");
  a.reset();
  EXPECT_EQ(f.transport.DeliverDue(10), 1u);
  EXPECT_TRUE(f.got.empty());
  EXPECT_EQ(f.transport.Counts()[0].received(), 1u);
}

// A service client's response handler holds what sends its requests (a
// publisher of the same transport, which holds the transport's state). A
// response queued for an instant the run never reaches must not keep it
// alive for ever through the queue: a closed subscription lets go of its
// handler, and Shutdown() drops the queue.
TEST(LockstepTransportTest, NothingQueuedKeepsAClosedReadersHandlerAlive) {
  Fixture f;
  struct Requests {
    std::shared_ptr<RemotePublisher> out;
  };
  std::weak_ptr<Requests> held;
  std::unique_ptr<RemoteSubscription> responses;
  {
    auto requests = std::make_shared<Requests>();
    requests->out = *f.transport.Publisher(On("/route/request"));
    responses = *f.transport.Subscribe(
        On("/route/response"), [requests](const RemoteSample&) { return requests != nullptr; });
    held = requests;
  }
  Arrive(*f.inner, "/route/response", "routing", 5000, 1, "late");
  EXPECT_FALSE(held.expired()) << "the open subscription's handler holds it";
  responses.reset();
  EXPECT_TRUE(held.expired()) << "the queued response still holds the handler";
}

TEST(LockstepTransportTest, ShutdownDropsMessagesWhoseInstantNeverCame) {
  Fixture f;
  auto a = f.Read("/a");
  Arrive(*f.inner, "/a", "alpha", 5000, 1, "a1");
  EXPECT_EQ(f.transport.EarliestQueued(), 5000);
  f.transport.Shutdown();
  EXPECT_EQ(f.transport.EarliestQueued(), -1);
  EXPECT_EQ(f.transport.DeliverDue(10000), 0u);
  EXPECT_TRUE(f.got.empty());
}

}  // namespace
}  // namespace lockstep
}  // namespace cyber
