#include "cyber/bridge/domain_graph_source.h"

#include "absl/time/clock.h"
#include "cyber/graph/descriptors.h"
#include "google/protobuf/descriptor.pb.h"

namespace cyber {
namespace bridge {
namespace {

class GraphSubscription : public ChannelSource::Subscription {
 public:
  explicit GraphSubscription(std::unique_ptr<RemoteSubscription> subscription)
      : subscription_(std::move(subscription)) {}

 private:
  std::unique_ptr<RemoteSubscription> subscription_;
};

class GraphPublisher : public ChannelSource::Publisher {
 public:
  explicit GraphPublisher(std::shared_ptr<RemotePublisher> publisher)
      : publisher_(std::move(publisher)) {}
  absl::Status Publish(absl::string_view payload) override {
    return publisher_->Publish(payload);
  }

 private:
  std::shared_ptr<RemotePublisher> publisher_;
};

}  // namespace

std::string FileDescriptorSetOf(const google::protobuf::Descriptor& descriptor) {
  return graph::DescriptorSetOf(&descriptor).SerializeAsString();
}

std::vector<ChannelSource::Channel> DomainGraphSource::Channels() {
  std::vector<Channel> channels;
  for (const graph::ChannelView& view : graph_->Channels()) {
    if (view.descriptor == nullptr) continue;
    bool readable = false;
    for (const graph::ChannelEndpointView& writer : view.writers) {
      readable |= !writer.in_process_only;
    }
    if (!readable) continue;
    channels.push_back(Channel{view.name, view.type_name, FileDescriptorSetOf(*view.descriptor)});
  }
  return channels;
}

uint64_t DomainGraphSource::AddListener(std::function<void()> changed) {
  return graph_->AddListener(std::move(changed));
}

void DomainGraphSource::RemoveListener(uint64_t id) { graph_->RemoveListener(id); }

absl::StatusOr<std::unique_ptr<ChannelSource::Subscription>> DomainGraphSource::Subscribe(
    const std::string& topic, Handler handler) {
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> subscription = graph_->Subscribe(
      topic, [handler = std::move(handler)](const graph::DomainGraph::Received& received) {
        handler(received.payload, absl::Now());
      });
  if (!subscription.ok()) return subscription.status();
  return std::make_unique<GraphSubscription>(std::move(*subscription));
}

std::vector<ChannelSource::Service> DomainGraphSource::Services() {
  std::vector<Service> services;
  for (const graph::ServiceView& view : graph_->Services()) {
    if (view.servers.empty() || view.request_descriptor == nullptr ||
        view.response_descriptor == nullptr) {
      continue;
    }
    services.push_back(Service{view.name, view.request_type,
                               FileDescriptorSetOf(*view.request_descriptor), view.response_type,
                               FileDescriptorSetOf(*view.response_descriptor)});
  }
  return services;
}

absl::StatusOr<std::unique_ptr<ChannelSource::Publisher>> DomainGraphSource::Publish(
    const std::string& topic, const std::string& type_name) {
  absl::StatusOr<std::shared_ptr<RemotePublisher>> publisher =
      graph_->Publisher(topic, type_name, ChannelQos());
  if (!publisher.ok()) return publisher.status();
  return std::make_unique<GraphPublisher>(std::move(*publisher));
}

absl::StatusOr<std::string> DomainGraphSource::Call(const std::string& service,
                                                    absl::string_view request,
                                                    absl::Duration timeout) {
  return graph_->Call(service, request, timeout);
}

}  // namespace bridge
}  // namespace cyber
