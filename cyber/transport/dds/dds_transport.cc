#include "cyber/transport/dds/dds_transport.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/common/InstanceHandle.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
#include "cyber/transport/dds/dds_qos.h"
#include "cyber/transport/dds/frame_topic_type.h"
#include "cyber/transport/dds/handoff_fence.h"
#include "cyber/transport/dds/sample_frame.h"
#include "cyber/transport/dds/shm_cleanup.h"
#include "timer/latency_histogram.h"

namespace cyber {
namespace dds {
namespace {

namespace fdds = eprosima::fastdds::dds;
namespace frtps = eprosima::fastrtps::rtps;
using ReturnCode = eprosima::fastrtps::types::ReturnCode_t;

constexpr uint32_t kMaxDomainId = 232;  // DDS's port mapping allows 0..232

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}

// How a participant of ours is named on the wire: "cyber/<host>/<pid>/<process>".
std::string ParticipantName(const RemotePeer& peer) {
  return absl::StrCat("cyber/", peer.host, "/", peer.pid, "/", peer.process);
}

RemotePeer PeerFromParticipantName(const std::string& name) {
  RemotePeer peer;
  std::vector<std::string> parts = absl::StrSplit(name, absl::MaxSplits('/', 3));
  int64_t pid = 0;
  if (parts.size() == 4 && parts[0] == "cyber" && absl::SimpleAtoi(parts[2], &pid)) {
    peer.host = parts[1];
    peer.pid = pid;
    peer.process = parts[3];
  } else {
    // Another DDS application on the domain.
    peer.host = "?";
    peer.process = name.empty() ? "unnamed DDS participant" : name;
  }
  return peer;
}

std::string PrefixKey(const frtps::GuidPrefix_t& prefix) {
  return std::string(reinterpret_cast<const char*>(prefix.value), frtps::GuidPrefix_t::size);
}

std::string GuidKey(const frtps::GUID_t& guid) {
  return PrefixKey(guid.guidPrefix) +
         std::string(reinterpret_cast<const char*>(guid.entityId.value), 4);
}

// Fast-DDS puts a host id in the first 4 bytes of a participant's prefix.
bool SameHost(const frtps::GuidPrefix_t& a, const frtps::GuidPrefix_t& b) {
  return std::memcmp(a.value, b.value, 4) == 0;
}

}  // namespace

absl::StatusOr<DdsTransportOptions> DdsTransportOptionsFromEnvironment(
    const std::string& process_name) {
  DdsTransportOptions options;
  options.process_name = process_name;
  if (const char* domain = std::getenv("CYBER_DOMAIN_ID"); domain != nullptr && *domain) {
    uint32_t id = 0;
    if (!absl::SimpleAtoi(domain, &id) || id > kMaxDomainId) {
      return absl::InvalidArgumentError(absl::StrCat(
          "environment variable CYBER_DOMAIN_ID: \"", domain,
          "\" is not a DDS domain id (a whole number from 0 to ", kMaxDomainId, ")"));
    }
    options.domain_id = id;
  }
  if (const char* ip = std::getenv("CYBER_IP"); ip != nullptr && *ip) {
    std::vector<std::string> octets = absl::StrSplit(ip, '.');
    bool ok = octets.size() == 4;
    for (const std::string& o : octets) {
      int v = -1;
      ok = ok && absl::SimpleAtoi(o, &v) && v >= 0 && v <= 255;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "environment variable CYBER_IP: \"", ip,
          "\" is not an IPv4 address (the interface other hosts reach this one on)"));
    }
    options.interface_address = ip;
  }
  return options;
}

// What the transport knows about one channel it opened.
struct ChannelState {
  ChannelState(std::string c, std::string t) : channel(std::move(c)), type_name(std::move(t)) {}
  const std::string channel;
  const std::string type_name;
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> send_failures{0};
  std::atomic<uint64_t> received{0};
  std::atomic<uint64_t> dropped_undecodable{0};
  std::atomic<uint64_t> lost{0};
  Mutex latency_mu;
  timer::LatencyHistogram latency ABSL_GUARDED_BY(latency_mu);
};

class PublisherImpl;
class SubscriptionImpl;

class DdsTransport::Impl final : public fdds::DomainParticipantListener {
 public:
  explicit Impl(DdsTransportOptions options) : options_(std::move(options)) {
    self_.host = HostName();
    self_.pid = static_cast<int64_t>(getpid());
    self_.process = options_.process_name;
    HandoffFence();  // before Fast-DDS may call us
  }

  ~Impl() override { Shutdown(); }

  absl::StatusOr<std::shared_ptr<RemotePublisher>> Publisher(
      const std::shared_ptr<Impl>& self, const RemoteEndpoint& endpoint);
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> Subscribe(
      const std::shared_ptr<Impl>& self, const RemoteEndpoint& endpoint,
      SampleHandler handler);
  void CloseSubscription(SubscriptionImpl* sub);
  void Shutdown();

  uint64_t AddPeerLostListener(std::function<void(const RemotePeer&, bool)> l) {
    MutexLock lock(&mu_);
    const uint64_t id = ++next_listener_id_;
    lost_listeners_.emplace(id, std::move(l));
    return id;
  }
  void RemovePeerLostListener(uint64_t id) {
    MutexLock lock(&mu_);
    lost_listeners_.erase(id);
  }

  std::vector<RemotePeer> RemoteWriters(const std::string& channel) const;
  std::vector<RemoteChannelStats> ChannelStats() const;
  std::vector<RemotePeer> LostPeers() const {
    MutexLock lock(&mu_);
    return std::vector<RemotePeer>(lost_peers_.begin(), lost_peers_.end());
  }
  std::vector<RemotePeer> Peers() const {
    MutexLock lock(&mu_);
    std::vector<RemotePeer> out;
    for (const auto& p : peers_) out.push_back(p.second);
    return out;
  }
  const RemotePeer& self() const { return self_; }
  const DdsTransportOptions& options() const { return options_; }
  bool started() const { return started_.load(std::memory_order_acquire); }
  frtps::GuidPrefix_t own_prefix() const {
    MutexLock lock(&mu_);
    return own_prefix_;
  }

  // "process (host h, pid p)" of the participant with `prefix`, for logs.
  std::string PeerName(const frtps::GuidPrefix_t& prefix) const {
    MutexLock lock(&mu_);
    auto it = peers_.find(PrefixKey(prefix));
    if (it == peers_.end()) return "an undiscovered participant";
    return it->second.ToString();
  }

  // --- DomainParticipantListener (Fast-DDS threads) -----------------------
  void on_participant_discovery(fdds::DomainParticipant*,
                                frtps::ParticipantDiscoveryInfo&& info) override;
  void on_subscriber_discovery(fdds::DomainParticipant*,
                               frtps::ReaderDiscoveryInfo&& info) override;
  void on_publisher_discovery(fdds::DomainParticipant*,
                              frtps::WriterDiscoveryInfo&& info) override;


 private:
  struct RemoteEndpointRecord {
    std::string topic;
    std::string type_name;
    std::string peer_key;
    bool writer = false;
  };

  absl::Status StartLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(create_mu_);
  // The topic (and registered type) of `endpoint`, made on first use.
  absl::StatusOr<fdds::Topic*> TopicLocked(const RemoteEndpoint& endpoint)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(create_mu_);
  std::shared_ptr<ChannelState> ChannelStateFor(const RemoteEndpoint& endpoint);
  // A remote endpoint appeared or went away.
  void OnRemoteEndpoint(bool writer, bool removed, const frtps::GUID_t& guid,
                        const std::string& topic, const std::string& type_name);
  // Logs, once per peer and channel, a peer using another message type.
  void CheckTypeLocked(const RemoteEndpointRecord& record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DdsTransportOptions options_;
  RemotePeer self_;
  std::atomic<bool> started_{false};

  // Serializes making and deleting DDS entities; never taken by Fast-DDS's
  // callbacks, so it may be held across DDS calls.
  Mutex create_mu_;
  bool shut_down_ ABSL_GUARDED_BY(create_mu_) = false;
  fdds::DomainParticipant* participant_ ABSL_GUARDED_BY(create_mu_) = nullptr;
  fdds::Publisher* publisher_ ABSL_GUARDED_BY(create_mu_) = nullptr;
  fdds::Subscriber* subscriber_ ABSL_GUARDED_BY(create_mu_) = nullptr;
  std::map<std::string, fdds::Topic*> topics_ ABSL_GUARDED_BY(create_mu_);
  std::map<std::string, std::shared_ptr<PublisherImpl>> publisher_by_channel_
      ABSL_GUARDED_BY(create_mu_);
  std::set<SubscriptionImpl*> subscriptions_ ABSL_GUARDED_BY(create_mu_);

  // Taken by callbacks, briefly; never held across a DDS call.
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<ChannelState>> channels_ ABSL_GUARDED_BY(mu_);
  frtps::GuidPrefix_t own_prefix_ ABSL_GUARDED_BY(mu_);  // once started
  std::map<std::string, RemotePeer> peers_ ABSL_GUARDED_BY(mu_);  // by prefix
  std::map<std::string, RemoteEndpointRecord> remote_endpoints_ ABSL_GUARDED_BY(mu_);
  // (peer key, channel) pairs whose type conflict was logged.
  std::set<std::pair<std::string, std::string>> conflicts_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<std::string>> conflict_text_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::function<void(const RemotePeer&, bool)>> lost_listeners_
      ABSL_GUARDED_BY(mu_);
  std::deque<RemotePeer> lost_peers_ ABSL_GUARDED_BY(mu_);  // the last 16 dead
  uint64_t next_listener_id_ ABSL_GUARDED_BY(mu_) = 0;
};

// --- the outlet of one channel ----------------------------------------------

class PublisherImpl final : public RemotePublisher, public fdds::DataWriterListener {
 public:
  PublisherImpl(DdsTransport::Impl* impl, std::shared_ptr<ChannelState> channel,
                ChannelQos qos, size_t max_bytes)
      : channel_(std::move(channel)),
        qos_(qos),
        max_bytes_(max_bytes),
        own_prefix_(impl->own_prefix()) {
    HandoffFence();
  }

  const ChannelQos& qos() const { return qos_; }

  void Attach(fdds::DataWriter* writer) {
    MutexLock lock(&mu_);
    writer_ = writer;
  }

  // Detaches and returns the DataWriter for deletion; waits for a Publish
  // in progress.
  fdds::DataWriter* Detach() {
    MutexLock lock(&mu_);
    closed_.store(true, std::memory_order_release);
    return std::exchange(writer_, nullptr);
  }

  // False once the transport shut down: writers then stop serializing for
  // (and logging about) a network that is gone.
  bool Wanted() const override {
    if (closed_.load(std::memory_order_acquire)) return false;
    return qos_.durability == ChannelQos::Durability::kTransientLocal ||
           matched_remote_.load(std::memory_order_acquire) > 0;
  }

  absl::Status Publish(absl::string_view payload, Correlation correlation) override {
    if (absl::Status s = CheckSize(payload.size()); !s.ok()) return s;
    FrameSample sample;
    sample.bytes.reserve(kFrameHeaderSize + payload.size());
    AppendFrameHeader(Header(correlation), static_cast<uint32_t>(payload.size()),
                      &sample.bytes);
    sample.bytes.append(payload.data(), payload.size());
    return Write(&sample);
  }

  absl::Status PublishMessage(const google::protobuf::MessageLite& message,
                              Correlation correlation) override {
    const size_t size = message.ByteSizeLong();
    if (absl::Status s = CheckSize(size); !s.ok()) return s;
    FrameSample sample;
    sample.message = &message;
    sample.message_size = static_cast<uint32_t>(size);
    sample.header = Header(correlation);
    return Write(&sample);
  }

  void on_publication_matched(fdds::DataWriter*,
                              const fdds::PublicationMatchedStatus& status) override {
    HandoffFence();
    const frtps::GUID_t reader = frtps::iHandle2GUID(status.last_subscription_handle);
    if (reader.guidPrefix == own_prefix_) return;  // our own reader
    matched_remote_.fetch_add(status.current_count_change, std::memory_order_acq_rel);
  }

  void on_offered_incompatible_qos(
      fdds::DataWriter*, const fdds::OfferedIncompatibleQosStatus& status) override {
    HandoffFence();
    AERROR << "channel \"" << channel_->channel << "\": a reader in another process asks for more "
           << "than this process's writer offers (" << qos_.ToString()
           << "; DDS QoS policy id " << status.last_policy_id
           << "): they do not exchange messages; give both ends the same qos_profile";
  }

 private:
  absl::Status CheckSize(size_t size) {
    if (size <= max_bytes_) return absl::OkStatus();
    channel_->send_failures.fetch_add(1, std::memory_order_relaxed);
    return absl::InvalidArgumentError(absl::StrCat(
        "channel \"", channel_->channel, "\": a message of ", size,
        " bytes is larger than the transport's limit of ", max_bytes_,
        " bytes (DdsTransportOptions::max_message_bytes); not sent"));
  }

  FrameHeader Header(Correlation correlation) {
    FrameHeader header;
    header.kind = static_cast<FrameKind>(correlation.kind);
    header.sequence = sequence_.fetch_add(1, std::memory_order_relaxed) + 1;
    header.sent_ns = MonotonicNs();
    header.correlation_client = correlation.client;
    header.correlation_sequence = correlation.sequence;
    return header;
  }

  // Hands `sample` to DDS (which serializes it in this call).
  absl::Status Write(FrameSample* sample) {
    // Held across the write: Detach() waits for it. DataWriter::write
    // serializes writers of one DataWriter anyway.
    MutexLock lock(&mu_);
    if (writer_ == nullptr) {
      channel_->send_failures.fetch_add(1, std::memory_order_relaxed);
      return absl::FailedPreconditionError(absl::StrCat(
          "channel \"", channel_->channel, "\": the transport is shut down; not sent"));
    }
    if (!writer_->write(sample)) {
      channel_->send_failures.fetch_add(1, std::memory_order_relaxed);
      return absl::UnavailableError(absl::StrCat(
          "channel \"", channel_->channel, "\": DDS refused the sample (history full for "
          "longer than 10 ms, or the message changed while it was sent)"));
    }
    channel_->sent.fetch_add(1, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  const std::shared_ptr<ChannelState> channel_;
  const ChannelQos qos_;
  const size_t max_bytes_;
  const frtps::GuidPrefix_t own_prefix_;
  std::atomic<uint64_t> sequence_{0};
  std::atomic<int> matched_remote_{0};
  std::atomic<bool> closed_{false};
  Mutex mu_;
  fdds::DataWriter* writer_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// --- the inlet of one channel -----------------------------------------------

class SubscriptionImpl final : public RemoteSubscription, public fdds::DataReaderListener {
 public:
  SubscriptionImpl(std::shared_ptr<DdsTransport::Impl> impl,
                   std::shared_ptr<ChannelState> channel, ChannelQos qos,
                   RemoteTransport::SampleHandler handler)
      : impl_(std::move(impl)),
        channel_(std::move(channel)),
        qos_(qos),
        handler_(std::move(handler)),
        own_prefix_(impl_->own_prefix()) {
    HandoffFence();
  }

  ~SubscriptionImpl() override { impl_->CloseSubscription(this); }

  void Attach(fdds::DataReader* reader) {
    MutexLock lock(&mu_);
    reader_ = reader;
  }

  // No handler call runs after this returns; returns the DataReader for
  // deletion.
  fdds::DataReader* Detach() {
    MutexLock lock(&mu_);
    closed_ = true;
    return std::exchange(reader_, nullptr);
  }

  void on_data_available(fdds::DataReader* reader) override {
    HandoffFence();
    FrameSample sample;
    fdds::SampleInfo info;
    while (reader->take_next_sample(&sample, &info) == ReturnCode::RETCODE_OK) {
      if (!info.valid_data) continue;
      MutexLock lock(&mu_);
      if (closed_) return;
      const frtps::GUID_t writer = info.sample_identity.writer_guid();
      if (writer.guidPrefix == own_prefix_) continue;  // our own
      Handle(writer, sample);
    }
  }

  void on_sample_lost(fdds::DataReader*, const fdds::SampleLostStatus& status) override {
    HandoffFence();
    channel_->lost.fetch_add(static_cast<uint64_t>(std::max(status.total_count_change, 0)),
                             std::memory_order_relaxed);
  }

  void on_requested_incompatible_qos(
      fdds::DataReader*, const fdds::RequestedIncompatibleQosStatus& status) override {
    HandoffFence();
    AERROR << "channel \"" << channel_->channel << "\": a writer in another process offers less "
           << "than this process's reader asks for (" << qos_.ToString()
           << "; DDS QoS policy id " << status.last_policy_id
           << "): they do not exchange messages; give both ends the same qos_profile";
  }

 private:
  void Handle(const frtps::GUID_t& writer, const FrameSample& sample)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<FrameView> frame = DecodeFrame(sample.bytes);
    if (!frame.ok()) {
      Drop(writer, frame.status().message());
      return;
    }
    if (SameHost(writer.guidPrefix, own_prefix_) && frame->header.sent_ns > 0) {
      const int64_t latency = MonotonicNs() - frame->header.sent_ns;
      if (latency >= 0) {
        MutexLock lock(&channel_->latency_mu);
        channel_->latency.Record(absl::Nanoseconds(latency));
      }
    }
    RemoteSample remote;
    remote.payload = frame->payload;
    remote.correlation.kind = static_cast<Correlation::Kind>(frame->header.kind);
    remote.correlation.client = frame->header.correlation_client;
    remote.correlation.sequence = frame->header.correlation_sequence;
    if (!handler_(remote)) {
      Drop(writer, absl::StrCat("the payload (", frame->payload.size(),
                                " bytes) does not parse as ", channel_->type_name));
      return;
    }
    channel_->received.fetch_add(1, std::memory_order_relaxed);
  }

  void Drop(const frtps::GUID_t& writer, absl::string_view why) {
    const uint64_t n = channel_->dropped_undecodable.fetch_add(1, std::memory_order_relaxed) + 1;
    // The first few, then one in 100.
    if (n <= 5 || n % 100 == 0) {
      AERROR << "channel \"" << channel_->channel << "\": dropped a sample from "
             << impl_->PeerName(writer.guidPrefix) << ": " << why << " (" << n
             << " dropped so far on this channel)";
    }
  }

  const std::shared_ptr<DdsTransport::Impl> impl_;
  const std::shared_ptr<ChannelState> channel_;
  const ChannelQos qos_;
  const RemoteTransport::SampleHandler handler_;
  const frtps::GuidPrefix_t own_prefix_;
  // Held while a handler runs (Detach waits for it).
  Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  fdds::DataReader* reader_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// --- the transport ------------------------------------------------------------

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
  discovery.leaseDuration = eprosima::fastrtps::Duration_t(
      static_cast<int32_t>(lease_ms / 1000), static_cast<uint32_t>(lease_ms % 1000) * 1'000'000);
  const int64_t announce_ms = lease_ms / 3;
  discovery.leaseDuration_announcementperiod = eprosima::fastrtps::Duration_t(
      static_cast<int32_t>(announce_ms / 1000),
      static_cast<uint32_t>(announce_ms % 1000) * 1'000'000);

  participant_ = factory->create_participant(options_.domain_id, qos, this,
                                             fdds::StatusMask::none());
  if (participant_ == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "DDS transport of \"", self_.process, "\": Fast-DDS could not create a participant on domain ",
        options_.domain_id, " (see its log above)"));
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
                ? " (shared memory and loopback only)"
                : absl::StrCat(" (shared memory, and UDP on ", options_.interface_address, ")"));
  return absl::OkStatus();
}

absl::StatusOr<fdds::Topic*> DdsTransport::Impl::TopicLocked(const RemoteEndpoint& endpoint) {
  auto it = topics_.find(endpoint.channel);
  if (it != topics_.end()) return it->second;
  if (participant_->find_type(endpoint.type_name).empty()) {
    fdds::TypeSupport type(new FrameTopicType(endpoint.type_name));
    if (type.register_type(participant_) != ReturnCode::RETCODE_OK) {
      return absl::UnavailableError(absl::StrCat(
          "channel \"", endpoint.channel, "\": DDS could not register type \"",
          endpoint.type_name, "\""));
    }
  }
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
    for (const auto& e : remote_endpoints_) CheckTypeLocked(e.second);
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
  fdds::DataWriter* writer = publisher_->create_datawriter(
      *topic, WriterQos(endpoint.qos), publisher.get(), fdds::StatusMask::all());
  if (writer == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "channel \"", endpoint.channel, "\": DDS could not create a writer with qos (",
        endpoint.qos.ToString(), ")"));
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
  auto sub = std::make_unique<SubscriptionImpl>(self, channel, endpoint.qos, std::move(handler));
  fdds::StatusMask mask = fdds::StatusMask::data_available() << fdds::StatusMask::sample_lost()
                          << fdds::StatusMask::requested_incompatible_qos();
  fdds::DataReader* reader =
      subscriber_->create_datareader(*topic, ReaderQos(endpoint.qos), sub.get(), mask);
  if (reader == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "channel \"", endpoint.channel, "\": DDS could not create a reader with qos (",
        endpoint.qos.ToString(), ")"));
  }
  sub->Attach(reader);
  subscriptions_.insert(sub.get());
  return std::unique_ptr<RemoteSubscription>(std::move(sub));
}

void DdsTransport::Impl::CloseSubscription(SubscriptionImpl* sub) {
  fdds::DataReader* reader = sub->Detach();  // no handler runs after this
  MutexLock create(&create_mu_);
  subscriptions_.erase(sub);
  if (reader != nullptr && subscriber_ != nullptr) {
    reader->set_listener(nullptr);
    subscriber_->delete_datareader(reader);
  }
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
  publisher_ = nullptr;
  subscriber_ = nullptr;
  topics_.clear();
  started_.store(false, std::memory_order_release);
  AINFO << "DDS transport: " << self_.ToString() << " left domain " << options_.domain_id;
}

// --- discovery --------------------------------------------------------------

void DdsTransport::Impl::on_participant_discovery(fdds::DomainParticipant*,
                                                  frtps::ParticipantDiscoveryInfo&& info) {
  HandoffFence();
  const std::string key = PrefixKey(info.info.m_guid.guidPrefix);
  using Status = frtps::ParticipantDiscoveryInfo::DISCOVERY_STATUS;
  if (info.status == Status::DISCOVERED_PARTICIPANT) {
    RemotePeer peer = PeerFromParticipantName(info.info.m_participantName.to_string());
    AINFO << "DDS transport: peer " << peer.ToString() << " joined domain " << options_.domain_id;
    MutexLock lock(&mu_);
    peers_[key] = std::move(peer);
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
    peers_.erase(it);
    for (auto e = remote_endpoints_.begin(); e != remote_endpoints_.end();) {
      e = e->second.peer_key == key ? remote_endpoints_.erase(e) : std::next(e);
    }
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
    remote_endpoints_.erase(key);
    return;
  }
  RemoteEndpointRecord record{topic, type_name, PrefixKey(guid.guidPrefix), writer};
  CheckTypeLocked(record);
  remote_endpoints_[key] = std::move(record);
}

void DdsTransport::Impl::CheckTypeLocked(const RemoteEndpointRecord& record) {
  auto channel = channels_.find(record.topic);
  if (channel == channels_.end() || channel->second->type_name == record.type_name) return;
  if (!conflicts_.emplace(record.peer_key, record.topic).second) return;  // logged already
  auto peer = peers_.find(record.peer_key);
  const std::string who = peer == peers_.end() ? "an undiscovered participant" : peer->second.ToString();
  const std::string text = absl::StrCat(
      who, " ", record.writer ? "writes" : "reads", " ", record.type_name);
  conflict_text_[record.topic].push_back(text);
  AERROR << "channel \"" << record.topic << "\": message types differ: this process ("
         << self_.ToString() << ") uses " << channel->second->type_name << ", but " << text
         << "; they will not exchange messages on this channel";
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
    s.dropped_undecodable = c.dropped_undecodable.load(std::memory_order_relaxed);
    s.lost = c.lost.load(std::memory_order_relaxed);
    {
      MutexLock latency(&entry.second->latency_mu);
      if (entry.second->latency.count() > 0) {
        s.latency_p99_ns = absl::ToInt64Nanoseconds(entry.second->latency.Percentile(0.99));
      }
    }
    std::set<std::pair<std::string, bool>> seen;
    for (const auto& e : remote_endpoints_) {
      const RemoteEndpointRecord& r = e.second;
      if (r.topic != c.channel || r.type_name != c.type_name) continue;
      auto peer = peers_.find(r.peer_key);
      if (peer == peers_.end() || !seen.emplace(r.peer_key, r.writer).second) continue;
      (r.writer ? s.remote_writers : s.remote_readers).push_back(peer->second);
    }
    auto conflicts = conflict_text_.find(c.channel);
    if (conflicts != conflict_text_.end()) s.type_conflicts = conflicts->second;
    out.push_back(std::move(s));
  }
  return out;
}

// --- DdsTransport -------------------------------------------------------------

DdsTransport::DdsTransport(DdsTransportOptions options)
    : impl_(std::make_shared<Impl>(std::move(options))) {}

DdsTransport::~DdsTransport() { impl_->Shutdown(); }

absl::StatusOr<std::shared_ptr<RemotePublisher>> DdsTransport::Publisher(
    const RemoteEndpoint& endpoint) {
  return impl_->Publisher(impl_, endpoint);
}

absl::StatusOr<std::unique_ptr<RemoteSubscription>> DdsTransport::Subscribe(
    const RemoteEndpoint& endpoint, SampleHandler handler) {
  return impl_->Subscribe(impl_, endpoint, std::move(handler));
}

uint64_t DdsTransport::AddPeerLostListener(
    std::function<void(const RemotePeer&, bool crashed)> listener) {
  return impl_->AddPeerLostListener(std::move(listener));
}

void DdsTransport::RemovePeerLostListener(uint64_t id) { impl_->RemovePeerLostListener(id); }

std::vector<RemotePeer> DdsTransport::RemoteWriters(const std::string& channel) const {
  return impl_->RemoteWriters(channel);
}

std::vector<RemoteChannelStats> DdsTransport::ChannelStats() const {
  return impl_->ChannelStats();
}

std::vector<RemotePeer> DdsTransport::LostPeers() const { return impl_->LostPeers(); }

RemotePeer DdsTransport::self() const { return impl_->self(); }

void DdsTransport::Shutdown() { impl_->Shutdown(); }

bool DdsTransport::participant_started() const { return impl_->started(); }

std::vector<RemotePeer> DdsTransport::Peers() const { return impl_->Peers(); }

const DdsTransportOptions& DdsTransport::options() const { return impl_->options(); }

}  // namespace dds
}  // namespace cyber
