#include "cyber/transport/testing/fake_transport.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace test {

// Keeps each publish on its channel.
class FakeTransport::Outlet final : public RemotePublisher {
 public:
  Outlet(FakeTransport* transport, std::string channel)
      : transport_(transport), channel_(std::move(channel)) {}
  bool Wanted() const override { return true; }
  absl::Status Publish(absl::string_view payload, Correlation) override {
    return Keep(payload, std::nullopt);
  }
  absl::Status PublishMessage(const google::protobuf::MessageLite& message,
                              Correlation) override {
    return Keep(message.SerializeAsString(), std::nullopt);
  }
  absl::Status PublishAt(absl::string_view payload, absl::Time t, Correlation) override {
    return Keep(payload, t);
  }

 private:
  absl::Status Keep(absl::string_view payload, std::optional<absl::Time> stamp) {
    if (!stamp.has_value() && transport_->options_.stamped_only) {
      return absl::InternalError(absl::StrCat("FakeTransport: channel \"", channel_,
                                              "\": a publish without a stamp (PublishAt), "
                                              "which this transport refuses"));
    }
    MutexLock lock(&transport_->mu_);
    transport_->published_[channel_].push_back({std::string(payload), stamp});
    return absl::OkStatus();
  }

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
  return Arrive(channel, payload, FakeOrigin());
}

bool FakeTransport::Arrive(const std::string& channel, absl::string_view payload,
                           const FakeOrigin& origin) {
  SampleHandler handler;
  {
    MutexLock lock(&mu_);
    auto it = handlers_.find(channel);
    if (it == handlers_.end()) return false;
    handler = it->second;
  }
  RemotePeer sender;
  sender.process = origin.process;
  RemoteSample sample;
  sample.payload = payload;
  if (!origin.process.empty()) sample.origin.sender = &sender;
  sample.origin.sequence = origin.sequence;
  sample.origin.source_time_ns = origin.source_time_ns;
  return handler(sample);
}

std::vector<std::string> FakeTransport::Published(const std::string& channel) const {
  std::vector<std::string> payloads;
  for (FakePublication& p : Publications(channel)) payloads.push_back(std::move(p.payload));
  return payloads;
}

std::vector<FakePublication> FakeTransport::Publications(const std::string& channel) const {
  MutexLock lock(&mu_);
  auto it = published_.find(channel);
  return it == published_.end() ? std::vector<FakePublication>() : it->second;
}

std::string FakeTransport::SubscribedType(const std::string& channel) const {
  MutexLock lock(&mu_);
  auto it = types_.find(channel);
  return it == types_.end() ? std::string() : it->second;
}

}  // namespace test
}  // namespace cyber
