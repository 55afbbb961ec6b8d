#include "cyber/graph/graph_announcer.h"

#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
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

ChannelQos StatusQos() {
  ChannelQos qos = ChannelQos::SensorData();
  qos.depth = 1;
  return qos;
}

}  // namespace

class GraphAnnouncer::Impl {
 public:
  Impl(std::shared_ptr<RemoteTransport> transport, GraphFn graph, StatusFn status,
       Options options, std::shared_ptr<RemotePublisher> graph_out,
       std::shared_ptr<RemotePublisher> status_out)
      : transport_(std::move(transport)),
        graph_fn_(std::move(graph)),
        status_fn_(std::move(status)),
        options_(options),
        self_(transport_->self()),
        graph_out_(std::move(graph_out)),
        status_out_(std::move(status_out)),
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
      SendGraphIfChanged();
      const auto now = std::chrono::steady_clock::now();
      if (status_fn_ != nullptr && now >= next_status) {
        SendStatus();
        next_status = now + absl::ToChronoNanoseconds(options_.status_period);
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
    graph.clear_generation();
    std::string bytes = DeterministicBytes(graph);
    if (bytes == last_graph_) return;
    uint64_t generation;
    {
      MutexLock lock(&mu_);
      generation = generation_ + 1;
    }
    graph.set_generation(generation);
    absl::Status sent = graph_out_->PublishMessage(graph);
    if (!sent.ok()) {
      AWARN << "graph announcer: the graph of " << self_.ToString() << " was not sent on "
            << kGraphTopic << ": " << sent.message();
      return;  // tried again at the next poll
    }
    last_graph_ = std::move(bytes);
    MutexLock lock(&mu_);
    generation_ = generation;
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
  const std::shared_ptr<RemotePublisher> graph_out_;
  const std::shared_ptr<RemotePublisher> status_out_;
  const std::chrono::steady_clock::time_point started_;

  // Only the announcer's thread touches these.
  std::string last_graph_;
  uint64_t status_sequence_ = 0;
  bool status_failure_logged_ = false;

  mutable Mutex mu_;
  CondVar wake_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
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
  RemoteEndpoint graph_endpoint;
  graph_endpoint.channel = kGraphTopic;
  graph_endpoint.type_name = ProcessGraph::descriptor()->full_name();
  graph_endpoint.qos = GraphQos();
  graph_endpoint.node = "graph_announcer";
  absl::StatusOr<std::shared_ptr<RemotePublisher>> graph_out =
      transport->Publisher(graph_endpoint);
  if (!graph_out.ok()) return graph_out.status();
  std::shared_ptr<RemotePublisher> status_out;
  if (status != nullptr) {
    RemoteEndpoint status_endpoint = graph_endpoint;
    status_endpoint.channel = kStatusTopic;
    status_endpoint.type_name = ProcessStatus::descriptor()->full_name();
    status_endpoint.qos = StatusQos();
    absl::StatusOr<std::shared_ptr<RemotePublisher>> out =
        transport->Publisher(status_endpoint);
    if (!out.ok()) return out.status();
    status_out = *std::move(out);
  }
  if (options.status_period == absl::InfiniteDuration()) status = nullptr;
  return std::unique_ptr<GraphAnnouncer>(new GraphAnnouncer(std::make_unique<Impl>(
      std::move(transport), std::move(graph), std::move(status), options,
      *std::move(graph_out), std::move(status_out))));
}

GraphAnnouncer::GraphAnnouncer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GraphAnnouncer::~GraphAnnouncer() = default;
void GraphAnnouncer::Poke() { impl_->Poke(); }
uint64_t GraphAnnouncer::generation() const { return impl_->generation(); }

}  // namespace graph
}  // namespace cyber
