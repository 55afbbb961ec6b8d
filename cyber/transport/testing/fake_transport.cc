#include "cyber/transport/testing/fake_transport.h"

#include <utility>

#include "absl/status/status.h"

namespace cyber {
namespace test {

// Keeps each publish on its channel.
class FakeTransport::Outlet final : public RemotePublisher {
 public:
  Outlet(FakeTransport* transport, std::string channel)
      : transport_(transport), channel_(std::move(channel)) {}
  bool Wanted() const override { return true; }
  absl::Status Publish(absl::string_view payload, Correlation) override {
    MutexLock lock(&transport_->mu_);
    transport_->published_[channel_].emplace_back(payload);
    return absl::OkStatus();
  }
  absl::Status PublishMessage(const google::protobuf::MessageLite& message,
                              Correlation correlation) override {
    return Publish(message.SerializeAsString(), correlation);
  }
  absl::Status PublishAt(absl::string_view payload, absl::Time, Correlation correlation) override {
    return Publish(payload, correlation);
  }

 private:
  FakeTransport* const transport_;
  const std::string channel_;
};

absl::StatusOr<std::shared_ptr<RemotePublisher>> FakeTransport::Publisher(
    const RemoteEndpoint& endpoint) {
  return std::make_shared<Outlet>(this, endpoint.channel);
}

absl::StatusOr<std::unique_ptr<RemoteSubscription>> FakeTransport::Subscribe(
    const RemoteEndpoint& endpoint, SampleHandler handler) {
  for (const std::string& payload : options_.arrive_on_subscribe) {
    RemoteSample sample;
    sample.payload = payload;
    handler(sample);
  }
  MutexLock lock(&mu_);
  handlers_[endpoint.channel] = std::move(handler);
  types_[endpoint.channel] = endpoint.type_name;
  return std::make_unique<RemoteSubscription>();
}

bool FakeTransport::Arrive(const std::string& channel, absl::string_view payload) {
  SampleHandler handler;
  {
    MutexLock lock(&mu_);
    auto it = handlers_.find(channel);
    if (it == handlers_.end()) return false;
    handler = it->second;
  }
  RemoteSample sample;
  sample.payload = payload;
  return handler(sample);
}

std::vector<std::string> FakeTransport::Published(const std::string& channel) const {
  MutexLock lock(&mu_);
  auto it = published_.find(channel);
  return it == published_.end() ? std::vector<std::string>() : it->second;
}

std::string FakeTransport::SubscribedType(const std::string& channel) const {
  MutexLock lock(&mu_);
  auto it = types_.find(channel);
  return it == types_.end() ? std::string() : it->second;
}

}  // namespace test
}  // namespace cyber
