#include "cyber/transport/dds/dds_participant.h"

#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "absl/strings/match.h"
#include "cyber/transport/dds/dds_publisher.h"
#include "cyber/transport/dds/dds_subscription.h"

namespace cyber {
namespace dds {

namespace {

// A duration as Fast-DDS takes it (seconds and nanoseconds); negative: 0.
eprosima::fastrtps::Duration_t ToDdsDuration(absl::Duration d) {
  const int64_t ns = std::max<int64_t>(absl::ToInt64Nanoseconds(d), 0);
  return eprosima::fastrtps::Duration_t(static_cast<int32_t>(ns / 1'000'000'000),
                                        static_cast<uint32_t>(ns % 1'000'000'000));
}

// The participant ids this process's participants hold, per domain: a new
// participant draws a random one among the others (below 60: see Start).
class ParticipantIds {
 public:
  std::optional<int32_t> Take(uint32_t domain) {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<int32_t>& held = held_[domain];
    if (held.size() >= 60) return std::nullopt;
    std::random_device rd;
    int32_t id = static_cast<int32_t>(rd() % 60);
    while (held.count(id)) id = (id + 1) % 60;
    held.insert(id);
    return id;
  }
  void Give(uint32_t domain, int32_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    held_[domain].erase(id);
  }

 private:
  std::mutex mu_;
  std::map<uint32_t, std::set<int32_t>> held_;
};

ParticipantIds& ProcessParticipantIds() {
  static ParticipantIds* ids = new ParticipantIds();  // never destroyed: used at exit
  return *ids;
}

}  // namespace


// --- the participant --------------------------------------------------------

absl::Status DdsTransport::Impl::StartLocked() {
  if (participant_ != nullptr) return absl::OkStatus();
  if (shut_down_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "DDS transport of \"", self_.process, "\" is shut down"));
  }
  if (options_.domain_id > kMaxDomainId) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DDS transport of \"", self_.process, "\": domain_id ", options_.domain_id,
        " is outside 0..", kMaxDomainId));
  }
  if (options_.clean_dead_segments) {
    const ShmCleanupReport report = RemoveDeadPeerSegments();
    if (!report.removed.empty()) {
      AINFO << "DDS transport: removed " << report.removed.size()
            << " shared-memory file(s) of dead processes from /dev/shm";
    }
  }
  fdds::DomainParticipantFactory* factory = fdds::DomainParticipantFactory::get_instance();
  // Fast-DDS reads DEFAULT_FASTRTPS_PROFILES.xml from the working directory
  // unless told not to: a stray file there would change every setting below.
  if (std::getenv("FASTRTPS_DEFAULT_PROFILES_FILE") == nullptr) {
    setenv("SKIP_DEFAULT_XML_FILE", "1", 1);
  }
  if (!options_.profile_file.empty() &&
      factory->load_XML_profiles_file(options_.profile_file) != ReturnCode::RETCODE_OK) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DDS transport: profile_file \"", options_.profile_file,
        "\" could not be loaded (missing, or not a Fast-DDS XML profile)"));
  }

  // The factory's default: Fast-DDS's own, or the default profile of
  // `profile_file` (DDS Security's properties come in this way, see
  // docs/transport.md). What follows overrides its name, transports and
  // lease; everything else is the profile's.
  fdds::DomainParticipantQos qos;
  factory->get_default_participant_qos(qos);
  qos.name(ParticipantName(self_));
  qos.transport().use_builtin_transports = false;
  auto shm = std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>();
  shm->segment_size(options_.shm_segment_bytes);
  qos.transport().user_transports.push_back(shm);
  auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
  udp->interfaceWhiteList.push_back(
      options_.interface_address.empty() ? "127.0.0.1" : options_.interface_address);
  qos.transport().user_transports.push_back(udp);
  const int64_t lease_ms = std::max<int64_t>(absl::ToInt64Milliseconds(options_.lease), 300);
  auto& discovery = qos.wire_protocol().builtin.discovery_config;
  discovery.leaseDuration = ToDdsDuration(absl::Milliseconds(lease_ms));
  discovery.leaseDuration_announcementperiod = ToDdsDuration(absl::Milliseconds(lease_ms / 3));

  if (!options_.discovery_server_address.empty()) {
    // A client of one discovery server (id 0, as `fastdds discovery -i 0`
    // names it): announcements go to the server only, by unicast.
    discovery.discoveryProtocol = frtps::DiscoveryProtocol_t::CLIENT;
    frtps::RemoteServerAttributes server;
    frtps::get_server_client_default_guidPrefix(0, server.guidPrefix);
    frtps::Locator_t locator;
    frtps::IPLocator::setIPv4(locator, options_.discovery_server_address);
    locator.port = options_.discovery_server_port;
    server.metatrafficUnicastLocatorList.push_back(locator);
    discovery.m_DiscoveryServers.push_back(server);
  }
  qos.properties().properties().emplace_back(
      kAnnouncesGraphProperty, options_.announces_graph ? "true" : "false", /*propagate=*/true);
  if (!options_.security_dir.empty()) {
    absl::StatusOr<DdsSecurityFiles> files = DdsSecurityFilesIn(
        options_.security_dir,
        absl::StrCat("DDS transport of \"", self_.process, "\": security directory"));
    if (!files.ok()) return files.status();
    for (const auto& property : DdsSecurityProperties(*files)) {
      qos.properties().properties().emplace_back(property.first, property.second);
    }
  }
  // From the security directory or a profile file's default participant.
  secured_ = false;
  for (const auto& property : qos.properties().properties()) {
    if (absl::StartsWith(property.name(), "dds.sec.")) secured_ = true;
  }

  // A random participant id first (Fast-DDS's own choice, the lowest free
  // one, if that one is taken). A process restarted after kill -9 would
  // otherwise get the killed one's id, hence its shared-memory and UDP
  // ports, and about one time in 20 (under load) its survivors never
  // matched it: cross_process_test's restart with the right type failed 3
  // times in 50 runs with the lowest free id and 0 in 60 with a random one.
  // Ids below 60 keep every port of domain 232, the highest, under 65536
  // (7400 + 250 * domain + 11 + 2 * id).
  //
  // Another participant of this process may hold an id already (tools join
  // a domain twice: cyber_launch's readiness and its lockstep coordinator).
  // Fast-DDS refuses such an id, and a participant made after a refusal was
  // seen never to discover its peers (lockstep_dds_test, 2 runs in 16): so
  // the ids this process holds are never drawn (ProcessParticipantIds).
  if (std::optional<int32_t> id = ProcessParticipantIds().Take(options_.domain_id)) {
    fdds::DomainParticipantQos random_id = qos;
    random_id.wire_protocol().participant_id = *id;
    participant_ = factory->create_participant(options_.domain_id, random_id, this,
                                               fdds::StatusMask::none());
    if (participant_ != nullptr) {
      participant_id_ = *id;
    } else {
      ProcessParticipantIds().Give(options_.domain_id, *id);
    }
  }
  if (participant_ == nullptr) {
    participant_ = factory->create_participant(options_.domain_id, qos, this,
                                               fdds::StatusMask::none());
  }
  if (participant_ == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "DDS transport of \"", self_.process, "\": Fast-DDS could not create a participant on domain ",
        options_.domain_id,
        options_.security_dir.empty()
            ? ""
            : absl::StrCat(" with the DDS Security files of \"", options_.security_dir,
                           "\" (a certificate or key its CA does not vouch for, or a "
                           "governance or permissions file whose signature does not verify?)"),
        " (see its log above)"));
  }
  {
    MutexLock lock(&mu_);
    own_prefix_ = participant_->guid().guidPrefix;
  }
  publisher_ = participant_->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
  subscriber_ = participant_->create_subscriber(fdds::SUBSCRIBER_QOS_DEFAULT);
  if (publisher_ == nullptr || subscriber_ == nullptr) {
    return absl::UnavailableError("DDS transport: Fast-DDS could not create a publisher or subscriber");
  }
  started_.store(true, std::memory_order_release);
  AINFO << "DDS transport: " << self_.ToString() << " joined domain " << options_.domain_id
        << (options_.interface_address.empty()
                ? " (shared memory and loopback only"
                : absl::StrCat(" (shared memory, and UDP on ", options_.interface_address))
        << (options_.discovery_server_address.empty()
                ? ""
                : absl::StrCat("; discovery server ", options_.discovery_server_address, ":",
                               options_.discovery_server_port))
        << (options_.security_dir.empty()
                ? ")"
                : absl::StrCat("; DDS Security from \"", options_.security_dir, "\")"));
  return absl::OkStatus();
}

absl::StatusOr<fdds::Topic*> DdsTransport::Impl::TopicLocked(const RemoteEndpoint& endpoint) {
  const uint32_t bound = endpoint.qos.data_sharing_max_bytes;
  fdds::TypeSupport registered = participant_->find_type(endpoint.type_name);
  if (registered.empty()) {
    fdds::TypeSupport type(new FrameTopicType(endpoint.type_name, bound));
    if (type.register_type(participant_) != ReturnCode::RETCODE_OK) {
      return absl::UnavailableError(absl::StrCat(
          "channel \"", endpoint.channel, "\": DDS could not register type \"",
          endpoint.type_name, "\""));
    }
    first_channel_of_type_[endpoint.type_name] = endpoint.channel;
  } else {
    // Fast-DDS gives every endpoint of a bounded type fixed-size payloads
    // of its bound: an endpoint with another bound (or none) would
    // overflow them (a writer) or drop larger samples unseen (a reader).
    const auto* frame_type = dynamic_cast<const FrameTopicType*>(registered.get());
    const uint32_t has = frame_type != nullptr ? frame_type->max_message_bytes() : 0;
    if (has != bound) {
      auto first = first_channel_of_type_.find(endpoint.type_name);
      return absl::FailedPreconditionError(absl::StrCat(
          "channel \"", endpoint.channel, "\": node \"", endpoint.node,
          "\" asks for data_sharing_max_bytes ", bound, " but this process uses ",
          endpoint.type_name, " with data_sharing_max_bytes ", has,
          first != first_channel_of_type_.end()
              ? absl::StrCat(" (set by channel \"", first->second, "\", the first of the type)")
              : std::string(),
          "; every channel of one message type in a process has one bound"));
    }
  }
  auto it = topics_.find(endpoint.channel);
  if (it != topics_.end()) return it->second;
  fdds::Topic* topic =
      participant_->create_topic(endpoint.channel, endpoint.type_name, fdds::TOPIC_QOS_DEFAULT);
  if (topic == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "channel \"", endpoint.channel, "\": DDS could not create its topic (type \"",
        endpoint.type_name, "\")"));
  }
  topics_.emplace(endpoint.channel, topic);
  return topic;
}

std::shared_ptr<ChannelState> DdsTransport::Impl::ChannelStateFor(const RemoteEndpoint& endpoint) {
  MutexLock lock(&mu_);
  auto& slot = channels_[endpoint.channel];
  if (slot == nullptr) {
    slot = std::make_shared<ChannelState>(endpoint.channel, endpoint.type_name);
    // Peers already seen on this channel with another type.
    for (const auto& e : remote_endpoints_) {
      if (ConflictsLocked(e.second)) NoteConflictLocked(e.second);
    }
  }
  return slot;
}

absl::StatusOr<std::shared_ptr<RemotePublisher>> DdsTransport::Impl::Publisher(
    const std::shared_ptr<Impl>& self, const RemoteEndpoint& endpoint) {
  (void)self;
  MutexLock create(&create_mu_);
  if (absl::Status s = StartLocked(); !s.ok()) return s;
  std::shared_ptr<ChannelState> channel = ChannelStateFor(endpoint);
  if (channel->type_name != endpoint.type_name) {
    return absl::FailedPreconditionError(absl::StrCat(
        "channel \"", endpoint.channel, "\": node \"", endpoint.node, "\" writes ",
        endpoint.type_name, " but the channel carries ", channel->type_name, " in this process"));
  }
  auto existing = publisher_by_channel_.find(endpoint.channel);
  if (existing != publisher_by_channel_.end()) {
    if (existing->second->qos() != endpoint.qos) {
      return absl::FailedPreconditionError(absl::StrCat(
          "channel \"", endpoint.channel, "\": node \"", endpoint.node,
          "\" asks for a writer with qos (", endpoint.qos.ToString(),
          ") but this process already writes it with (", existing->second->qos().ToString(),
          "); one process writes a channel with one qos_profile"));
    }
    return std::shared_ptr<RemotePublisher>(existing->second);
  }
  absl::StatusOr<fdds::Topic*> topic = TopicLocked(endpoint);
  if (!topic.ok()) return topic.status();
  auto publisher = std::make_shared<PublisherImpl>(this, channel, endpoint.qos,
                                                   options_.max_message_bytes);
  fdds::DataWriterQos writer_qos = WriterQos(endpoint.qos);
  if (secured_) writer_qos.data_sharing().off();
  writer_qos.reliable_writer_qos().disable_heartbeat_piggyback = !options_.heartbeat_piggyback;
  writer_qos.reliable_writer_qos().times.nackSupressionDuration = ToDdsDuration(options_.nack_suppression);
  // Before the writer exists: this process's readers of the channel must
  // know its samples from the first one on.
  channel->written_here.store(true, std::memory_order_release);
  fdds::DataWriter* writer = publisher_->create_datawriter(
      *topic, writer_qos, publisher.get(), fdds::StatusMask::all());
  if (writer == nullptr) {
    channel->written_here.store(false, std::memory_order_release);
    return absl::UnavailableError(absl::StrCat(
        "channel \"", endpoint.channel, "\": DDS could not create a writer with qos (",
        endpoint.qos.ToString(), ")", SecurityHint("publish")));
  }
  publisher->Attach(writer);
  publisher_by_channel_.emplace(endpoint.channel, publisher);
  return std::shared_ptr<RemotePublisher>(publisher);
}

absl::StatusOr<std::unique_ptr<RemoteSubscription>> DdsTransport::Impl::Subscribe(
    const std::shared_ptr<Impl>& self, const RemoteEndpoint& endpoint, SampleHandler handler) {
  MutexLock create(&create_mu_);
  if (absl::Status s = StartLocked(); !s.ok()) return s;
  std::shared_ptr<ChannelState> channel = ChannelStateFor(endpoint);
  if (channel->type_name != endpoint.type_name) {
    return absl::FailedPreconditionError(absl::StrCat(
        "channel \"", endpoint.channel, "\": node \"", endpoint.node, "\" reads ",
        endpoint.type_name, " but the channel carries ", channel->type_name, " in this process"));
  }
  absl::StatusOr<fdds::Topic*> topic = TopicLocked(endpoint);
  if (!topic.ok()) return topic.status();
  // A reader with a prototype gets message frames parsed where they
  // arrive (FrameTopicType); one without (a service's, the graph's, a
  // lockstep inlet's) gets bytes.
  auto sub = std::make_shared<SubscriptionImpl>(this, channel, endpoint.qos, endpoint.prototype,
                                                std::move(handler));
  fdds::StatusMask mask = fdds::StatusMask::data_available() << fdds::StatusMask::sample_lost()
                          << fdds::StatusMask::requested_incompatible_qos();
  fdds::DataReaderQos reader_qos = ReaderQos(endpoint.qos);
  if (secured_) reader_qos.data_sharing().off();
  fdds::DataReader* reader = subscriber_->create_datareader(*topic, reader_qos, sub.get(), mask);
  if (reader == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "channel \"", endpoint.channel, "\": DDS could not create a reader with qos (",
        endpoint.qos.ToString(), ")", SecurityHint("subscribe")));
  }
  sub->Attach(reader);
  subscriptions_.insert(sub.get());
  return std::unique_ptr<RemoteSubscription>(
      std::make_unique<SubscriptionHandle>(self, std::move(sub)));
}

void DdsTransport::Impl::CloseSubscription(const std::shared_ptr<SubscriptionImpl>& sub) {
  fdds::DataReader* reader = sub->Detach();  // no handler runs after this
  sub->ReleaseHandler();
  MutexLock create(&create_mu_);
  subscriptions_.erase(sub.get());
  if (reader != nullptr && subscriber_ != nullptr) {
    reader->set_listener(nullptr);
    subscriber_->delete_datareader(reader);
  }
  if (participant_ != nullptr) retired_.push_back(sub);
}

void DdsTransport::Impl::Shutdown() {
  MutexLock create(&create_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  if (participant_ == nullptr) return;
  for (SubscriptionImpl* sub : subscriptions_) {
    fdds::DataReader* reader = sub->Detach();
    if (reader != nullptr) {
      reader->set_listener(nullptr);
      subscriber_->delete_datareader(reader);
    }
  }
  subscriptions_.clear();
  for (auto& entry : publisher_by_channel_) {
    fdds::DataWriter* writer = entry.second->Detach();
    if (writer != nullptr) {
      writer->set_listener(nullptr);
      publisher_->delete_datawriter(writer);
    }
  }
  participant_->set_listener(nullptr);
  participant_->delete_contained_entities();
  fdds::DomainParticipantFactory::get_instance()->delete_participant(participant_);
  participant_ = nullptr;
  retired_.clear();  // no Fast-DDS thread is left to call them
  if (participant_id_ >= 0) ProcessParticipantIds().Give(options_.domain_id, participant_id_);
  participant_id_ = -1;
  publisher_ = nullptr;
  subscriber_ = nullptr;
  topics_.clear();
  started_.store(false, std::memory_order_release);
  AINFO << "DDS transport: " << self_.ToString() << " left domain " << options_.domain_id;
}

std::string DdsTransport::Impl::SecurityHint(const char* action) const {
  if (options_.security_dir.empty()) return "";
  return absl::StrCat("; with DDS Security on, the permissions of \"", options_.security_dir,
                      "\" must allow this process to ", action,
                      " it (Fast-DDS's log above says whether they refused)");
}

// --- discovery --------------------------------------------------------------

void DdsTransport::Impl::on_participant_discovery(fdds::DomainParticipant*,
                                                  frtps::ParticipantDiscoveryInfo&& info) {
  HandoffFence();
  const std::string key = PrefixKey(info.info.m_guid.guidPrefix);
  using Status = frtps::ParticipantDiscoveryInfo::DISCOVERY_STATUS;
  if (info.status == Status::DISCOVERED_PARTICIPANT) {
    RemotePeer peer = PeerFromParticipantName(info.info.m_participantName.to_string());
    bool announces_graph = false;
    for (const auto& property : info.info.m_properties) {
      if (property.first() == kAnnouncesGraphProperty) announces_graph = property.second() == "true";
    }
    AINFO << "DDS transport: peer " << peer.ToString() << " joined domain " << options_.domain_id;
    MutexLock lock(&mu_);
    peers_[key] = std::move(peer);
    if (announces_graph) graph_announcers_.insert(key);
    return;
  }
  if (info.status != Status::REMOVED_PARTICIPANT && info.status != Status::DROPPED_PARTICIPANT) {
    return;
  }
  const bool crashed = info.status == Status::DROPPED_PARTICIPANT;
  RemotePeer peer;
  std::vector<std::function<void(const RemotePeer&, bool)>> listeners;
  {
    MutexLock lock(&mu_);
    auto it = peers_.find(key);
    if (it == peers_.end()) return;
    peer = it->second;
    // Its endpoints go with it, and its type conflicts with them (before
    // the peer, whose name the end of a conflict is logged with).
    for (auto e = remote_endpoints_.begin(); e != remote_endpoints_.end();) {
      if (e->second.peer_key != key) {
        ++e;
        continue;
      }
      const RemoteEndpointRecord gone = std::move(e->second);
      e = remote_endpoints_.erase(e);
      EndConflictLocked(gone, crashed ? "was declared dead" : "left the domain");
    }
    peers_.erase(key);
    graph_announcers_.erase(key);
    for (const auto& l : lost_listeners_) listeners.push_back(l.second);
    if (crashed) {
      lost_peers_.push_back(peer);
      if (lost_peers_.size() > 16) lost_peers_.pop_front();
    }
  }
  if (crashed) {
    AWARN << "DDS transport: peer " << peer.ToString() << " stopped answering for "
          << absl::FormatDuration(options_.lease)
          << " and is considered dead (crashed or killed); this process keeps running";
  } else {
    AINFO << "DDS transport: peer " << peer.ToString() << " left domain " << options_.domain_id;
  }
  for (const auto& l : listeners) l(peer, crashed);
}

void DdsTransport::Impl::onParticipantAuthentication(
    fdds::DomainParticipant*, frtps::ParticipantAuthenticationInfo&& info) {
  HandoffFence();
  const std::string key = PrefixKey(info.guid.guidPrefix);
  const bool refused =
      info.status == frtps::ParticipantAuthenticationInfo::UNAUTHORIZED_PARTICIPANT;
  std::string name;
  {
    MutexLock lock(&mu_);
    // Fast-DDS retries the handshake every second or so: one line per
    // refused participant.
    if (refused && !refused_.insert(key).second) return;
    if (!refused) refused_.erase(key);
    // Discovery announces a participant before the handshake, so a refused
    // one is usually known by name.
    auto it = peers_.find(key);
    name = it == peers_.end() ? "an undiscovered participant" : it->second.ToString();
  }
  if (refused) {
    AWARN << "DDS transport: refused " << name << " (GUID prefix " << info.guid.guidPrefix
          << "): it failed DDS Security's authentication (no security, or a certificate "
             "our identity CA does not vouch for, or it does not trust ours); it reads and "
             "writes nothing of ours";
  } else {
    AINFO << "DDS transport: " << name << " authenticated (DDS Security)";
  }
}

void DdsTransport::Impl::on_subscriber_discovery(fdds::DomainParticipant*,
                                                 frtps::ReaderDiscoveryInfo&& info) {
  HandoffFence();
  using Status = frtps::ReaderDiscoveryInfo::DISCOVERY_STATUS;
  OnRemoteEndpoint(/*writer=*/false, info.status == Status::REMOVED_READER, info.info.guid(),
                   info.info.topicName().to_string(), info.info.typeName().to_string());
}

void DdsTransport::Impl::on_publisher_discovery(fdds::DomainParticipant*,
                                                frtps::WriterDiscoveryInfo&& info) {
  HandoffFence();
  using Status = frtps::WriterDiscoveryInfo::DISCOVERY_STATUS;
  OnRemoteEndpoint(/*writer=*/true, info.status == Status::REMOVED_WRITER, info.info.guid(),
                   info.info.topicName().to_string(), info.info.typeName().to_string());
}

void DdsTransport::Impl::OnRemoteEndpoint(bool writer, bool removed, const frtps::GUID_t& guid,
                                          const std::string& topic,
                                          const std::string& type_name) {
  MutexLock lock(&mu_);
  const std::string key = GuidKey(guid);
  if (removed) {
    auto it = remote_endpoints_.find(key);
    if (it == remote_endpoints_.end()) return;
    const RemoteEndpointRecord gone = std::move(it->second);
    remote_endpoints_.erase(it);
    EndConflictLocked(gone, gone.writer ? "has no writer there any more"
                                       : "has no reader there any more");
    return;
  }
  RemoteEndpointRecord& record = remote_endpoints_[key];
  record = RemoteEndpointRecord{topic, type_name, PrefixKey(guid.guidPrefix), writer};
  if (ConflictsLocked(record)) NoteConflictLocked(record);
}

bool DdsTransport::Impl::ConflictsLocked(const RemoteEndpointRecord& record) const {
  auto channel = channels_.find(record.topic);
  return channel != channels_.end() && channel->second->type_name != record.type_name;
}

std::string DdsTransport::Impl::PeerNameLocked(const std::string& peer_key) const {
  auto peer = peers_.find(peer_key);
  return peer == peers_.end() ? "an undiscovered participant" : peer->second.ToString();
}

std::string DdsTransport::Impl::ConflictTextLocked(const RemoteEndpointRecord& record) const {
  return absl::StrCat(PeerNameLocked(record.peer_key), " ", record.writer ? "writes" : "reads",
                      " ", record.type_name);
}

void DdsTransport::Impl::NoteConflictLocked(const RemoteEndpointRecord& record) {
  if (!logged_conflicts_.emplace(record.peer_key, record.topic).second) return;  // logged
  AERROR << "channel \"" << record.topic << "\": message types differ: this process ("
         << self_.ToString() << ") uses " << channels_.at(record.topic)->type_name << ", but "
         << ConflictTextLocked(record) << "; they will not exchange messages on this channel";
}

void DdsTransport::Impl::EndConflictLocked(const RemoteEndpointRecord& record,
                                           const char* why) {
  if (!ConflictsLocked(record)) return;
  for (const auto& e : remote_endpoints_) {
    const RemoteEndpointRecord& other = e.second;
    if (other.peer_key == record.peer_key && other.topic == record.topic &&
        ConflictsLocked(other)) {
      return;  // another endpoint of that peer keeps the conflict
    }
  }
  if (logged_conflicts_.erase({record.peer_key, record.topic}) == 0) return;
  const std::shared_ptr<ChannelState>& channel = channels_.at(record.topic);
  channel->type_conflicts_ended.fetch_add(1, std::memory_order_relaxed);
  AINFO << "channel \"" << record.topic << "\": type conflict ended: "
        << PeerNameLocked(record.peer_key) << " (" << record.type_name << ") " << why;
}

std::vector<RemotePeer> DdsTransport::Impl::RemoteWriters(const std::string& channel) const {
  MutexLock lock(&mu_);
  std::vector<RemotePeer> out;
  std::set<std::string> seen;
  auto local = channels_.find(channel);
  for (const auto& e : remote_endpoints_) {
    const RemoteEndpointRecord& r = e.second;
    if (!r.writer || r.topic != channel) continue;
    if (local != channels_.end() && local->second->type_name != r.type_name) continue;
    auto peer = peers_.find(r.peer_key);
    if (peer == peers_.end() || !seen.insert(r.peer_key).second) continue;
    out.push_back(peer->second);
  }
  return out;
}

std::vector<RemoteChannelStats> DdsTransport::Impl::ChannelStats() const {
  MutexLock lock(&mu_);
  std::vector<RemoteChannelStats> out;
  for (const auto& entry : channels_) {
    const ChannelState& c = *entry.second;
    RemoteChannelStats s;
    s.channel = c.channel;
    s.type_name = c.type_name;
    s.sent = c.sent.load(std::memory_order_relaxed);
    s.send_failures = c.send_failures.load(std::memory_order_relaxed);
    s.received = c.received.load(std::memory_order_relaxed);
    s.bytes_sent = c.bytes_sent.load(std::memory_order_relaxed);
    s.bytes_received = c.bytes_received.load(std::memory_order_relaxed);
    s.dropped_undecodable = c.dropped_undecodable.load(std::memory_order_relaxed);
    s.lost = c.lost.load(std::memory_order_relaxed);
    {
      MutexLock latency(&entry.second->latency_mu);
      if (entry.second->latency.count() > 0) {
        s.latency_p99_ns = absl::ToInt64Nanoseconds(entry.second->latency.Percentile(0.99));
      }
    }
    std::set<std::pair<std::string, bool>> seen;
    std::set<std::string> conflicts;  // the live ones: sorted, once each
    for (const auto& e : remote_endpoints_) {
      const RemoteEndpointRecord& r = e.second;
      if (r.topic != c.channel) continue;
      if (r.type_name != c.type_name) {
        conflicts.insert(ConflictTextLocked(r));
        continue;
      }
      auto peer = peers_.find(r.peer_key);
      if (peer == peers_.end() || !seen.emplace(r.peer_key, r.writer).second) continue;
      (r.writer ? s.remote_writers : s.remote_readers).push_back(peer->second);
    }
    s.type_conflicts.assign(conflicts.begin(), conflicts.end());
    s.type_conflicts_ended = c.type_conflicts_ended.load(std::memory_order_relaxed);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace dds
}  // namespace cyber
