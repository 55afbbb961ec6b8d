// FakeChannelSource: a ChannelSource the test drives by hand — it sets the
// channels and services (listeners are told), and publishes a message on a
// topic (delivered on the test's thread to the subscriptions of that
// topic). It counts the live subscriptions per topic, so a test sees that
// the bridge reads a channel only while a client watches it; it records
// what the bridge publishes, and answers calls with the test's function.
//
// Threads: every method from any thread. A subscription's destructor waits
// for a Publish that is delivering to it (as the real source does).

#ifndef CYBER_BRIDGE_TESTING_FAKE_CHANNEL_SOURCE_H_
#define CYBER_BRIDGE_TESTING_FAKE_CHANNEL_SOURCE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "cyber/bridge/channel_source.h"
#include "cyber/common/mutex.h"

namespace cyber {
namespace bridge {
namespace testing {

class FakeChannelSource : public ChannelSource {
 public:
  void SetChannels(std::vector<Channel> channels);
  // Delivers `payload` to every subscription of `topic`; how many got it.
  int Publish(const std::string& topic, const std::string& payload, absl::Time received);
  int subscriptions(const std::string& topic) const;
  void SetServices(std::vector<Service> services);
  using CallFn = std::function<absl::StatusOr<std::string>(const std::string& service,
                                                           absl::string_view request)>;
  void SetCallFn(CallFn call);
  // What the bridge published: (topic, type, payload), in order.
  struct Published {
    std::string topic, type_name, payload;
  };
  std::vector<Published> published() const;

  std::vector<Channel> Channels() override;
  uint64_t AddListener(std::function<void()> changed) override;
  void RemoveListener(uint64_t id) override;
  absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(const std::string& topic,
                                                          Handler handler) override;
  std::vector<Service> Services() override;
  absl::StatusOr<std::unique_ptr<Publisher>> Publish(const std::string& topic,
                                                     const std::string& type_name) override;
  absl::StatusOr<std::string> Call(const std::string& service, absl::string_view request,
                                   absl::Duration timeout) override;

 private:
  struct Entry {
    std::string topic;
    Handler handler;
    // Held while the handler runs, and by the subscription's destructor.
    Mutex calling;
  };
  class FakeSubscription;
  class FakePublisher;

  mutable Mutex mu_;
  // mu_ protects the following state.
  std::vector<Channel> channels_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::function<void()>> listeners_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::shared_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  std::vector<Service> services_ ABSL_GUARDED_BY(mu_);
  CallFn call_ ABSL_GUARDED_BY(mu_);
  std::vector<Published> published_ ABSL_GUARDED_BY(mu_);
};

}  // namespace testing
}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_TESTING_FAKE_CHANNEL_SOURCE_H_
