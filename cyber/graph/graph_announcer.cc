#include "cyber/graph/graph_announcer.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
#include "cyber/graph/data_sharing_bounds.h"
#include "cyber/graph/descriptors.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace cyber {
namespace graph {
namespace {

// The bytes of `message`, the same for equal messages (map entries sorted).
std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

ChannelQos GraphQos() {
  ChannelQos qos;
  qos.reliability = ChannelQos::Reliability::kReliable;
  qos.durability = ChannelQos::Durability::kTransientLocal;
  qos.history = ChannelQos::History::kKeepLast;
  qos.depth = 1;
  return qos;
}

RemoteEndpoint Endpoint(const char* topic, const google::protobuf::Descriptor* type,
                        const ChannelQos& qos) {
  RemoteEndpoint e;
  e.channel = topic;
  e.type_name = type->full_name();
  e.qos = qos;
  e.node = "graph_announcer";
  return e;
}

ChannelQos StatusQos() {
  ChannelQos qos = ChannelQos::SensorData();
  qos.depth = 1;
  return qos;
}

}  // namespace

std::string ProcessLabel(const std::string& process, const std::string& host, int64_t pid) {
  return absl::StrCat(process, "@", host, ":", pid);
}

class GraphAnnouncer::Impl {
 public:
  Impl(std::shared_ptr<RemoteTransport> transport, GraphFn graph, StatusFn status,
       Options options)
      : transport_(std::move(transport)),
        graph_fn_(std::move(graph)),
        status_fn_(std::move(status)),
        options_(options),
        self_(transport_->self()),
        started_(std::chrono::steady_clock::now()) {
    thread_ = std::thread([this] { Run(); });
  }

  ~Impl() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    wake_.SignalAll();
    thread_.join();
    peers_.reset();  // waits for a peer graph being handled; none after it
    if (peer_lost_id_ != 0) transport_->RemovePeerLostListener(peer_lost_id_);
  }

  void Poke() {
    {
      MutexLock lock(&mu_);
      poked_ = true;
    }
    wake_.SignalAll();
  }

  uint64_t generation() const {
    MutexLock lock(&mu_);
    return generation_;
  }

 private:
  void Run() {
    // The steady clock, never the wall clock: only the rhythm of the
    // status depends on it.
    auto next_status = std::chrono::steady_clock::now();
    for (;;) {
      if (!options_.wait_until_linked || transport_->linked()) {
        SendGraphIfChanged();
        const auto now = std::chrono::steady_clock::now();
        if (status_fn_ != nullptr && now >= next_status) {
          SendStatus();
          next_status = now + absl::ToChronoNanoseconds(options_.status_period);
        }
      }
      const auto until = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(options_.poll);
      MutexLock lock(&mu_);
      while (!stop_ && !poked_) {
        if (!wake_.WaitUntil(&mu_, until)) break;
      }
      if (stop_) return;
      poked_ = false;
    }
  }

  void SendGraphIfChanged() {
    ProcessGraph graph = graph_fn_();
    graph.set_process(self_.process);
    graph.set_host(self_.host);
    graph.set_pid(self_.pid);
    if (status_fn_ != nullptr && options_.status_period != absl::InfiniteDuration()) {
      graph.set_status_period_ns(absl::ToInt64Nanoseconds(options_.status_period));
    }
    graph.clear_generation();
    std::string bytes = DeterministicBytes(graph);
    if (bytes == last_graph_) return;
    uint64_t generation;
    {
      MutexLock lock(&mu_);
      generation = generation_ + 1;
    }
    graph.set_generation(generation);
    if (graph_out_ == nullptr) {
      absl::StatusOr<std::shared_ptr<RemotePublisher>> out =
          transport_->Publisher(Endpoint(kGraphTopic, ProcessGraph::descriptor(), GraphQos()));
      if (!out.ok()) {
        // Tried again at each poll (DDS Security may refuse the topic for
        // good: its permissions must grant /cyber/graph), said once.
        if (!graph_failure_logged_) {
          AWARN << "graph announcer: the tools cannot see " << self_.ToString() << ": "
                << out.status().message() << " (said once; tried again every "
                << absl::FormatDuration(options_.poll) << ")";
        }
        graph_failure_logged_ = true;
        return;
      }
      graph_out_ = *std::move(out);
    }
    absl::Status sent = graph_out_->PublishMessage(graph);
    if (!sent.ok()) {
      if (!graph_failure_logged_) {
        AWARN << "graph announcer: the graph of " << self_.ToString() << " was not sent on "
              << kGraphTopic << ": " << sent.message() << " (said once; tried again at "
              << "each poll)";
      }
      graph_failure_logged_ = true;
      return;
    }
    graph_failure_logged_ = false;  // a later failure is said again
    last_graph_ = std::move(bytes);
    {
      MutexLock lock(&mu_);
      generation_ = generation;
      own_graph_ = std::make_shared<const ProcessGraph>(std::move(graph));
    }
    WatchPeers();
    // What this process uses changed: the peers' graphs are checked again.
    std::vector<std::shared_ptr<const ProcessGraph>> peers;
    {
      MutexLock lock(&peer_graphs_->mu);
      for (const auto& [label, peer] : peer_graphs_->latest) peers.push_back(peer);
    }
    for (const auto& peer : peers) CheckPeer(*peer);
  }

  // Peers' graphs are read too, to name the fields in which a peer's
  // version of a message type differs from this process's on a channel
  // both use (DDS matches the two by type name alone, and the bytes of one
  // version parse as the other into wrong fields), and the pairs whose
  // data-sharing bounds drop messages. Subscribed once this process has
  // sent its own graph; each peer's latest graph is kept (until the peer
  // goes away) to be checked again when this process's graph changes.
  void WatchPeers() {
    if (peers_ != nullptr) return;
    if (peer_lost_id_ == 0) {
      // The transport may call a listener just after it was removed: it
      // holds the peers' graphs, not this.
      peer_lost_id_ = transport_->AddPeerLostListener(
          [weak = std::weak_ptr<PeerGraphs>(peer_graphs_)](const RemotePeer& peer, bool) {
            if (std::shared_ptr<PeerGraphs> graphs = weak.lock()) {
              MutexLock lock(&graphs->mu);
              graphs->latest.erase(ProcessLabel(peer.process, peer.host, peer.pid));
            }
          });
    }
    RemoteEndpoint e = Endpoint(kGraphTopic, ProcessGraph::descriptor(), GraphQos());
    e.qos.history = ChannelQos::History::kKeepAll;
    e.qos.depth = 64;
    absl::StatusOr<std::unique_ptr<RemoteSubscription>> sub =
        transport_->Subscribe(e, [this](const RemoteSample& s) { return OnPeerGraph(s); });
    if (sub.ok()) peers_ = *std::move(sub);
  }

  bool OnPeerGraph(const RemoteSample& sample) {
    auto parsed = std::make_shared<ProcessGraph>();
    if (!parsed->ParseFromArray(sample.payload.data(), static_cast<int>(sample.payload.size()))) {
      return false;
    }
    std::shared_ptr<const ProcessGraph> peer = std::move(parsed);
    {
      MutexLock lock(&peer_graphs_->mu);
      peer_graphs_->latest[ProcessLabel(peer->process(), peer->host(), peer->pid())] = peer;
    }
    CheckPeer(*peer);
    return true;
  }

  // Says (once each) what in `peer`'s graph does not fit this process's.
  void CheckPeer(const ProcessGraph& peer) {
    std::shared_ptr<const ProcessGraph> own;
    {
      MutexLock lock(&mu_);
      own = own_graph_;
    }
    if (own == nullptr) return;
    const std::string peer_name = ProcessLabel(peer.process(), peer.host(), peer.pid());
    const std::string own_name = ProcessLabel(self_.process, self_.host, self_.pid);
    SayBoundMismatches(peer, peer_name, *own, own_name);
    for (const ChannelEndpoint& theirs : peer.channels()) {
      auto their_set = peer.descriptors().find(theirs.type_name());
      auto our_set = own->descriptors().find(theirs.type_name());
      if (their_set == peer.descriptors().end() || our_set == own->descriptors().end()) continue;
      bool ours_too = false;
      for (const ChannelEndpoint& mine : own->channels()) {
        ours_too |= mine.channel() == theirs.channel() && mine.type_name() == theirs.type_name();
      }
      if (!ours_too) continue;
      if (their_set->second.SerializeAsString() == our_set->second.SerializeAsString()) continue;
      absl::StatusOr<const google::protobuf::Descriptor*> a =
          library_.Load(our_set->second, theirs.type_name());
      absl::StatusOr<const google::protobuf::Descriptor*> b =
          library_.Load(their_set->second, theirs.type_name());
      if (!a.ok() || !b.ok()) continue;
      const std::vector<std::string> diff = TypeDifferences(*a, own_name, *b, peer_name);
      if (diff.empty()) continue;
      const std::string key = absl::StrCat(peer_name, " ", theirs.channel());
      {
        MutexLock lock(&mu_);
        if (!logged_versions_.insert(key).second) continue;
      }
      AERROR << "channel \"" << theirs.channel() << "\": " << peer_name << " "
             << (theirs.role() == ChannelEndpoint::WRITER ? "writes" : "reads")
             << " another version of " << theirs.type_name() << " than this process ("
             << own_name << "); its messages are misread where the fields differ: "
             << absl::StrJoin(diff, "; ");
    }
  }

  // A reader here or there whose data-sharing bound drops the other's
  // larger messages (data_sharing_bounds.h): said once per pair of
  // endpoints, in both processes.
  void SayBoundMismatches(const ProcessGraph& peer, const std::string& peer_name,
                          const ProcessGraph& own, const std::string& own_name) {
    std::map<std::string, std::vector<AnnouncedEndpoint>> by_channel;
    auto add = [&by_channel](const ProcessGraph& graph, const std::string& process) {
      for (const ChannelEndpoint& e : graph.channels()) {
        if (!e.has_qos()) continue;
        by_channel[e.channel()].push_back({process, e.node(), e.type_name(),
                                           e.role() == ChannelEndpoint::WRITER,
                                           e.qos().data_sharing_max_bytes()});
      }
    };
    add(peer, peer_name);
    add(own, own_name);
    for (const auto& [channel, endpoints] : by_channel) {
      for (const std::string& mismatch : DataSharingBoundMismatchesAmong(channel, endpoints)) {
        {
          MutexLock lock(&mu_);
          if (!logged_bounds_.insert(mismatch).second) continue;
        }
        AERROR << mismatch;
      }
    }
  }

  void SendStatus() {
    ProcessStatus status = status_fn_();
    status.set_process(self_.process);
    status.set_host(self_.host);
    status.set_pid(self_.pid);
    status.set_uptime_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - started_)
                             .count());
    status.set_sequence(++status_sequence_);
    if (status_out_ == nullptr) {
      absl::StatusOr<std::shared_ptr<RemotePublisher>> out =
          transport_->Publisher(Endpoint(kStatusTopic, ProcessStatus::descriptor(), StatusQos()));
      if (!out.ok()) {
        if (!status_failure_logged_) AWARN << "graph announcer: " << out.status().message();
        status_failure_logged_ = true;
        return;
      }
      status_out_ = *std::move(out);
    }
    absl::Status sent = status_out_->PublishMessage(status);
    if (!sent.ok() && !status_failure_logged_) {
      status_failure_logged_ = true;
      AWARN << "graph announcer: the status of " << self_.ToString() << " was not sent on "
            << kStatusTopic << ": " << sent.message() << " (logged once)";
    }
  }

  const std::shared_ptr<RemoteTransport> transport_;
  const GraphFn graph_fn_;
  const StatusFn status_fn_;
  const Options options_;
  const RemotePeer self_;
  const std::chrono::steady_clock::time_point started_;

  // Only the announcer's thread touches these.
  std::shared_ptr<RemotePublisher> graph_out_;  // made on the first send
  std::shared_ptr<RemotePublisher> status_out_;
  std::unique_ptr<RemoteSubscription> peers_;  // made and reset by the thread and ~Impl
  std::string last_graph_;
  uint64_t status_sequence_ = 0;
  bool status_failure_logged_ = false;
  bool graph_failure_logged_ = false;

  mutable Mutex mu_;
  CondVar wake_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<const ProcessGraph> own_graph_ ABSL_GUARDED_BY(mu_);  // last sent
  std::set<std::string> logged_versions_ ABSL_GUARDED_BY(mu_);  // "peer channel"
  std::set<std::string> logged_bounds_ ABSL_GUARDED_BY(mu_);    // the sentences said
  // The latest graph of each peer still there, by ProcessLabel.
  struct PeerGraphs {
    Mutex mu;
    std::map<std::string, std::shared_ptr<const ProcessGraph>> latest ABSL_GUARDED_BY(mu);
  };
  const std::shared_ptr<PeerGraphs> peer_graphs_ = std::make_shared<PeerGraphs>();
  uint64_t peer_lost_id_ = 0;  // set by the thread, read by ~Impl after joining it
  DescriptorLibrary library_;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread thread_;  // last: started when everything above exists
};

absl::StatusOr<std::unique_ptr<GraphAnnouncer>> GraphAnnouncer::Start(
    std::shared_ptr<RemoteTransport> transport, GraphFn graph, StatusFn status,
    Options options) {
  if (transport == nullptr) {
    return absl::FailedPreconditionError(
        "graph announcer: no transport to other processes (--in_process_only?): the "
        "process cannot be seen by the tools");
  }
  if (graph == nullptr) {
    return absl::InvalidArgumentError("graph announcer: no graph function");
  }
  if (options.poll <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph announcer: option poll must be positive, not ",
                     absl::FormatDuration(options.poll)));
  }
  if (options.status_period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph announcer: option status_period must be positive, not ",
                     absl::FormatDuration(options.status_period)));
  }
  if (options.status_period == absl::InfiniteDuration()) status = nullptr;
  return std::unique_ptr<GraphAnnouncer>(new GraphAnnouncer(std::make_unique<Impl>(
      std::move(transport), std::move(graph), std::move(status), options)));
}

GraphAnnouncer::GraphAnnouncer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GraphAnnouncer::~GraphAnnouncer() = default;
void GraphAnnouncer::Poke() { impl_->Poke(); }
uint64_t GraphAnnouncer::generation() const { return impl_->generation(); }

}  // namespace graph
}  // namespace cyber
