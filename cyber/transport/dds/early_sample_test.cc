// A message that arrives while a reader's subscription is being made (a
// transient-local writer replays its last values the moment DDS matches
// the new reader, before Node::TryCreateReader returns) reaches the
// reader. The transport here hands one message to the handler inside
// Subscribe(), the earliest moment a real one could; no threads, no time.

#include <memory>
#include <string>
#include <vector>

#include "cyber/node/node.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "cyber/transport/testing/fake_transport.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

using dds_test::Ping;

TEST(EarlySampleTest, AMessageArrivingWhileTheReaderSubscribesReachesIt) {
  Runtime::Options o;
  o.name = "early";
  o.run_threads = false;
  // A sample that arrives while the reader subscribes (before Subscribe
  // returns).
  Ping replayed;
  replayed.set_seq(7);
  test::FakeTransportOptions options;
  options.arrive_on_subscribe.push_back(replayed.SerializeAsString());
  o.remote = std::make_shared<test::FakeTransport>(options);
  Runtime runtime(std::move(o));
  Node node("early", runtime.scheduler(), runtime.bus());
  ReaderConfig config;
  config.channel_name = "/state";
  config.pending_queue_size = 4;
  auto reader = node.TryCreateReader<Ping>(config, [](const std::shared_ptr<const Ping>&) {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->stats().received, 1u);
  node.Shutdown();
  runtime.Shutdown();
}

}  // namespace
}  // namespace cyber
