// ChannelSource: what the bridge needs from a running graph — its channels
// and services with their message schemas, word when they change, a
// subscription by name, a writer for a client's publish, a service call. DomainGraphSource (domain_graph_source.h) is the real one, over
// DDS discovery; the bridge's tests drive the bridge with a fake
// (testing/fake_channel_source.h) to check advertise, fan-out and drops
// without DDS.
//
// Threads: every method from any thread. The listener and the subscription
// handlers run on the source's threads and must not call back into the
// source.

#ifndef CYBER_BRIDGE_CHANNEL_SOURCE_H_
#define CYBER_BRIDGE_CHANNEL_SOURCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace cyber {
namespace bridge {

class ChannelSource {
 public:
  struct Channel {
    std::string topic;       // "/sensor/imu"
    std::string type_name;   // "sensor_polling.ImuReading"
    std::string schema;      // its FileDescriptorSet, serialized
    bool operator==(const Channel& other) const {
      return topic == other.topic && type_name == other.type_name && schema == other.schema;
    }
  };
  struct Service {
    std::string name;  // "/map/lookup"
    std::string request_type;
    std::string request_schema;  // FileDescriptorSet, serialized
    std::string response_type;
    std::string response_schema;
    bool operator==(const Service& other) const {
      return name == other.name && request_type == other.request_type &&
             request_schema == other.request_schema && response_type == other.response_type &&
             response_schema == other.response_schema;
    }
  };
  // A writer on a channel (a client's publish).
  class Publisher {
   public:
    virtual ~Publisher() = default;
    virtual absl::Status Publish(absl::string_view payload) = 0;
  };
  // Ends a subscription when destroyed; after the destructor returns the
  // handler is not running and will not run.
  class Subscription {
   public:
    virtual ~Subscription() = default;
  };
  // A message's bytes (valid during the call) and when it was received
  // (absl::Now(), the system clock: shown as the message's time).
  using Handler = std::function<void(absl::string_view payload, absl::Time received)>;

  virtual ~ChannelSource() = default;
  // The channels that can be read now (a writer exists, the type is known),
  // sorted by topic.
  virtual std::vector<Channel> Channels() = 0;
  // `changed` is called after anything in the graph may have changed.
  virtual uint64_t AddListener(std::function<void()> changed) = 0;
  virtual void RemoveListener(uint64_t id) = 0;
  virtual absl::StatusOr<std::unique_ptr<Subscription>> Subscribe(const std::string& topic,
                                                                  Handler handler) = 0;
  // The services that can be called now (served, types known), by name.
  virtual std::vector<Service> Services() = 0;
  // A writer of `type_name` on `topic`; errors name both (an unknown type).
  virtual absl::StatusOr<std::unique_ptr<Publisher>> Publish(const std::string& topic,
                                                             const std::string& type_name) = 0;
  // Calls `service` with a serialized request, waits at most `timeout`;
  // the serialized response or the error (the server's, a timeout).
  virtual absl::StatusOr<std::string> Call(const std::string& service,
                                           absl::string_view request,
                                           absl::Duration timeout) = 0;
};

}  // namespace bridge
}  // namespace cyber

#endif  // CYBER_BRIDGE_CHANNEL_SOURCE_H_
