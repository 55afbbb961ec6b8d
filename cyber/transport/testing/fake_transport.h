// FakeTransport: a RemoteTransport that is only this process — for tests
// and fuzzers of what sits on a transport (a channel's inlet and outlet,
// the loan inlet) without DDS. A test plays the other processes: Arrive()
// hands a sample to the channel's subscription as the DDS transport would
// (synchronously, on the caller's thread), and every publish is kept for
// the test to read back per channel.
//
// Why one fake for all of them: a RemoteTransport has a dozen methods, and
// each test that stubbed them its own way drifted from the interface.
//
// Threads: thread-safe; a handler runs outside the fake's lock.

#ifndef CYBER_TRANSPORT_TESTING_FAKE_TRANSPORT_H_
#define CYBER_TRANSPORT_TESTING_FAKE_TRANSPORT_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {
namespace test {

struct FakeTransportOptions {
  // What ControlsDeliveryTime() answers (true: as a lockstep transport).
  bool controls_delivery_time = false;
  // Handed to each subscription before Subscribe returns: a sample that
  // arrives while the reader is subscribing.
  std::vector<std::string> arrive_on_subscribe;
  // Refuse Publish and PublishMessage (InternalError naming the channel):
  // for a transport that must stamp every message (PublishAt), as the
  // lockstep transport must.
  bool stamped_only = false;
};

// Who sent an arriving sample (SampleOrigin's fields a test sets).
struct FakeOrigin {
  std::string process;  // the sender's process name
  uint64_t sequence = 0;
  int64_t source_time_ns = 0;
};

// One publish: its bytes, and the stamp PublishAt gave (none otherwise).
struct FakePublication {
  std::string payload;
  std::optional<absl::Time> stamp;
};

class FakeTransport final : public RemoteTransport {
 public:
  explicit FakeTransport(FakeTransportOptions options = {}) : options_(std::move(options)) {}

  bool ControlsDeliveryTime() const override { return options_.controls_delivery_time; }
  absl::StatusOr<std::shared_ptr<RemotePublisher>> Publisher(
      const RemoteEndpoint& endpoint) override;
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> Subscribe(const RemoteEndpoint& endpoint,
                                                                SampleHandler handler) override;
  uint64_t AddPeerLostListener(std::function<void(const RemotePeer&, bool)>) override { return 0; }
  void RemovePeerLostListener(uint64_t) override {}
  std::vector<RemotePeer> RemoteWriters(const std::string&) const override { return {}; }
  std::vector<RemoteChannelStats> ChannelStats() const override { return {}; }
  std::vector<RemotePeer> LostPeers() const override { return {}; }
  RemotePeer self() const override { return {}; }
  void Shutdown() override {}

  // A sample from another process on `channel`: what its handler answered
  // (true: handed over), false when nothing subscribed to it.
  bool Arrive(const std::string& channel, absl::string_view payload);
  // The same from a sender the test names (origin.sender is valid during
  // the handler's call, as DDS's is).
  bool Arrive(const std::string& channel, absl::string_view payload, const FakeOrigin& origin);
  // The payloads written on `channel` so far, in order.
  std::vector<std::string> Published(const std::string& channel) const;
  // The same with their stamps.
  std::vector<FakePublication> Publications(const std::string& channel) const;
  // The type name the channel was subscribed with ("" if not).
  std::string SubscribedType(const std::string& channel) const;

 private:
  class Outlet;

  const FakeTransportOptions options_;
  mutable Mutex mu_;
  std::map<std::string, SampleHandler> handlers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> types_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<FakePublication>> published_ ABSL_GUARDED_BY(mu_);
};

}  // namespace test
}  // namespace cyber

#endif  // CYBER_TRANSPORT_TESTING_FAKE_TRANSPORT_H_
