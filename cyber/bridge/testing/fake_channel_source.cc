#include "cyber/bridge/testing/fake_channel_source.h"

namespace cyber {
namespace bridge {
namespace testing {

class FakeChannelSource::FakeSubscription : public ChannelSource::Subscription {
 public:
  FakeSubscription(FakeChannelSource* source, uint64_t id, std::shared_ptr<Entry> entry)
      : source_(source), id_(id), entry_(std::move(entry)) {}
  ~FakeSubscription() override {
    {
      MutexLock lock(&source_->mu_);
      source_->entries_.erase(id_);
    }
    MutexLock wait_for_delivery(&entry_->calling);
  }

 private:
  FakeChannelSource* const source_;
  const uint64_t id_;
  std::shared_ptr<Entry> entry_;
};

class FakeChannelSource::FakePublisher : public ChannelSource::Publisher {
 public:
  FakePublisher(FakeChannelSource* source, std::string topic, std::string type_name)
      : source_(source), topic_(std::move(topic)), type_name_(std::move(type_name)) {}
  absl::Status Publish(absl::string_view payload) override {
    MutexLock lock(&source_->mu_);
    source_->published_.push_back({topic_, type_name_, std::string(payload)});
    return absl::OkStatus();
  }

 private:
  FakeChannelSource* const source_;
  const std::string topic_;
  const std::string type_name_;
};

void FakeChannelSource::SetServices(std::vector<Service> services) {
  std::vector<std::function<void()>> listeners;
  {
    MutexLock lock(&mu_);
    services_ = std::move(services);
    for (const auto& [id, l] : listeners_) listeners.push_back(l);
  }
  for (const auto& l : listeners) l();
}

void FakeChannelSource::SetCallFn(CallFn call) {
  MutexLock lock(&mu_);
  call_ = std::move(call);
}

std::vector<FakeChannelSource::Published> FakeChannelSource::published() const {
  MutexLock lock(&mu_);
  return published_;
}

std::vector<ChannelSource::Service> FakeChannelSource::Services() {
  MutexLock lock(&mu_);
  return services_;
}

absl::StatusOr<std::unique_ptr<ChannelSource::Publisher>> FakeChannelSource::Publish(
    const std::string& topic, const std::string& type_name) {
  if (type_name.find('.') == std::string::npos) {
    return absl::NotFoundError("type \"" + type_name + "\" is not known to the fake graph");
  }
  return std::unique_ptr<Publisher>(new FakePublisher(this, topic, type_name));
}

absl::StatusOr<std::string> FakeChannelSource::Call(const std::string& service,
                                                    absl::string_view request, absl::Duration) {
  CallFn call;
  {
    MutexLock lock(&mu_);
    call = call_;
  }
  if (!call) return absl::UnavailableError("no call function set");
  return call(service, request);
}

void FakeChannelSource::SetChannels(std::vector<Channel> channels) {
  std::vector<std::function<void()>> listeners;
  {
    MutexLock lock(&mu_);
    channels_ = std::move(channels);
    for (const auto& [id, l] : listeners_) listeners.push_back(l);
  }
  for (const auto& l : listeners) l();
}

int FakeChannelSource::Publish(const std::string& topic, const std::string& payload,
                               absl::Time received) {
  std::vector<std::shared_ptr<Entry>> targets;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, e] : entries_) {
      if (e->topic == topic) targets.push_back(e);
    }
  }
  for (const auto& e : targets) {
    MutexLock calling(&e->calling);
    e->handler(payload, received);
  }
  return static_cast<int>(targets.size());
}

int FakeChannelSource::subscriptions(const std::string& topic) const {
  MutexLock lock(&mu_);
  int n = 0;
  for (const auto& [id, e] : entries_) n += e->topic == topic;
  return n;
}

std::vector<ChannelSource::Channel> FakeChannelSource::Channels() {
  MutexLock lock(&mu_);
  return channels_;
}

uint64_t FakeChannelSource::AddListener(std::function<void()> changed) {
  MutexLock lock(&mu_);
  listeners_[next_id_] = std::move(changed);
  return next_id_++;
}

void FakeChannelSource::RemoveListener(uint64_t id) {
  MutexLock lock(&mu_);
  listeners_.erase(id);
}

absl::StatusOr<std::unique_ptr<ChannelSource::Subscription>> FakeChannelSource::Subscribe(
    const std::string& topic, Handler handler) {
  auto entry = std::make_shared<Entry>();
  entry->topic = topic;
  entry->handler = std::move(handler);
  MutexLock lock(&mu_);
  bool known = false;
  for (const Channel& c : channels_) known |= c.topic == topic;
  if (!known) return absl::NotFoundError("channel \"" + topic + "\" is not in the fake graph");
  const uint64_t id = next_id_++;
  entries_[id] = entry;
  return std::unique_ptr<Subscription>(new FakeSubscription(this, id, entry));
}

}  // namespace testing
}  // namespace bridge
}  // namespace cyber
