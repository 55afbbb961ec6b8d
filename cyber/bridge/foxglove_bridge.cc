#include "cyber/bridge/foxglove_bridge.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cyber/common/log.h"

namespace cyber {
namespace bridge {

absl::StatusOr<std::unique_ptr<FoxgloveBridge>> FoxgloveBridge::Start(ChannelSource* source,
                                                                       Options options) {
  options.server.subprotocol = kFoxgloveSubprotocol;
  std::unique_ptr<FoxgloveBridge> bridge(new FoxgloveBridge(source, options));
  FoxgloveBridge* b = bridge.get();
  WebSocketServer::Handlers handlers;
  handlers.open = [b](ClientId client, const std::string& peer) {
    LOG(INFO) << "cyber_bridge: client " << client << " connected from " << peer;
    b->OnOpen(client);
  };
  handlers.message = [b](ClientId client, const WebSocketMessage& m) { b->OnMessage(client, m); };
  handlers.close = [b](ClientId client) { b->OnClose(client); };
  absl::StatusOr<std::unique_ptr<WebSocketServer>> server =
      WebSocketServer::Start(options.server, std::move(handlers));
  if (!server.ok()) return server.status();
  bridge->server_ = std::move(*server);
  bridge->listener_id_ = source->AddListener([b] {
    MutexLock lock(&b->wake_mu_);
    b->dirty_ = true;
    b->wake_cv_.SignalAll();
  });
  bridge->sync_thread_ = std::thread([b] { b->SyncLoop(); });
  return bridge;
}

FoxgloveBridge::FoxgloveBridge(ChannelSource* source, Options options)
    : source_(source),
      options_(std::move(options)),
      session_id_(absl::StrCat(absl::ToUnixNanos(absl::Now()))) {}

FoxgloveBridge::~FoxgloveBridge() {
  {
    MutexLock lock(&wake_mu_);
    stopping_ = true;
    wake_cv_.SignalAll();
  }
  if (sync_thread_.joinable()) sync_thread_.join();
  if (listener_id_.has_value()) source_->RemoveListener(*listener_id_);
  if (server_ != nullptr) server_->Stop();  // every client's OnClose has run
  JoinFinishedCalls(/*all=*/true);            // each bounded by call_timeout
  std::map<uint32_t, std::unique_ptr<ChannelSource::Subscription>> left;
  {
    MutexLock lock(&control_mu_);
    left.swap(source_subscriptions_);
  }
  left.clear();  // no handler runs after this
}

FoxgloveBridge::Stats FoxgloveBridge::stats() const {
  Stats stats;
  {
    MutexLock lock(&control_mu_);
    stats.clients = clients_.size();
    stats.advertised = advertised_.size();
    stats.source_subscriptions = source_subscriptions_.size();
    stats.services = services_.size();
    for (const auto& [id, client] : clients_) stats.client_channels += client.publishing.size();
  }
  stats.published = published_.load(std::memory_order_relaxed);
  stats.calls = calls_.load(std::memory_order_relaxed);
  stats.forwarded = forwarded_.load(std::memory_order_relaxed);
  stats.dropped = server_->total_dropped();
  return stats;
}

void FoxgloveBridge::SyncLoop() {
  while (true) {
    {
      MutexLock lock(&wake_mu_);
      while (!dirty_ && !stopping_) wake_cv_.Wait(&wake_mu_);
      if (stopping_) return;
      dirty_ = false;
    }
    Sync();
  }
}

void FoxgloveBridge::Sync() {
  const std::vector<ChannelSource::Channel> channels = source_->Channels();
  const std::vector<ChannelSource::Service> services = source_->Services();
  MutexLock lock(&control_mu_);
  SyncServices(services);
  std::map<std::string, const ChannelSource::Channel*> now;
  for (const ChannelSource::Channel& c : channels) now[c.topic] = &c;

  // Gone, or of another type or schema now: unadvertised (a changed one is
  // advertised again under a new id, so a client never decodes with the
  // wrong schema).
  std::vector<uint32_t> removed;
  for (auto it = advertised_.begin(); it != advertised_.end();) {
    auto found = now.find(it->first);
    if (found != now.end() && found->second->type_name == it->second.type_name &&
        found->second->schema == it->second.channel.schema) {
      ++it;
      continue;
    }
    const uint32_t id = it->second.channel.id;
    removed.push_back(id);
    it = advertised_.erase(it);
    for (auto& [client, state] : clients_) {
      auto& subscriptions = state.subscriptions;
      for (auto s = subscriptions.begin(); s != subscriptions.end();) {
        s = s->second == id ? subscriptions.erase(s) : std::next(s);
      }
    }
    {
      MutexLock routes_lock(&routes_mu_);
      routes_.erase(id);
    }
    source_subscriptions_.erase(id);
  }
  std::vector<AdvertisedChannel> added;
  for (const ChannelSource::Channel& c : channels) {
    if (advertised_.count(c.topic) != 0) continue;
    AdvertisedState state;
    state.channel.id = next_channel_id_++;
    state.channel.topic = c.topic;
    state.channel.schema_name = c.type_name;
    state.channel.schema = c.schema;
    state.type_name = c.type_name;
    added.push_back(state.channel);
    advertised_[c.topic] = std::move(state);
  }
  if (removed.empty() && added.empty()) return;
  for (const auto& [client, state] : clients_) {
    if (!removed.empty()) server_->SendText(client, UnadvertiseJson(removed));
    if (!added.empty()) server_->SendText(client, AdvertiseJson(added));
  }
  for (const AdvertisedChannel& c : added) {
    LOG(INFO) << "cyber_bridge: advertised " << c.topic << " (" << c.schema_name << ") as channel "
              << c.id;
  }
}

void FoxgloveBridge::SyncServices(const std::vector<ChannelSource::Service>& services) {
  std::map<std::string, const ChannelSource::Service*> now;
  for (const ChannelSource::Service& s : services) now[s.name] = &s;
  std::vector<uint32_t> removed;
  for (auto it = services_.begin(); it != services_.end();) {
    auto found = now.find(it->first);
    const AdvertisedService& a = it->second;
    if (found != now.end() && found->second->request_type == a.request_type &&
        found->second->request_schema == a.request_schema &&
        found->second->response_type == a.response_type &&
        found->second->response_schema == a.response_schema) {
      ++it;
      continue;
    }
    removed.push_back(a.id);
    it = services_.erase(it);
  }
  std::vector<AdvertisedService> added;
  for (const ChannelSource::Service& s : services) {
    if (services_.count(s.name) != 0) continue;
    AdvertisedService a{next_service_id_++, s.name, s.request_type, s.request_schema,
                        s.response_type, s.response_schema};
    added.push_back(a);
    services_[s.name] = std::move(a);
  }
  for (const auto& [client, state] : clients_) {
    if (!removed.empty()) server_->SendText(client, UnadvertiseServicesJson(removed));
    if (!added.empty()) server_->SendText(client, AdvertiseServicesJson(added));
  }
  for (const AdvertisedService& s : added) {
    LOG(INFO) << "cyber_bridge: advertised service " << s.name << " as service " << s.id;
  }
}

void FoxgloveBridge::OnOpen(ClientId client) {
  MutexLock lock(&control_mu_);
  clients_[client];
  server_->SendText(client,
                    ServerInfoJson(options_.name, session_id_, {"clientPublish", "services"}));
  std::vector<AdvertisedChannel> channels;
  for (const auto& [topic, state] : advertised_) channels.push_back(state.channel);
  if (!channels.empty()) server_->SendText(client, AdvertiseJson(channels));
  std::vector<AdvertisedService> services;
  for (const auto& [name, service] : services_) services.push_back(service);
  if (!services.empty()) server_->SendText(client, AdvertiseServicesJson(services));
}

void FoxgloveBridge::SendStatus(ClientId client, StatusLevel level, const std::string& message) {
  server_->SendText(client, StatusJson(level, message));
}

void FoxgloveBridge::OnMessage(ClientId client, const WebSocketMessage& message) {
  if (message.opcode != Opcode::kText) {
    OnBinary(client, message.payload);
    return;
  }
  absl::StatusOr<ClientOp> op = ParseClientOp(message.payload);
  if (!op.ok()) {
    SendStatus(client, StatusLevel::kError, std::string(op.status().message()));
    return;
  }
  MutexLock lock(&control_mu_);
  if (clients_.count(client) == 0) return;  // closing
  switch (op->kind) {
    case ClientOp::Kind::kSubscribe:
      for (const Subscription& s : op->subscriptions) Subscribe(client, s);
      break;
    case ClientOp::Kind::kUnsubscribe:
      for (uint32_t id : op->subscription_ids) Unsubscribe(client, id);
      break;
    case ClientOp::Kind::kAdvertise:
      for (const ClientChannel& c : op->channels) Advertise(client, c);
      break;
    case ClientOp::Kind::kUnadvertise:
      for (uint32_t id : op->channel_ids) {
        if (clients_[client].publishing.erase(id) == 0) {
          SendStatus(client, StatusLevel::kWarning,
                     absl::StrCat("unadvertise: no client channel ", id));
        }
      }
      break;
    case ClientOp::Kind::kUnsupported:
      SendStatus(client, StatusLevel::kWarning,
                 absl::StrCat("op \"", op->op,
                              "\" is not supported by cyber_bridge (it supports subscribe, "
                              "unsubscribe, advertise, unadvertise and service calls)"));
      break;
  }
}

void FoxgloveBridge::Subscribe(ClientId client, const Subscription& subscription) {
  const AdvertisedState* state = nullptr;
  for (const auto& [topic, s] : advertised_) {
    if (s.channel.id == subscription.channel_id) state = &s;
  }
  if (state == nullptr) {
    SendStatus(client, StatusLevel::kWarning,
               absl::StrCat("subscribe: channel id ", subscription.channel_id,
                            " is not advertised (gone, or never was)"));
    return;
  }
  std::map<uint32_t, uint32_t>& subscriptions = clients_[client].subscriptions;
  if (subscriptions.count(subscription.id) != 0) {
    SendStatus(client, StatusLevel::kError,
               absl::StrCat("subscribe: subscription id ", subscription.id,
                            " is already in use by this client"));
    return;
  }
  const uint32_t channel_id = subscription.channel_id;
  if (source_subscriptions_.count(channel_id) == 0) {
    absl::StatusOr<std::unique_ptr<ChannelSource::Subscription>> read = source_->Subscribe(
        state->channel.topic, [this, channel_id](absl::string_view payload, absl::Time received) {
          Forward(channel_id, payload, received);
        });
    if (!read.ok()) {
      SendStatus(client, StatusLevel::kError,
                 absl::StrCat("subscribe to ", state->channel.topic, ": ",
                              read.status().message()));
      return;
    }
    source_subscriptions_[channel_id] = std::move(*read);
  }
  subscriptions[subscription.id] = channel_id;
  MutexLock routes_lock(&routes_mu_);
  routes_[channel_id].emplace_back(client, subscription.id);
}

void FoxgloveBridge::Advertise(ClientId client, const ClientChannel& channel) {
  ClientState& state = clients_[client];
  if (channel.encoding != "protobuf") {
    SendStatus(client, StatusLevel::kError,
               absl::StrCat("advertise ", channel.topic, ": encoding \"", channel.encoding,
                            "\" (cyber_bridge publishes protobuf only)"));
    return;
  }
  if (state.publishing.count(channel.id) != 0) {
    SendStatus(client, StatusLevel::kError,
               absl::StrCat("advertise: client channel id ", channel.id,
                            " is already in use by this client"));
    return;
  }
  absl::StatusOr<std::unique_ptr<ChannelSource::Publisher>> publisher =
      source_->Publish(channel.topic, channel.schema_name);
  if (!publisher.ok()) {
    SendStatus(client, StatusLevel::kError,
               absl::StrCat("advertise ", channel.topic, ": ", publisher.status().message()));
    return;
  }
  state.publishing[channel.id] = PublishingChannel{channel, std::move(*publisher)};
}

void FoxgloveBridge::OnBinary(ClientId client, const std::string& payload) {
  absl::StatusOr<ClientBinary> binary = ParseClientBinary(payload);
  if (!binary.ok()) {
    SendStatus(client, StatusLevel::kError, std::string(binary.status().message()));
    return;
  }
  if (binary->kind == ClientBinary::Kind::kServiceCallRequest) {
    StartCall(client, *binary);
    return;
  }
  std::shared_ptr<ChannelSource::Publisher> publisher;
  std::string topic;
  {
    MutexLock lock(&control_mu_);
    auto c = clients_.find(client);
    if (c == clients_.end()) return;
    auto p = c->second.publishing.find(binary->channel_id);
    if (p != c->second.publishing.end()) {
      publisher = p->second.publisher;
      topic = p->second.channel.topic;
    }
  }
  if (publisher == nullptr) {
    SendStatus(client, StatusLevel::kError,
               absl::StrCat("message data: client channel ", binary->channel_id,
                            " is not advertised"));
    return;
  }
  absl::Status status = publisher->Publish(binary->data);
  if (!status.ok()) {
    SendStatus(client, StatusLevel::kWarning,
               absl::StrCat("publish on ", topic, ": ", status.message()));
    return;
  }
  published_.fetch_add(1, std::memory_order_relaxed);
}

void FoxgloveBridge::StartCall(ClientId client, const ClientBinary& request) {
  std::string service;
  {
    MutexLock lock(&control_mu_);
    for (const auto& [name, s] : services_) {
      if (s.id == request.service_id) service = name;
    }
  }
  auto fail = [&](const std::string& why) {
    server_->SendText(client, ServiceCallFailureJson(request.service_id, request.call_id, why));
    calls_.fetch_add(1, std::memory_order_relaxed);
  };
  if (service.empty()) {
    return fail(absl::StrCat("service id ", request.service_id, " is not advertised"));
  }
  if (request.encoding != "protobuf") {
    return fail(absl::StrCat("encoding \"", request.encoding, "\": ", service,
                             " takes protobuf requests only"));
  }
  JoinFinishedCalls(/*all=*/false);
  MutexLock lock(&calls_mu_);
  if (calls_in_flight_.size() >= static_cast<size_t>(options_.max_concurrent_calls)) {
    return fail(absl::StrCat(options_.max_concurrent_calls,
                             " service calls are in flight already; try again"));
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  calls_in_flight_.push_back(CallThread{
      std::thread([this, client, request, service, done] {
        absl::StatusOr<std::string> response =
            source_->Call(service, request.data, options_.call_timeout);
        if (response.ok()) {
          server_->SendBinary(client,
                              ServiceCallResponsePayload(request.service_id, request.call_id,
                                                         "protobuf", *response),
                              /*droppable=*/false);
        } else {
          server_->SendText(client, ServiceCallFailureJson(request.service_id, request.call_id,
                                                           response.status().ToString()));
        }
        calls_.fetch_add(1, std::memory_order_relaxed);
        done->store(true, std::memory_order_release);
      }),
      done});
}

void FoxgloveBridge::JoinFinishedCalls(bool all) {
  std::vector<CallThread> finished;
  {
    MutexLock lock(&calls_mu_);
    for (auto it = calls_in_flight_.begin(); it != calls_in_flight_.end();) {
      if (all || it->done->load(std::memory_order_acquire)) {
        finished.push_back(std::move(*it));
        it = calls_in_flight_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (CallThread& c : finished) c.thread.join();
}

void FoxgloveBridge::Unsubscribe(ClientId client, uint32_t subscription_id) {
  std::map<uint32_t, uint32_t>& subscriptions = clients_[client].subscriptions;
  auto it = subscriptions.find(subscription_id);
  if (it == subscriptions.end()) {
    SendStatus(client, StatusLevel::kWarning,
               absl::StrCat("unsubscribe: no subscription ", subscription_id));
    return;
  }
  const uint32_t channel_id = it->second;
  subscriptions.erase(it);
  {
    MutexLock routes_lock(&routes_mu_);
    auto route = routes_.find(channel_id);
    if (route != routes_.end()) {
      auto& targets = route->second;
      targets.erase(std::remove(targets.begin(), targets.end(),
                                std::make_pair(client, subscription_id)),
                    targets.end());
    }
  }
  ReleaseIfUnused(channel_id);
}

void FoxgloveBridge::ReleaseIfUnused(uint32_t channel_id) {
  {
    MutexLock routes_lock(&routes_mu_);
    auto route = routes_.find(channel_id);
    if (route != routes_.end() && !route->second.empty()) return;
    routes_.erase(channel_id);
  }
  // Waits for a running handler (which takes routes_mu_ only).
  source_subscriptions_.erase(channel_id);
}

void FoxgloveBridge::OnClose(ClientId client) {
  MutexLock lock(&control_mu_);
  auto it = clients_.find(client);
  if (it == clients_.end()) return;
  std::set<uint32_t> channels;
  {
    MutexLock routes_lock(&routes_mu_);
    for (const auto& [subscription_id, channel_id] : it->second.subscriptions) {
      channels.insert(channel_id);
      auto& targets = routes_[channel_id];
      targets.erase(std::remove(targets.begin(), targets.end(),
                                std::make_pair(client, subscription_id)),
                    targets.end());
    }
  }
  clients_.erase(it);
  for (uint32_t channel_id : channels) ReleaseIfUnused(channel_id);
  LOG(INFO) << "cyber_bridge: client " << client << " left";
}

void FoxgloveBridge::Forward(uint32_t channel_id, absl::string_view payload,
                             absl::Time received) {
  std::vector<std::pair<ClientId, uint32_t>> targets;
  {
    MutexLock lock(&routes_mu_);
    auto it = routes_.find(channel_id);
    if (it == routes_.end()) return;
    targets = it->second;
  }
  for (const auto& [client, subscription_id] : targets) {
    if (server_->SendBinary(client, MessageDataPayload(subscription_id, received, payload),
                            /*droppable=*/true)) {
      forwarded_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

}  // namespace bridge
}  // namespace cyber
