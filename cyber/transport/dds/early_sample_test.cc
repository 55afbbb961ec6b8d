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
#include "cyber/transport/remote_transport.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

using dds_test::Ping;

class ReplayingTransport final : public RemoteTransport {
 public:
  absl::StatusOr<std::shared_ptr<RemotePublisher>> Publisher(const RemoteEndpoint&) override {
    return absl::UnimplementedError("not in this test");
  }
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> Subscribe(const RemoteEndpoint&,
                                                                SampleHandler handler) override {
    Ping replayed;
    replayed.set_seq(7);
    const std::string bytes = replayed.SerializeAsString();
    RemoteSample sample;
    sample.payload = bytes;
    handler(sample);
    return std::make_unique<RemoteSubscription>();
  }
  uint64_t AddPeerLostListener(std::function<void(const RemotePeer&, bool)>) override { return 0; }
  void RemovePeerLostListener(uint64_t) override {}
  std::vector<RemotePeer> RemoteWriters(const std::string&) const override { return {}; }
  std::vector<RemoteChannelStats> ChannelStats() const override { return {}; }
  std::vector<RemotePeer> LostPeers() const override { return {}; }
  RemotePeer self() const override { return {}; }
  void Shutdown() override {}
};

TEST(EarlySampleTest, AMessageArrivingWhileTheReaderSubscribesReachesIt) {
  Runtime::Options o;
  o.name = "early";
  o.run_threads = false;
  o.remote = std::make_shared<ReplayingTransport>();
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
