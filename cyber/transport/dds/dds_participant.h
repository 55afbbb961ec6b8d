// Internal to cyber/transport/dds: the DDS participant of a DdsTransport
// (DdsTransport::Impl): one per runtime, its topics, the channels it
// opened, discovery of peers and their endpoints (type conflicts, peers
// lost), and the helpers its publisher (dds_publisher.h) and subscription
// (dds_subscription.h) share with it. The public face is dds_transport.h.
//
// Threads: see dds_transport.h; each lock below says what it guards.

#ifndef CYBER_TRANSPORT_DDS_DDS_PARTICIPANT_H_
#define CYBER_TRANSPORT_DDS_DDS_PARTICIPANT_H_

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <vector>
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
#include <fastdds/rtps/attributes/ServerAttributes.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
#include "cyber/transport/dds/dds_qos.h"
#include "cyber/transport/dds/dds_security.h"
#include "cyber/transport/dds/frame_topic_type.h"
#include "cyber/transport/dds/handoff_fence.h"
#include "cyber/transport/dds/sample_frame.h"
#include "cyber/transport/dds/shm_cleanup.h"
#include "timer/latency_histogram.h"

#include "cyber/transport/dds/dds_transport.h"

namespace cyber {
namespace dds {

namespace fdds = eprosima::fastdds::dds;
namespace frtps = eprosima::fastrtps::rtps;
using ReturnCode = eprosima::fastrtps::types::ReturnCode_t;

inline constexpr uint32_t kMaxDomainId = 232;  // DDS's port mapping allows 0..232

inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}

// How a participant of ours is named on the wire: "cyber/<host>/<pid>/<process>".
inline std::string ParticipantName(const RemotePeer& peer) {
  return absl::StrCat("cyber/", peer.host, "/", peer.pid, "/", peer.process);
}

inline RemotePeer PeerFromParticipantName(const std::string& name) {
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

// The participant property (propagated with discovery) that says whether
// the process announces its graph: "true" or "false".
inline constexpr char kAnnouncesGraphProperty[] = "cyber.announces_graph";

inline std::string PrefixKey(const frtps::GuidPrefix_t& prefix) {
  return std::string(reinterpret_cast<const char*>(prefix.value), frtps::GuidPrefix_t::size);
}

inline std::string GuidKey(const frtps::GUID_t& guid) {
  return PrefixKey(guid.guidPrefix) +
         std::string(reinterpret_cast<const char*>(guid.entityId.value), 4);
}

// Fast-DDS puts a host id in the first 4 bytes of a participant's prefix.
inline bool SameHost(const frtps::GuidPrefix_t& a, const frtps::GuidPrefix_t& b) {
  return std::memcmp(a.value, b.value, 4) == 0;
}

// What the transport knows about one channel it opened.
struct ChannelState {
  ChannelState(std::string c, std::string t) : channel(std::move(c)), type_name(std::move(t)) {}
  const std::string channel;
  const std::string type_name;
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> send_failures{0};
  std::atomic<uint64_t> received{0};
  std::atomic<uint64_t> bytes_sent{0};      // payloads, without frame headers
  std::atomic<uint64_t> bytes_received{0};  // payloads handed over
  std::atomic<uint64_t> dropped_undecodable{0};
  std::atomic<uint64_t> lost{0};
  // Type conflicts on the channel that ended (the peer's endpoint went).
  std::atomic<uint64_t> type_conflicts_ended{0};
  // This process has a DataWriter on the channel (set before it is made,
  // cleared if it could not be; a publisher lives as long as the
  // transport). Fast-DDS
  // hands this process's readers of the channel what it writes, which they
  // drop unread (dds_subscription.h).
  std::atomic<bool> written_here{false};
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
  void CloseSubscription(const std::shared_ptr<SubscriptionImpl>& sub);
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
  std::vector<RemotePeer> GraphAnnouncingPeers() const {
    MutexLock lock(&mu_);
    std::vector<RemotePeer> out;
    for (const auto& p : peers_) {
      if (graph_announcers_.count(p.first) != 0) out.push_back(p.second);
    }
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

  // The participant with `prefix`, once discovered.
  std::optional<RemotePeer> PeerOf(const frtps::GuidPrefix_t& prefix) const {
    MutexLock lock(&mu_);
    auto it = peers_.find(PrefixKey(prefix));
    if (it == peers_.end()) return std::nullopt;
    return it->second;
  }

  // --- DomainParticipantListener (Fast-DDS threads) -----------------------
  void on_participant_discovery(fdds::DomainParticipant*,
                                frtps::ParticipantDiscoveryInfo&& info) override;
  // With DDS Security: a peer that passed or failed authentication
  // (a refusal is logged once, with the name the peer announced).
  void onParticipantAuthentication(fdds::DomainParticipant*,
                                   frtps::ParticipantAuthenticationInfo&& info) override;
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
  // For the error of a writer or reader Fast-DDS did not make: with
  // security on, the likely reason (permissions); else empty.
  std::string SecurityHint(const char* action) const;
  // A remote endpoint appeared or went away.
  void OnRemoteEndpoint(bool writer, bool removed, const frtps::GUID_t& guid,
                        const std::string& topic, const std::string& type_name);
  // Type conflicts are not stored: a conflict is a remote endpoint of
  // another type on a channel this process opened, so it lasts exactly as
  // long as that endpoint's record in remote_endpoints_ (by GUID), which
  // endpoint removal and the peer's removal (left, or dead after its lease)
  // erase. What is kept is only which (peer, channel) pairs have been
  // logged, so that a peer's several endpoints make one error.
  //
  // Whether `record`'s type differs from this process's on its channel.
  bool ConflictsLocked(const RemoteEndpointRecord& record) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Logs a conflict that begins: the first live endpoint of its peer in
  // conflict on its channel.
  void NoteConflictLocked(const RemoteEndpointRecord& record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `record` was erased from remote_endpoints_: if it was the last endpoint
  // of its peer in conflict on its channel, that conflict ends (logged,
  // counted). `why` completes "<peer> (<type>) ...": "was declared dead".
  void EndConflictLocked(const RemoteEndpointRecord& record, const char* why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // "fusion (host robot, pid 9)", or "an undiscovered participant".
  std::string PeerNameLocked(const std::string& peer_key) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // "fusion (host robot, pid 9) reads sensor.OldImu".
  std::string ConflictTextLocked(const RemoteEndpointRecord& record) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DdsTransportOptions options_;
  RemotePeer self_;
  std::atomic<bool> started_{false};

  // Serializes making and deleting DDS entities; never taken by Fast-DDS's
  // callbacks, so it may be held across DDS calls.
  Mutex create_mu_;
  bool shut_down_ ABSL_GUARDED_BY(create_mu_) = false;
  fdds::DomainParticipant* participant_ ABSL_GUARDED_BY(create_mu_) = nullptr;
  // The id it drew (ProcessParticipantIds, dds_participant.cc); -1: none.
  int32_t participant_id_ ABSL_GUARDED_BY(create_mu_) = -1;
  fdds::Publisher* publisher_ ABSL_GUARDED_BY(create_mu_) = nullptr;
  fdds::Subscriber* subscriber_ ABSL_GUARDED_BY(create_mu_) = nullptr;
  std::map<std::string, fdds::Topic*> topics_ ABSL_GUARDED_BY(create_mu_);
  // The participant runs DDS Security: no data sharing (the pool, a plain
  // file in /dev/shm, would bypass payload protection).
  bool secured_ ABSL_GUARDED_BY(create_mu_) = false;
  // The channel that registered each message type: its bound
  // (FrameTopicType::max_message_bytes, 0: none) is the type's.
  std::map<std::string, std::string> first_channel_of_type_ ABSL_GUARDED_BY(create_mu_);
  std::map<std::string, std::shared_ptr<PublisherImpl>> publisher_by_channel_
      ABSL_GUARDED_BY(create_mu_);
  std::set<SubscriptionImpl*> subscriptions_ ABSL_GUARDED_BY(create_mu_);
  // Closed listeners, kept until the participant is deleted (Fast-DDS may
  // still be calling one: dds_subscription.h).
  std::vector<std::shared_ptr<SubscriptionImpl>> retired_ ABSL_GUARDED_BY(create_mu_);

  // Taken by callbacks, briefly; never held across a DDS call.
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<ChannelState>> channels_ ABSL_GUARDED_BY(mu_);
  frtps::GuidPrefix_t own_prefix_ ABSL_GUARDED_BY(mu_);  // once started
  std::map<std::string, RemotePeer> peers_ ABSL_GUARDED_BY(mu_);  // by prefix
  // The prefixes of the peers whose discovery data says they announce
  // their graph.
  std::set<std::string> graph_announcers_ ABSL_GUARDED_BY(mu_);
  // Participants whose refusal was logged, by prefix.
  std::set<std::string> refused_ ABSL_GUARDED_BY(mu_);
  // By endpoint GUID (GuidKey).
  std::map<std::string, RemoteEndpointRecord> remote_endpoints_ ABSL_GUARDED_BY(mu_);
  // (peer key, channel) pairs in conflict now, whose beginning was logged.
  std::set<std::pair<std::string, std::string>> logged_conflicts_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::function<void(const RemotePeer&, bool)>> lost_listeners_
      ABSL_GUARDED_BY(mu_);
  std::deque<RemotePeer> lost_peers_ ABSL_GUARDED_BY(mu_);  // the last 16 dead
  uint64_t next_listener_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dds
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_DDS_PARTICIPANT_H_
