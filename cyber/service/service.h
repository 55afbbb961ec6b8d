// Service<Req, Resp>: the server side of a request/response pair, as Cyber
// RT's: a callback that turns each request into a response; or, when the
// answer comes later, a callback that keeps a responder.
//
//   // Cyber RT's form: fill (or replace) the response before returning.
//   auto service = node.CreateService<RouteRequest, RouteResponse>(
//       "/planning/route",
//       [](const std::shared_ptr<RouteRequest>& req,
//          std::shared_ptr<RouteResponse>& resp) { resp->set_km(Plan(*req)); });
//
//   // Deferred: answer from any routine, timer or thread, exactly once.
//   ServiceOptions options;
//   options.concurrency = 4;   // up to 4 callbacks side by side
//   options.queue_depth = 8;   // at most 8 waiting; the 9th is refused
//   auto lookup = node.CreateDeferredService<LookupRequest, LookupResponse>(
//       "/map/lookup",
//       [](const std::shared_ptr<const LookupRequest>& req,
//          ServiceResponder<LookupResponse> responder) {
//         // responder.deadline(): when the client stops waiting.
//         StartLookup(*req, [responder](LookupResponse r) { responder.Send(r); });
//       },
//       options);
//
// The Cyber RT form gets a fresh default Resp to fill (it may also replace
// it). The request must be treated as read-only: from a client of this
// process it is the client's own object (Cyber RT's signature passes it
// non-const).
//
// Where callbacks run: as scheduler routines on the node's route (its conf
// entry's priority and group), never on the caller's thread nor on a
// transport thread. Requests are taken in arrival order; with
// ServiceOptions::concurrency 1 (the default, as Cyber RT) one callback
// runs at a time, with N up to N run side by side, each in its own
// routine (the callback must then be safe to run concurrently with
// itself). A callback may do anything a reader callback may (reader.h),
// including suspending (SleepFor) and calling other services; requests
// that arrive meanwhile wait their turn. One busy lane yields its
// processor every kRequestsPerSlice requests.
//
// Deferred answers (CreateDeferredService): the callback gets a
// ServiceResponder, a cheap copyable handle. Its first Send() or Fail(),
// from anywhere, answers the client; later ones return FAILED_PRECONDITION
// (counted in double_answers), and so does one after the service shut
// down (the client was already told). When the last copy is destroyed
// unanswered, the client gets INTERNAL ("dropped without an answer",
// counted as abandoned), never silence. The callback's own return ends
// nothing: the concurrency limit counts running callbacks, not answers
// still to come.
//
// The client's deadline travels with the request: from a client of this
// process as its timeout, from another process as the time the client
// still waits when it sent the request (the processes' clocks differ, so
// the server's deadline is later than the client's by the transit time).
// The server takes it as an instant on its runtime's clock
// (ServiceResponder::deadline()). A request whose client has stopped
// waiting when its turn comes is not served: counted
// (skipped_past_deadline), answered DEADLINE_EXCEEDED to a client of this
// process, nothing sent to another. A client of this process stops waiting
// when its call ends (its timeout fires on the tick at or after the
// deadline, or it is cancelled); for one in another process, when the
// deadline has passed on the service's clock. A request without a deadline
// (the client's timeout is infinite, or an old peer's frame) is served
// unless its client of this process was cancelled.
//
// The queue is bounded (ServiceOptions::queue_depth requests waiting, not
// counting those being served). When it is full, ServiceOptions::when_full
// says which request is refused: the new one (kRefuseNewest, the
// default) or the oldest waiting (kDropOldest, for services where only
// the newest question matters). The refused request's client is told at
// once: RESOURCE_EXHAUSTED naming the service and the depth; the server
// counts refused_full or dropped_oldest, the client counts refused.
//
// Who it serves:
//  * Clients of this process (the same ChannelBus): the request and the
//    response are handed over as shared pointers, nothing is serialized.
//  * Clients of other processes, when the bus has a RemoteTransport and Req
//    and Resp are protobuf messages (two channels per service and frames
//    paired by Correlation: service_common.h). A request that does not
//    parse is dropped and counted by the transport (it names the sender).
//
// Failures reach the client as themselves, in this process and in others
// (a failure frame carries the status code and message): a callback that
// throws or leaves the response null (INTERNAL, logged naming node and
// service, counted in callback_errors), a deferred Fail(status) (that
// status, counted in errors), an abandoned responder (INTERNAL), a full
// queue (RESOURCE_EXHAUSTED), a shutdown with the request queued or
// unanswered (UNAVAILABLE).
//
// Shutdown() (also its node's, and the destructor of the last handle) is
// synchronous, as Reader::Shutdown: the service leaves the registry (new
// calls from this process fail at once with UNAVAILABLE "no server"),
// stops reading requests from other processes, fails the requests still
// queued with UNAVAILABLE ("the server is gone"), waits for running
// callbacks (their responses are still sent), unless called from one of
// them (or, for the node's Shutdown(), they are other callbacks of the
// node shutting the node down at the same moment: node.h), and then fails
// the deferred requests still unanswered with UNAVAILABLE. A client in
// another process learns of a service that shut down only when the
// process leaves (peer lost) or by its timeout.
//
// Statistics (stats(), and mainboard's summary): see ServiceStats.
//
// Errors of CreateService (absl::Status, naming node and service):
// InvalidArgument for an empty name or callback, or options out of range
// (the field and its value); FailedPrecondition for a node shut down or a
// service already used with other types (both pairs named); AlreadyExists
// when the service already has a server in this process (its node named);
// the transport's errors between processes.
//
// Threads: every method is thread-safe; a responder may be used from any
// thread. The node's scheduler must outlive the service's Shutdown().

#ifndef CYBER_SERVICE_SERVICE_H_
#define CYBER_SERVICE_SERVICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"
#include "cyber/time/instant.h"
#include "cyber/time/wait_list.h"
#include "cyber/transport/channel_bus.h"  // kCrossesProcesses
#include "cyber/transport/node_endpoint.h"
#include "cyber/transport/remote_transport.h"
#include "cyber/service/service_common.h"
#include "cyber/service/service_link.h"
#include "cyber/transport/serial_delivery.h"
#include "cyber/transport/service_registry.h"
#include "scheduler/scheduler.h"
#include "timer/latency_histogram.h"

namespace cyber {

class Node;

// How a service takes its requests (CreateService, CreateDeferredService).
struct ServiceOptions {
  // Callbacks run side by side, at most (1..kMaxConcurrency); 1: one at a
  // time, in arrival order, as Cyber RT.
  int concurrency = 1;
  // Requests waiting to be served, at most (1..kMaxQueueDepth), not
  // counting those being served.
  size_t queue_depth = 256;
  // Which request a full queue refuses (see the header comment).
  enum class WhenFull { kRefuseNewest, kDropOldest };
  WhenFull when_full = WhenFull::kRefuseNewest;

  static constexpr int kMaxConcurrency = 1024;
  static constexpr size_t kMaxQueueDepth = size_t{1} << 20;
};

template <typename Resp>
class ServiceResponder;

namespace transport_internal {

class ServiceCore;

// One request of a deferred service, from its callback to its answer: what
// a ServiceResponder holds (service.cc).
class PendingRequest {
 public:
  // One request: from this process (`reply` set) or another (the
  // client's id and the request's sequence). Small: it is moved through
  // the queue by value.
  struct Job {
    std::shared_ptr<const void> request;
    std::shared_ptr<ReplyTo> reply;
    uint64_t client = 0;
    uint64_t sequence = 0;
    // When the request arrived, on the service's clock, and how long its
    // client waits from then, in ns (0: no deadline).
    Instant arrived;
    int64_t budget_ns = 0;
    Instant deadline() const {
      return budget_ns <= 0 ? Instant::InfiniteFuture() : arrived + absl::Nanoseconds(budget_ns);
    }
  };

  PendingRequest(std::shared_ptr<ServiceCore> core, Job job);
  // Unanswered: the client gets INTERNAL (counted as abandoned).
  ~PendingRequest();
  PendingRequest(const PendingRequest&) = delete;
  PendingRequest& operator=(const PendingRequest&) = delete;

  // Answers the client, the first time only (see the header comment).
  absl::Status Answer(ServiceOutcome outcome);
  Instant deadline() const { return deadline_; }
  bool answered() const { return claimed_.load(std::memory_order_acquire); }
  // INTERNAL: "the server (node "n") <what>".
  absl::Status ServerError(absl::string_view what) const;

 private:
  friend class ServiceCore;

  // Whoever sets claimed_ first owns job_ and answers it.
  bool Claim() { return !claimed_.exchange(true, std::memory_order_acq_rel); }

  const std::shared_ptr<ServiceCore> core_;
  const Instant deadline_;
  std::atomic<bool> claimed_{false};
  Job job_;  // the claimer's
};

// The service itself, whatever its types (service.cc): the request queue
// and the routines that serve it (a SerialDelivery with one lane per
// concurrent callback), the link to other processes. Service<Req, Resp>
// is its typed handle.
class ServiceCore final : public InProcessServer,
                          public std::enable_shared_from_this<ServiceCore> {
 public:
  using Job = PendingRequest::Job;

  // Requests a lane serves before it yields its processor.
  static constexpr int kRequestsPerSlice = 32;

  // Runs the user's callback on one request (a std::shared_ptr<const Req>);
  // returns the response or why there is none. May throw: the core
  // catches.
  using Handler =
      std::function<ServiceOutcome(const std::shared_ptr<const void>& request)>;
  // The deferred form: the callback keeps `pending` to answer later.
  using DeferredHandler =
      std::function<void(const std::shared_ptr<const void>& request,
                         const std::shared_ptr<PendingRequest>& pending)>;

  // Exactly one of `handler` and `deferred` is set. REQUIRES: `options`
  // valid (CheckOptions).
  ServiceCore(const NodeContext& context, std::string service, Handler handler,
              DeferredHandler deferred, const ServiceOptions& options);
  ~ServiceCore() override;
  ServiceCore(const ServiceCore&) = delete;
  ServiceCore& operator=(const ServiceCore&) = delete;

  // InvalidArgument naming node, service, the field and its value.
  static absl::Status CheckOptions(const std::string& node, const std::string& service,
                                   const ServiceOptions& options);

  // Links the service to other processes (context.remote set; see
  // service_link.h): the response outlet, then the request inlet, which the
  // caller keeps (its handler holds this core). Errors name node and
  // service.
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> LinkRemote(
      const ServiceTypes& types);

  // InProcessServer
  const std::string& node_name() const override { return node_->name; }
  bool is_shut_down() const override;
  bool Submit(std::shared_ptr<const void> request, std::shared_ptr<ReplyTo> reply,
              const ServiceTiming& sent) override;

  const std::string& service_name() const { return service_; }
  ServiceStats stats() const override;
  // `peers` (null: none): running callbacks not waited for
  // (NodeEndpoint::ShutdownAmong).
  void Shutdown(const NodeEndpoint::ShutdownPeers* peers = nullptr);
  // NodeEndpoint's, for Node::Shutdown().
  bool RunsCallbackIn(const scheduler::CRoutine* routine) const {
    return requests_.RunsHandlerIn(routine);
  }
  void RecheckPeers() { requests_.RecheckWaiters(); }

 private:
  friend class PendingRequest;
  // How a request ended, for the statistics.
  enum class Ending {
    kResponse, kCallbackError, kError, kAbandoned, kSkipped, kRefusedFull,
    kDroppedOldest, kDroppedShutdown,
    kClosed  // queued at Shutdown: requests_ counts it (dropped_stopped)
  };

  // From the request inlet (a transport thread).
  bool OnRemoteSample(const RemoteSample& sample, DecodeFn decode);
  // Queues `job` (its `arrived` and `budget` set), or refuses it (answered
  // here); false once shut down.
  bool Enqueue(Job job);
  // A lane's handler: runs the callback on `job` and answers it (the
  // deferred form: hands it to the callback), also when the routine is
  // cancelled meanwhile.
  void Serve(Job* job);
  void ServeDeferred(Job* job);
  // Whether `job`'s client has stopped waiting: a client of this process
  // says so itself (its call ended: timed out, cancelled); for one in
  // another process, the deadline has passed on our clock.
  bool PastDeadline(const Job& job) const;
  // If PastDeadline(*job): answers it DEADLINE_EXCEEDED (counted skipped)
  // and returns true.
  bool SkippedPastDeadline(Job* job);
  // Runs user code `callback`: the failure's words if it threw (logged),
  // nullopt otherwise. RoutineCancelled and Boost's forced unwinding pass
  // through.
  std::optional<std::string> RunCallback(absl::FunctionRef<void()> callback);
  // Runs the handler; a throw or an error becomes INTERNAL (logged).
  ServiceOutcome Invoke(const Job& job);
  // UNAVAILABLE: the scheduler stopped the routine serving a request.
  absl::Status GoneWhileServing() const;
  // Counts `ending` and sends `outcome` where the job came from (nothing
  // to another process for kSkipped). Not under mu_.
  void Answer(Job* job, ServiceOutcome outcome, Ending ending);
  // A deferred request is answered, or its responder destroyed.
  void Forget(PendingRequest* pending);
  // The service's runtime clock (deadlines, latencies).
  Clock* clock() const;
  std::string Prefix() const;  // node "n": service "s", for its logs
  std::string Server() const;  // the server (node "n"), for its clients

  const std::shared_ptr<const NodeState> node_;
  const std::string service_;
  // Held for requests_, which runs on it (the process scheduler is owned).
  const std::shared_ptr<scheduler::Scheduler> scheduler_;
  const std::shared_ptr<ServiceRegistry> registry_;
  const std::shared_ptr<RemoteTransport> remote_;
  const Handler handler_;
  const DeferredHandler deferred_;
  const ServiceOptions options_;
  // The queued requests and the lanes that serve them.
  SerialDelivery<Job> requests_;

  // mu_ protects the following state.
  mutable Mutex mu_;
  // The response outlet and its encoder (set by LinkRemote, before any
  // request from another process can arrive).
  std::shared_ptr<RemotePublisher> outlet_ ABSL_GUARDED_BY(mu_);
  EncodeFn encode_response_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Deferred requests handed to the callback and not yet forgotten.
  absl::flat_hash_set<PendingRequest*> outstanding_ ABSL_GUARDED_BY(mu_);
  // Shutdown() has failed the outstanding requests: new ones fail at once.
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // The counts requests_ does not keep (see stats()).
  ServiceStats stats_ ABSL_GUARDED_BY(mu_);
  timer::LatencyHistogram latency_ ABSL_GUARDED_BY(mu_);
};

}  // namespace transport_internal

// A deferred service's hold on one request (see service.h's header
// comment): a cheap copyable handle; the request is answered by the first
// Send() or Fail() of any copy, or with INTERNAL when the last copy is
// destroyed unanswered.
template <typename Resp>
class ServiceResponder {
 public:
  // Answers nothing (valid() false).
  ServiceResponder() = default;

  // Answers with `response`; a null one answers INTERNAL. FAILED_PRECONDITION
  // (naming node and service) when the request was answered already, the
  // service shut down, or the responder is empty.
  absl::Status Send(std::shared_ptr<const Resp> response) const {
    if (pending_ == nullptr) return Empty();
    if (response == nullptr) {
      return pending_->Answer(pending_->ServerError("answered with a null response"));
    }
    return pending_->Answer(std::shared_ptr<const void>(std::move(response)));
  }
  absl::Status Send(Resp response) const {
    return Send(std::make_shared<const Resp>(std::move(response)));
  }
  // Answers with the server's error `error` (not OK: an OK status answers
  // INTERNAL). The client gets its code and message.
  absl::Status Fail(absl::Status error) const {
    if (pending_ == nullptr) return Empty();
    if (error.ok()) error = pending_->ServerError("failed the request with an OK status");
    return pending_->Answer(std::move(error));
  }
  // When the client stops waiting, on the service's runtime clock;
  // Instant::InfiniteFuture() when it waits forever.
  Instant deadline() const {
    return pending_ != nullptr ? pending_->deadline() : Instant::InfiniteFuture();
  }
  bool answered() const { return pending_ == nullptr || pending_->answered(); }
  bool valid() const { return pending_ != nullptr; }

 private:
  template <typename Req, typename R>
  friend class Service;

  explicit ServiceResponder(std::shared_ptr<transport_internal::PendingRequest> pending)
      : pending_(std::move(pending)) {}
  static absl::Status Empty() {
    return absl::FailedPreconditionError("an empty ServiceResponder answers nothing");
  }

  std::shared_ptr<transport_internal::PendingRequest> pending_;
};

template <typename Req, typename Resp>
class Service final : public transport_internal::NodeEndpoint {
 public:
  // Cyber RT's signature: fill (or replace) `response`.
  using Callback = std::function<void(const std::shared_ptr<Req>& request,
                                      std::shared_ptr<Resp>& response)>;
  // The deferred form: answer through `responder`, now or later.
  using DeferredCallback = std::function<void(const std::shared_ptr<const Req>& request,
                                              ServiceResponder<Resp> responder)>;

  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  ~Service() override { Shutdown(); }

  const std::string& service_name() const { return core_->service_name(); }
  const std::string& node_name() const { return core_->node_name(); }
  ServiceStats stats() const { return core_->stats(); }

  void Shutdown() override {
    core_->Shutdown();
    inlet_.Close();
  }
  bool is_shut_down() const override { return core_->is_shut_down(); }

 private:
  friend class Node;

  // transport_internal::NodeEndpoint, for Node::Shutdown().
  bool RunsCallbackIn(const scheduler::CRoutine* routine) const override {
    return core_->RunsCallbackIn(routine);
  }
  void ShutdownAmong(const ShutdownPeers& peers) override {
    core_->Shutdown(&peers);
    inlet_.Close();
  }
  void RecheckPeers() override { core_->RecheckPeers(); }

  explicit Service(std::shared_ptr<transport_internal::ServiceCore> core)
      : core_(std::move(core)) {}

  // What Node::TryCreateService and TryCreateDeferredService make.
  static absl::StatusOr<std::shared_ptr<Service>> Create(
      const transport_internal::NodeContext& context, const std::string& name,
      Callback callback, const ServiceOptions& options);
  static absl::StatusOr<std::shared_ptr<Service>> CreateDeferred(
      const transport_internal::NodeContext& context, const std::string& name,
      DeferredCallback callback, const ServiceOptions& options);
  static absl::StatusOr<std::shared_ptr<Service>> Make(
      const transport_internal::NodeContext& context, const std::string& name,
      bool has_callback, const ServiceOptions& options,
      transport_internal::ServiceCore::Handler handler,
      transport_internal::ServiceCore::DeferredHandler deferred);

  const std::shared_ptr<transport_internal::ServiceCore> core_;
  // The request inlet from other processes (none: in-process only).
  transport_internal::RemoteInlet inlet_;
};

// --- implementation of the template ---------------------------------------

template <typename Req, typename Resp>
absl::StatusOr<std::shared_ptr<Service<Req, Resp>>> Service<Req, Resp>::Create(
    const transport_internal::NodeContext& context, const std::string& name,
    Callback callback, const ServiceOptions& options) {
  const bool has_callback = static_cast<bool>(callback);
  auto handler = [callback = std::move(callback)](
                     const std::shared_ptr<const void>& request)
      -> transport_internal::ServiceOutcome {
    // The registry guarantees the type; the request is read-only by contract
    // (Cyber RT's signature passes it non-const).
    std::shared_ptr<Req> typed =
        std::const_pointer_cast<Req>(std::static_pointer_cast<const Req>(request));
    std::shared_ptr<Resp> response = std::make_shared<Resp>();
    callback(typed, response);
    if (response == nullptr) {
      return absl::InternalError("the service callback left the response null");
    }
    return std::shared_ptr<const void>(std::move(response));
  };
  return Make(context, name, has_callback, options, std::move(handler), nullptr);
}

template <typename Req, typename Resp>
absl::StatusOr<std::shared_ptr<Service<Req, Resp>>> Service<Req, Resp>::CreateDeferred(
    const transport_internal::NodeContext& context, const std::string& name,
    DeferredCallback callback, const ServiceOptions& options) {
  const bool has_callback = static_cast<bool>(callback);
  auto deferred = [callback = std::move(callback)](
                      const std::shared_ptr<const void>& request,
                      const std::shared_ptr<transport_internal::PendingRequest>& pending) {
    callback(std::static_pointer_cast<const Req>(request), ServiceResponder<Resp>(pending));
  };
  return Make(context, name, has_callback, options, nullptr, std::move(deferred));
}

template <typename Req, typename Resp>
absl::StatusOr<std::shared_ptr<Service<Req, Resp>>> Service<Req, Resp>::Make(
    const transport_internal::NodeContext& context, const std::string& name,
    bool has_callback, const ServiceOptions& options,
    transport_internal::ServiceCore::Handler handler,
    transport_internal::ServiceCore::DeferredHandler deferred) {
  const std::string& node = context.node->name;
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node \"", node, "\": CreateService: service name is empty"));
  }
  if (!has_callback) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node \"", node, "\": CreateService \"", name, "\": callback is empty"));
  }
  absl::Status valid = transport_internal::ServiceCore::CheckOptions(node, name, options);
  if (!valid.ok()) return valid;
  if (context.node->shut_down.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node \"", node, "\": CreateService \"", name, "\": node is shut down"));
  }
  absl::Status used = context.registry->Use(
      node, name, typeid(Req), typeid(Resp), transport_internal::DescriptorOf<Req>(),
      transport_internal::DescriptorOf<Resp>());
  if (!used.ok()) return used;
  auto core = std::make_shared<transport_internal::ServiceCore>(
      context, name, std::move(handler), std::move(deferred), options);
  std::shared_ptr<Service> service(new Service(core));
  // In this process first: a second server is refused before it could
  // read requests from other processes.
  absl::Status registered = context.registry->Register(name, core);
  if (!registered.ok()) {
    service->Shutdown();
    return registered;
  }
  absl::Status linked = transport_internal::LinkToOtherProcesses<Req, Resp>(
      context, core.get(), &service->inlet_);
  if (!linked.ok()) {
    service->Shutdown();
    return linked;
  }
  return service;
}

}  // namespace cyber

#endif  // CYBER_SERVICE_SERVICE_H_
