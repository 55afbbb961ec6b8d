#include "cyber/common/steady_time.h"
#include "cyber/graph/domain_graph.h"

#include <time.h>

#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
#include "cyber/common/nearest_name.h"
#include "cyber/graph/data_sharing_bounds.h"
#include "cyber/graph/descriptors.h"
#include "cyber/graph/graph_announcer.h"
#include "cyber/graph/graph_snapshot.h"
#include "cyber/service/service_common.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace cyber {
namespace graph {
namespace {

namespace pb = google::protobuf;

std::string PeerKey(const std::string& host, int64_t pid, const std::string& process) {
  return absl::StrCat(host, "/", pid, "/", process);
}

using SteadyTime = std::chrono::steady_clock::time_point;

SteadyTime Steady() { return std::chrono::steady_clock::now(); }

SteadyTime SteadyAfter(absl::Duration d) {
  if (d >= absl::Hours(24 * 365)) d = absl::Hours(24 * 365);
  return Steady() + absl::ToChronoNanoseconds(std::max(d, absl::ZeroDuration()));
}

// The "did you mean" part of a NotFound.
std::string Suggest(const std::string& wanted, const std::vector<std::string>& known) {
  std::optional<std::string> nearest = NearestName(wanted, known);
  if (nearest.has_value()) return absl::StrCat("; did you mean \"", *nearest, "\"?");
  if (known.empty()) return "";
  std::vector<std::string> some(known.begin(),
                                known.begin() + std::min<size_t>(known.size(), 8));
  return absl::StrCat("; known: ", absl::StrJoin(some, ", "),
                      known.size() > some.size() ? ", ..." : "");
}

class TextErrors : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

std::string LinkKind(const std::string& writer_host, const std::string& reader_host) {
  return writer_host == reader_host ? "shm" : "udp";
}

absl::StatusOr<DomainGraphOptions> DomainGraphOptionsFromEnvironment(const std::string& tool_name) {
  absl::StatusOr<dds::DdsTransportOptions> transport =
      dds::DdsTransportOptionsFromEnvironment(tool_name);
  if (!transport.ok()) return transport.status();
  DomainGraphOptions options;
  options.transport = *std::move(transport);
  const char* domain = std::getenv("CYBER_DOMAIN_ID");
  options.domain_source = domain != nullptr && *domain
                              ? absl::StrCat("CYBER_DOMAIN_ID=", domain)
                              : absl::StrCat("the default domain ", options.transport.domain_id,
                                             " (CYBER_DOMAIN_ID unset)");
  return options;
}

namespace {
// A DomainGraph looks at the graph; it is not in it (peers' tools must
// not wait for a graph from it).
DomainGraphOptions NotAnnouncing(DomainGraphOptions options) {
  options.transport.announces_graph = false;
  return options;
}
}  // namespace

class DomainGraph::Impl {
 public:
  explicit Impl(DomainGraphOptions options)
      : options_(NotAnnouncing(std::move(options))),
        transport_(std::make_shared<dds::DdsTransport>(options_.transport)) {}

  absl::Status Start() {
    lost_listener_ = transport_->AddPeerLostListener(
        [this](const RemotePeer& peer, bool /*crashed*/) { Forget(peer); });
    RemoteEndpoint graph;
    graph.channel = kGraphTopic;
    graph.type_name = ProcessGraph::descriptor()->full_name();
    graph.qos.reliability = ChannelQos::Reliability::kReliable;
    graph.qos.durability = ChannelQos::Durability::kTransientLocal;
    graph.qos.history = ChannelQos::History::kKeepAll;
    graph.qos.depth = 256;
    graph.node = options_.transport.process_name;
    absl::StatusOr<std::unique_ptr<RemoteSubscription>> g =
        transport_->Subscribe(graph, [this](const RemoteSample& s) { return OnGraph(s); });
    if (!g.ok()) return g.status();
    graph_sub_ = *std::move(g);
    RemoteEndpoint status = graph;
    status.channel = kStatusTopic;
    status.type_name = ProcessStatus::descriptor()->full_name();
    status.qos = ChannelQos::SensorData();
    status.qos.depth = 64;
    absl::StatusOr<std::unique_ptr<RemoteSubscription>> st =
        transport_->Subscribe(status, [this](const RemoteSample& s) { return OnStatus(s); });
    if (!st.ok()) return st.status();
    status_sub_ = *std::move(st);
    MutexLock lock(&mu_);
    last_change_ = Steady();
    joined_ = last_change_;
    return absl::OkStatus();
  }

  void Leave() {
    graph_sub_.reset();
    status_sub_.reset();
    if (lost_listener_ != 0) transport_->RemovePeerLostListener(lost_listener_);
    lost_listener_ = 0;
    transport_->Shutdown();
  }

  // --- what arrives (transport threads) ------------------------------------
  bool OnGraph(const RemoteSample& sample) {
    ProcessGraph graph;
    if (!graph.ParseFromArray(sample.payload.data(), static_cast<int>(sample.payload.size()))) {
      return false;
    }
    const std::string key = PeerKey(graph.host(), graph.pid(), graph.process());
    {
      MutexLock lock(&mu_);
      if (lost_.count(key) > 0) return true;  // a late sample of a process gone
      Entry& e = processes_[key];
      if (e.graph.has_value() && e.graph->generation() >= graph.generation()) return true;
      e.graph = std::move(graph);
      Changed();
    }
    changed_cv_.SignalAll();
    Notify();
    return true;
  }

  bool OnStatus(const RemoteSample& sample) {
    ProcessStatus status;
    if (!status.ParseFromArray(sample.payload.data(), static_cast<int>(sample.payload.size()))) {
      return false;
    }
    const std::string key = PeerKey(status.host(), status.pid(), status.process());
    {
      MutexLock lock(&mu_);
      if (lost_.count(key) > 0) return true;
      Entry& e = processes_[key];
      if (e.status.has_value() && e.status->sequence() >= status.sequence()) return true;
      e.status = std::move(status);
      ++changes_;  // a status alone does not unsettle discovery
    }
    changed_cv_.SignalAll();
    Notify();
    return true;
  }

  void Forget(const RemotePeer& peer) {
    const std::string key = PeerKey(peer.host, peer.pid, peer.process);
    {
      MutexLock lock(&mu_);
      if (lost_.insert(key).second) {
        lost_order_.push_back(key);
        if (lost_order_.size() > kLostKept) {
          lost_.erase(lost_order_.front());
          lost_order_.pop_front();
        }
      }
      if (processes_.erase(key) == 0) return;
      Changed();
    }
    changed_cv_.SignalAll();
    Notify();
  }

  void Changed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++changes_;
    last_change_ = Steady();
  }

  void Notify() {
    std::vector<std::function<void()>> listeners;
    {
      MutexLock lock(&listeners_mu_);
      for (const auto& [id, l] : listeners_) listeners.push_back(l);
    }
    for (const auto& l : listeners) l();
  }

  // --- waiting ---------------------------------------------------------------
  void WaitForDiscovery(absl::Duration settle, absl::Duration max, absl::Duration at_least) {
    const SteadyTime deadline = SteadyAfter(max);
    const auto settle_for = absl::ToChronoNanoseconds(settle);
    const auto at_least_for = absl::ToChronoNanoseconds(at_least);
    for (;;) {
      {
        MutexLock lock(&mu_);
        for (;;) {
          const SteadyTime now = Steady();
          const SteadyTime settled = std::max(last_change_ + settle_for, joined_ + at_least_for);
          if (now >= deadline) return;
          if (now >= settled) break;
          changed_cv_.WaitUntil(&mu_, std::min(settled, deadline));
        }
      }
      // Settled; but a process whose participant is discovered may not
      // have sent its graph yet (a loaded machine): wait for each one
      // that writes the graph topic, or said in its discovery data that
      // it will (its graph writer can be matched hundreds of ms after its
      // participant), within `max`.
      std::vector<RemotePeer> announcing = transport_->RemoteWriters(kGraphTopic);
      for (RemotePeer& p : transport_->GraphAnnouncingPeers()) announcing.push_back(std::move(p));
      MutexLock lock(&mu_);
      bool all = true;
      for (const RemotePeer& p : announcing) {
        auto it = processes_.find(PeerKey(p.host, p.pid, p.process));
        all &= it != processes_.end() && it->second.graph.has_value();
      }
      if (all) return;
      const SteadyTime until = std::min(deadline, Steady() + std::chrono::milliseconds(50));
      if (Steady() >= deadline) return;
      changed_cv_.WaitUntil(&mu_, until);
    }
  }

  bool WaitUntil(const std::function<bool(const DomainGraph&)>& predicate,
                 const DomainGraph& self, absl::Duration timeout) {
    const SteadyTime deadline = SteadyAfter(timeout);
    for (;;) {
      uint64_t seen;
      {
        MutexLock lock(&mu_);
        seen = changes_;
      }
      if (predicate(self)) return true;
      const SteadyTime now = Steady();
      if (now >= deadline) return false;
      const SteadyTime until = std::min(deadline, now + std::chrono::milliseconds(50));
      MutexLock lock(&mu_);
      while (changes_ == seen && changed_cv_.WaitUntil(&mu_, until)) {
      }
    }
  }

  // --- views -----------------------------------------------------------------
  std::vector<ProcessView> Processes() const {
    const std::string self_host = transport_->self().host;
    std::vector<ProcessView> out;
    MutexLock lock(&mu_);
    for (const auto& [key, e] : processes_) {
      if (!e.graph.has_value()) continue;
      ProcessView v;
      v.graph = *e.graph;
      v.status = e.status;
      v.label = ProcessLabel(e.graph->process(), e.graph->host(), e.graph->pid());
      v.same_host = e.graph->host() == self_host;
      out.push_back(std::move(v));
    }
    std::sort(out.begin(), out.end(),
              [](const ProcessView& a, const ProcessView& b) { return a.label < b.label; });
    return out;
  }

  absl::StatusOr<const pb::Descriptor*> TypeIn(const ProcessGraph& g, const std::string& type) {
    auto it = g.descriptors().find(type);
    if (it == g.descriptors().end()) {
      return absl::NotFoundError(absl::StrCat("process ", g.process(), " announced no descriptor of ", type));
    }
    return library_.Load(it->second, type);
  }

  std::vector<ChannelView> Channels() {
    const std::vector<ProcessView> processes = Processes();
    const std::string self_host = transport_->self().host;
    struct Pending {
      ChannelView view;
      // Per endpoint, the process that announced it (for its descriptor).
      std::vector<std::pair<const ProcessView*, const ChannelEndpoint*>> endpoints;
    };
    std::map<std::string, Pending> channels;
    for (const ProcessView& p : processes) {
      for (const ChannelEndpoint& e : p.graph.channels()) {
        Pending& c = channels[e.channel()];
        c.view.name = e.channel();
        ChannelEndpointView v;
        v.process_label = p.label;
        v.node = e.node();
        v.type_name = e.type_name();
        v.in_process_only = e.in_process_only();
        if (e.has_qos()) v.qos = FromProto(e.qos());
        v.host = p.graph.host();
        v.same_host_as_tool = p.graph.host() == self_host;
        (e.role() == ChannelEndpoint::WRITER ? c.view.writers : c.view.readers).push_back(v);
        c.endpoints.emplace_back(&p, &e);
      }
    }
    std::vector<ChannelView> out;
    for (auto& [name, c] : channels) {
      // The reference: the first writer, else the first reader.
      std::pair<const ProcessView*, const ChannelEndpoint*> ref = c.endpoints.front();
      for (const auto& pe : c.endpoints) {
        if (pe.second->role() == ChannelEndpoint::WRITER) {
          ref = pe;
          break;
        }
      }
      c.view.type_name = ref.second->type_name();
      absl::StatusOr<const pb::Descriptor*> ref_type = TypeIn(ref.first->graph, c.view.type_name);
      if (ref_type.ok()) c.view.descriptor = *ref_type;
      std::set<std::string> compared;  // one comparison per (process, type)
      for (const auto& [p, e] : c.endpoints) {
        if (p == ref.first) continue;
        const std::string key = absl::StrCat(p->label, " ", e->type_name());
        if (!compared.insert(key).second) continue;
        const std::string a = absl::StrCat(ref.first->label, " (", ref.second->node(), ")");
        const std::string b = absl::StrCat(p->label, " (", e->node(), ")");
        if (e->type_name() != c.view.type_name) {
          c.view.type_conflict = true;
          c.view.conflict_details.push_back(absl::StrCat("type ", c.view.type_name, " in ", a,
                                                         ", ", e->type_name(), " in ", b));
          continue;
        }
        absl::StatusOr<const pb::Descriptor*> other = TypeIn(p->graph, e->type_name());
        if (!ref_type.ok() || !other.ok()) continue;
        for (std::string& d : TypeDifferences(*ref_type, a, *other, b)) {
          c.view.type_conflict = true;
          c.view.conflict_details.push_back(std::move(d));
        }
      }
      c.view.bound_mismatches = DataSharingBoundMismatches(c.view);
      out.push_back(std::move(c.view));
    }
    return out;
  }

  std::vector<NodeView> Nodes() const {
    const std::vector<ProcessView> processes = Processes();
    std::map<std::pair<std::string, std::string>, NodeView> nodes;
    auto node = [&](const ProcessView& p, const std::string& name) -> NodeView& {
      NodeView& n = nodes[{name, p.label}];
      n.name = name;
      n.process_label = p.label;
      return n;
    };
    for (const ProcessView& p : processes) {
      for (const std::string& n : p.graph.nodes()) node(p, n);
      for (const ChannelEndpoint& e : p.graph.channels()) {
        NodeView& n = node(p, e.node());
        (e.role() == ChannelEndpoint::WRITER ? n.writes : n.reads).push_back(e.channel());
      }
      for (const ServiceEndpoint& e : p.graph.services()) {
        NodeView& n = node(p, e.node());
        (e.role() == ServiceEndpoint::SERVER ? n.serves : n.calls).push_back(e.service());
      }
    }
    std::vector<NodeView> out;
    for (auto& [key, n] : nodes) {
      for (auto* list : {&n.writes, &n.reads, &n.serves, &n.calls}) {
        std::sort(list->begin(), list->end());
        list->erase(std::unique(list->begin(), list->end()), list->end());
      }
      out.push_back(std::move(n));
    }
    return out;
  }

  std::vector<ServiceView> Services() {
    const std::vector<ProcessView> processes = Processes();
    std::map<std::string, ServiceView> services;
    std::map<std::string, const ProcessView*> typed_by;
    for (const ProcessView& p : processes) {
      for (const ServiceEndpoint& e : p.graph.services()) {
        ServiceView& s = services[e.service()];
        s.name = e.service();
        const std::string who = absl::StrCat(e.node(), " in ", p.label);
        (e.role() == ServiceEndpoint::SERVER ? s.servers : s.clients).push_back(who);
        if (s.request_type.empty() || e.role() == ServiceEndpoint::SERVER) {
          if (!e.request_type().empty()) {
            s.request_type = e.request_type();
            s.response_type = e.response_type();
            typed_by[e.service()] = &p;
          }
        }
      }
    }
    std::vector<ServiceView> out;
    for (auto& [name, s] : services) {
      auto it = typed_by.find(name);
      if (it != typed_by.end()) {
        absl::StatusOr<const pb::Descriptor*> req = TypeIn(it->second->graph, s.request_type);
        absl::StatusOr<const pb::Descriptor*> resp = TypeIn(it->second->graph, s.response_type);
        if (req.ok()) s.request_descriptor = *req;
        if (resp.ok()) s.response_descriptor = *resp;
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  absl::StatusOr<const pb::Descriptor*> FindType(const std::string& type_name) {
    for (const ProcessView& p : Processes()) {
      if (p.graph.descriptors().count(type_name) > 0) return TypeIn(p.graph, type_name);
    }
    return absl::NotFoundError(absl::StrCat("message type ", type_name,
                                            ": no process of ", DomainDescription(),
                                            " announced its descriptor"));
  }

  absl::StatusOr<std::unique_ptr<pb::Message>> NewMessage(const std::string& type_name) {
    absl::StatusOr<const pb::Descriptor*> type = FindType(type_name);
    if (!type.ok()) return type.status();
    const pb::Message* prototype = library_.Prototype(*type);
    if (prototype == nullptr) return absl::InternalError(absl::StrCat("no prototype of ", type_name));
    return std::unique_ptr<pb::Message>(prototype->New());
  }

  std::string DomainDescription() const {
    return absl::StrCat("domain ", options_.transport.domain_id,
                        options_.domain_source.empty() ? "" : absl::StrCat(" (", options_.domain_source, ")"));
  }

  // --- calls -----------------------------------------------------------------
  absl::StatusOr<std::string> Call(const std::string& service, absl::string_view request,
                                   absl::Duration timeout) {
    absl::StatusOr<ServiceView> view = Service(service);
    if (!view.ok()) return view.status();
    if (view->servers.empty()) {
      return absl::NotFoundError(absl::StrCat("service \"", service, "\": no process of ",
                                              DomainDescription(), " serves it (clients: ",
                                              absl::StrJoin(view->clients, ", "), ")"));
    }
    if (view->request_type.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "service \"", service, "\": its server announced no protobuf request type"));
    }
    const SteadyTime deadline = SteadyAfter(timeout);
    struct Outcome {
      Mutex mu;
      CondVar done;
      std::optional<absl::StatusOr<std::string>> result ABSL_GUARDED_BY(mu);
    };
    auto outcome = std::make_shared<Outcome>();
    const uint64_t client = std::random_device{}() * 4294967296ull + std::random_device{}();
    constexpr uint64_t kSequence = 1;  // one request per Call
    RemoteEndpoint responses;
    responses.channel = transport_internal::ResponseChannel(service);
    responses.type_name = view->response_type;
    responses.qos = transport_internal::ResponseQos();
    responses.node = options_.transport.process_name;
    absl::StatusOr<std::unique_ptr<RemoteSubscription>> sub = transport_->Subscribe(
        responses, [outcome, client](const RemoteSample& s) {
          if (s.correlation.client != client || s.correlation.sequence != kSequence) return true;
          {
            MutexLock lock(&outcome->mu);
            if (outcome->result.has_value()) return true;
            if (s.correlation.kind == Correlation::Kind::kFailure) {
              outcome->result = absl::Status(static_cast<absl::StatusCode>(s.correlation.status),
                                             std::string(s.payload));
            } else {
              outcome->result = std::string(s.payload);
            }
          }
          outcome->done.SignalAll();
          return true;
        });
    if (!sub.ok()) return sub.status();
    RemoteEndpoint requests = responses;
    requests.channel = transport_internal::RequestChannel(service);
    requests.type_name = view->request_type;
    requests.qos = transport_internal::RequestQos();
    absl::StatusOr<std::shared_ptr<RemotePublisher>> out = transport_->Publisher(requests);
    if (!out.ok()) return out.status();
    // A request sent before the server's reader matched would be lost
    // (requests are volatile): wait for the match, within the timeout.
    while (!(*out)->Wanted()) {
      if (Steady() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "service \"", service, "\": the server's reader did not match within ",
            absl::FormatDuration(timeout)));
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    Correlation c;
    c.kind = Correlation::Kind::kRequest;
    c.client = client;
    c.sequence = kSequence;
    c.budget_ns = std::max<int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Steady()).count(), 1);
    if (absl::Status s = (*out)->Publish(request, c); !s.ok()) return s;
    MutexLock lock(&outcome->mu);
    while (!outcome->result.has_value() && outcome->done.WaitUntil(&outcome->mu, deadline)) {
    }
    if (!outcome->result.has_value()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "service \"", service, "\": no response within ", absl::FormatDuration(timeout)));
    }
    return *outcome->result;
  }

  absl::StatusOr<ServiceView> Service(const std::string& name) {
    return FindNamed("service", name, Services());
  }

  // The view of `all` named `name`; NotFound naming the `kind`, the domain
  // searched and the closest names, or why the domain may be empty.
  template <typename View>
  absl::StatusOr<View> FindNamed(const char* kind, const std::string& name,
                                 std::vector<View> all) const {
    std::vector<std::string> names;
    for (View& v : all) {
      if (v.name == name) return std::move(v);
      names.push_back(v.name);
    }
    return absl::NotFoundError(absl::StrCat(kind, " \"", name, "\" not found in ",
                                            DomainDescription(), Suggest(name, names),
                                            names.empty() ? absl::StrCat("; ", WhyEmpty()) : ""));
  }

  std::string WhyEmpty() const {
    return absl::StrCat(
        "no process announced itself in ", DomainDescription(),
        ": processes are seen when they run with the same CYBER_DOMAIN_ID (mainboard and "
        "programs calling cyber::Init announce themselves; --in_process_only ones never "
        "do), on this host or on CYBER_IP's network, and a process killed within the last ",
        absl::FormatDuration(options_.transport.lease), " may still be listed");
  }

  const DomainGraphOptions options_;
  const std::shared_ptr<dds::DdsTransport> transport_;
  DescriptorLibrary library_;

  struct Entry {
    std::optional<ProcessGraph> graph;
    std::optional<ProcessStatus> status;
  };
  mutable Mutex mu_;
  CondVar changed_cv_;  // signalled with mu_ released after every change
  std::map<std::string, Entry> processes_ ABSL_GUARDED_BY(mu_);
  // Processes gone (their late samples are ignored): the last kLostKept.
  static constexpr size_t kLostKept = 4096;
  std::set<std::string> lost_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> lost_order_ ABSL_GUARDED_BY(mu_);
  uint64_t changes_ ABSL_GUARDED_BY(mu_) = 0;
  SteadyTime last_change_ ABSL_GUARDED_BY(mu_);
  SteadyTime joined_ ABSL_GUARDED_BY(mu_);

  Mutex listeners_mu_;
  std::map<uint64_t, std::function<void()>> listeners_ ABSL_GUARDED_BY(listeners_mu_);
  uint64_t next_listener_ ABSL_GUARDED_BY(listeners_mu_) = 0;

  uint64_t lost_listener_ = 0;
  std::unique_ptr<RemoteSubscription> graph_sub_;
  std::unique_ptr<RemoteSubscription> status_sub_;
};

absl::StatusOr<std::unique_ptr<DomainGraph>> DomainGraph::Join(DomainGraphOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  if (absl::Status s = impl->Start(); !s.ok()) {
    impl->Leave();
    return absl::UnavailableError(absl::StrCat("joining ", impl->DomainDescription(), ": ",
                                               s.message()));
  }
  return std::unique_ptr<DomainGraph>(new DomainGraph(std::move(impl)));
}

DomainGraph::DomainGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DomainGraph::~DomainGraph() { Leave(); }

void DomainGraph::WaitForDiscovery(absl::Duration settle, absl::Duration max,
                                   absl::Duration at_least) {
  impl_->WaitForDiscovery(settle, max, at_least);
}

bool DomainGraph::WaitUntil(const std::function<bool(const DomainGraph&)>& predicate,
                            absl::Duration timeout) {
  return impl_->WaitUntil(predicate, *this, timeout);
}

std::vector<ProcessView> DomainGraph::Processes() const { return impl_->Processes(); }
std::vector<ChannelView> DomainGraph::Channels() const { return impl_->Channels(); }

absl::StatusOr<ChannelView> DomainGraph::Channel(const std::string& name) const {
  return impl_->FindNamed("channel", name, impl_->Channels());
}

std::vector<NodeView> DomainGraph::Nodes() const { return impl_->Nodes(); }

absl::StatusOr<NodeView> DomainGraph::Node(const std::string& name) const {
  return impl_->FindNamed("node", name, impl_->Nodes());
}

std::vector<ServiceView> DomainGraph::Services() const { return impl_->Services(); }
absl::StatusOr<ServiceView> DomainGraph::Service(const std::string& name) const {
  return impl_->Service(name);
}

absl::StatusOr<const pb::Descriptor*> DomainGraph::FindType(const std::string& type_name) const {
  return impl_->FindType(type_name);
}

absl::StatusOr<std::unique_ptr<pb::Message>> DomainGraph::NewMessage(
    const std::string& type_name) const {
  return impl_->NewMessage(type_name);
}

absl::StatusOr<std::unique_ptr<pb::Message>> DomainGraph::Decode(const std::string& type_name,
                                                                 absl::string_view payload) const {
  absl::StatusOr<std::unique_ptr<pb::Message>> m = impl_->NewMessage(type_name);
  if (!m.ok()) return m.status();
  if (!(*m)->ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::InvalidArgumentError(absl::StrCat("a message of ", payload.size(),
                                                   " bytes does not parse as ", type_name));
  }
  return m;
}

absl::StatusOr<std::string> DomainGraph::Encode(const std::string& type_name,
                                                const std::string& text) const {
  absl::StatusOr<std::unique_ptr<pb::Message>> m = impl_->NewMessage(type_name);
  if (!m.ok()) return m.status();
  pb::TextFormat::Parser parser;
  TextErrors errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, m->get())) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a ", type_name, " in text format: ", errors.first()));
  }
  std::string bytes;
  if (!(*m)->SerializeToString(&bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", text, "\" leaves required fields of ", type_name, " unset: ",
        (*m)->InitializationErrorString()));
  }
  return bytes;
}

std::optional<ChannelQos> ReaderQosFor(const ChannelView& channel) {
  bool any = false, reliable = true, transient = true;
  uint32_t depth = 16;
  for (const ChannelEndpointView& w : channel.writers) {
    if (!w.qos.has_value() || w.type_name != channel.type_name) continue;
    any = true;
    reliable &= w.qos->reliability == ChannelQos::Reliability::kReliable;
    transient &= w.qos->durability == ChannelQos::Durability::kTransientLocal;
    depth = std::max(depth, w.qos->depth);
  }
  if (!any) return std::nullopt;
  ChannelQos q;
  q.reliability = reliable ? ChannelQos::Reliability::kReliable : ChannelQos::Reliability::kBestEffort;
  q.durability = transient ? ChannelQos::Durability::kTransientLocal : ChannelQos::Durability::kVolatile;
  q.depth = depth;
  return q;
}

std::vector<std::string> DataSharingBoundMismatches(const ChannelView& channel) {
  std::vector<AnnouncedEndpoint> endpoints;
  auto add = [&endpoints](const std::vector<ChannelEndpointView>& ends, bool writer) {
    for (const ChannelEndpointView& e : ends) {
      if (!e.qos.has_value()) continue;
      endpoints.push_back({e.process_label, e.node, e.type_name, writer,
                           e.qos->data_sharing_max_bytes});
    }
  };
  add(channel.writers, /*writer=*/true);
  add(channel.readers, /*writer=*/false);
  return DataSharingBoundMismatchesAmong(channel.name, endpoints);
}

absl::StatusOr<std::unique_ptr<RemoteSubscription>> DomainGraph::Subscribe(
    const std::string& channel, std::function<void(const Received&)> handler) {
  absl::StatusOr<ChannelView> view = Channel(channel);
  if (!view.ok()) return view.status();
  RemoteEndpoint e;
  e.channel = channel;
  e.type_name = view->type_name;
  e.node = impl_->options_.transport.process_name;
  std::optional<ChannelQos> qos = ReaderQosFor(*view);
  if (!qos.has_value()) {
    return absl::NotFoundError(absl::StrCat("channel \"", channel, "\" has no writer in another process of ",
                                            impl_->DomainDescription(),
                                            " (a channel of another C++ type never leaves its process)"));
  }
  e.qos = *qos;
  const std::string type_name = view->type_name;
  return impl_->transport_->Subscribe(e, [handler = std::move(handler), type_name](const RemoteSample& s) {
    Received r;
    r.payload = s.payload;
    r.receive_time = SteadyNow();
    r.type_name = type_name;
    if (s.origin.sender != nullptr) {
      r.writer = ProcessLabel(s.origin.sender->process, s.origin.sender->host, s.origin.sender->pid);
    }
    r.writer_guid.reserve(2 * s.origin.writer_guid.size());
    for (uint8_t b : s.origin.writer_guid) absl::StrAppend(&r.writer_guid, absl::Hex(b, absl::kZeroPad2));
    r.sequence = s.origin.sequence;
    if (s.origin.source_time_ns > 0) r.send_time = absl::FromUnixNanos(s.origin.source_time_ns);
    handler(r);
    return true;
  });
}

absl::StatusOr<std::shared_ptr<RemotePublisher>> DomainGraph::Publisher(const std::string& channel,
                                                                        const std::string& type_name,
                                                                        const ChannelQos& qos) {
  RemoteEndpoint e;
  e.channel = channel;
  e.type_name = type_name;
  e.qos = qos;
  e.node = impl_->options_.transport.process_name;
  return impl_->transport_->Publisher(e);
}

absl::StatusOr<std::string> DomainGraph::Call(const std::string& service, absl::string_view request,
                                              absl::Duration timeout) {
  return impl_->Call(service, request, timeout);
}

uint64_t DomainGraph::AddListener(std::function<void()> changed) {
  MutexLock lock(&impl_->listeners_mu_);
  const uint64_t id = ++impl_->next_listener_;
  impl_->listeners_.emplace(id, std::move(changed));
  return id;
}

void DomainGraph::RemoveListener(uint64_t id) {
  MutexLock lock(&impl_->listeners_mu_);
  impl_->listeners_.erase(id);
}

std::string DomainGraph::DomainDescription() const { return impl_->DomainDescription(); }
std::string DomainGraph::WhyEmpty() const { return impl_->WhyEmpty(); }
RemoteTransport& DomainGraph::transport() { return *impl_->transport_; }
void DomainGraph::Leave() { impl_->Leave(); }

}  // namespace graph
}  // namespace cyber
