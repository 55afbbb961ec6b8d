// Service<Req, Resp>: the server side of a request/response pair, as Cyber
// RT's: a callback that turns each request into a response.
//
//   auto service = node.CreateService<RouteRequest, RouteResponse>(
//       "/planning/route",
//       [](const std::shared_ptr<RouteRequest>& req,
//          std::shared_ptr<RouteResponse>& resp) { resp->set_km(Plan(*req)); });
//
// The callback gets a fresh default Resp to fill (it may also replace it).
// The request must be treated as read-only: from a client of this process
// it is the client's own object (Cyber RT's signature passes it non-const).
//
// Where it runs: as a scheduler routine on the node's route (its conf
// entry's priority and group), never on the caller's thread nor on a
// transport thread; never concurrently with itself, requests in arrival
// order (as Cyber RT, which serves one request at a time). It may do
// anything a reader callback may (reader.h), including suspending
// (SleepFor) and calling other services; a request that arrives meanwhile
// waits its turn. One busy service yields its processor every
// kRequestsPerSlice requests.
//
// Who it serves:
//  * Clients of this process (the same ChannelBus): the request and the
//    response are handed over as shared pointers, nothing is serialized.
//  * Clients of other processes, when the bus has a RemoteTransport and Req
//    and Resp are protobuf messages (two channels per service and frames
//    paired by Correlation: service_common.h). A request that does not
//    parse is dropped and counted by the transport (it names the sender).
//
// Failures of the callback: an exception is caught, logged (node, service)
// and counted (callback_errors), and so is a response left null. A client
// of this process is told (INTERNAL, with the reason); a client in another
// process cannot be (a frame carries no status): it times out.
//
// Shutdown() (also its node's, and the destructor of the last handle) is
// synchronous, as Reader::Shutdown: the service leaves the registry (new
// calls from this process fail at once with UNAVAILABLE "no server"),
// stops reading requests from other processes, fails the requests still
// queued of clients of this process with UNAVAILABLE ("the server is
// gone"), and waits for a running callback (its response is still sent),
// unless called from that callback (or, for the node's Shutdown(), the
// callback is another of the node's callbacks shutting the node down at
// the same moment: node.h). A client in another process learns of
// a service that shut down only when the process leaves (peer lost) or by
// its timeout.
//
// Errors of CreateService (absl::Status, naming node and service):
// InvalidArgument for an empty name or callback; FailedPrecondition for a
// node shut down or a service already used with other types (both pairs
// named); AlreadyExists when the service already has a server in this
// process (its node named); the transport's errors between processes.
//
// Threads: every method is thread-safe. The node's scheduler must outlive
// the service's Shutdown().

#ifndef CYBER_SERVICE_SERVICE_H_
#define CYBER_SERVICE_SERVICE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/mutex.h"
#include "cyber/time/wait_list.h"
#include "cyber/transport/channel_bus.h"  // kCrossesProcesses
#include "cyber/transport/node_endpoint.h"
#include "cyber/transport/remote_transport.h"
#include "cyber/service/service_common.h"
#include "cyber/service/service_link.h"
#include "cyber/transport/serial_delivery.h"
#include "cyber/transport/service_registry.h"
#include "scheduler/scheduler.h"

namespace cyber {

class Node;

struct ServiceStats {
  uint64_t requests = 0;         // received, from this process and others
  uint64_t remote_requests = 0;  // of those, from other processes
  uint64_t responses = 0;        // answered
  uint64_t callback_errors = 0;  // threw or left the response null
  uint64_t send_failures = 0;    // responses the transport did not send
  uint64_t dropped_shutdown = 0;   // queued at (or arriving after) Shutdown
  uint64_t dispatch_refusals = 0;  // routines the scheduler refused
  uint64_t ignored = 0;  // samples on the request channel that are no requests
  size_t pending = 0;    // queued now
  // Once idle: requests == responses + callback_errors + send_failures +
  // dropped_shutdown.
};

namespace transport_internal {

// The service itself, whatever its types (service.cc): the request queue
// and the routine that serves it (a SerialDelivery), the link to other
// processes. Service<Req, Resp> is its typed handle.
class ServiceCore final : public InProcessServer,
                          public std::enable_shared_from_this<ServiceCore> {
 public:
  // Requests a drain serves before it yields its processor.
  static constexpr int kRequestsPerSlice = 32;

  // Runs the user's callback on one request (a std::shared_ptr<const Req>);
  // returns the response or why there is none. May throw: the core
  // catches.
  using Handler =
      std::function<ServiceOutcome(const std::shared_ptr<const void>& request)>;

  ServiceCore(const NodeContext& context, std::string service, Handler handler);
  ~ServiceCore() override;
  ServiceCore(const ServiceCore&) = delete;
  ServiceCore& operator=(const ServiceCore&) = delete;

  // Links the service to other processes (context.remote set; see
  // service_link.h): the response outlet, then the request inlet, which the
  // caller keeps (its handler holds this core). Errors name node and
  // service.
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> LinkRemote(
      const ServiceTypes& types);

  // InProcessServer
  const std::string& node_name() const override { return node_->name; }
  bool is_shut_down() const override;
  bool Submit(std::shared_ptr<const void> request,
              std::shared_ptr<ReplyTo> reply) override;

  const std::string& service_name() const { return service_; }
  ServiceStats stats() const;
  // `peers` (null: none): running callbacks not waited for
  // (NodeEndpoint::ShutdownAmong).
  void Shutdown(const NodeEndpoint::ShutdownPeers* peers = nullptr);
  // NodeEndpoint's, for Node::Shutdown().
  bool RunsCallbackIn(const scheduler::CRoutine* routine) const {
    return requests_.RunsHandlerIn(routine);
  }
  void RecheckPeers() { requests_.RecheckWaiters(); }

 private:
  // One request: from this process (`reply` set) or another (`from`).
  struct Job {
    std::shared_ptr<const void> request;
    std::shared_ptr<ReplyTo> reply;
    Correlation from;
  };

  // From the request inlet (a transport thread).
  bool OnRemoteSample(const RemoteSample& sample, DecodeFn decode);
  bool Enqueue(Job job);
  // The serving routine's handler: runs the callback on `job` and answers
  // it, also when the routine is cancelled meanwhile.
  void Serve(Job* job);
  // Runs the handler; exceptions become INTERNAL (logged, counted).
  ServiceOutcome Invoke(const Job& job);
  // Sends `outcome` where the job came from. Not under mu_.
  void Answer(Job* job, ServiceOutcome outcome);
  std::string Prefix() const;  // node "n": service "s", for its logs
  std::string Server() const;  // the server (node "n"), for its clients

  const std::shared_ptr<const NodeState> node_;
  const std::string service_;
  // Held for requests_, which runs on it (the process scheduler is owned).
  const std::shared_ptr<scheduler::Scheduler> scheduler_;
  const std::shared_ptr<ServiceRegistry> registry_;
  const std::shared_ptr<RemoteTransport> remote_;
  const Handler handler_;
  // The queued requests and the routine that serves them, one at a time.
  SerialDelivery<Job> requests_;

  // mu_ protects the following state.
  mutable Mutex mu_;
  // The response outlet and its encoder (set by LinkRemote, before any
  // request from another process can arrive).
  std::shared_ptr<RemotePublisher> outlet_ ABSL_GUARDED_BY(mu_);
  EncodeFn encode_response_ ABSL_GUARDED_BY(mu_) = nullptr;
  // The counts requests_ does not keep (see stats()).
  ServiceStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace transport_internal

template <typename Req, typename Resp>
class Service final : public transport_internal::NodeEndpoint {
 public:
  // Cyber RT's signature: fill (or replace) `response`.
  using Callback = std::function<void(const std::shared_ptr<Req>& request,
                                      std::shared_ptr<Resp>& response)>;

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

  // What Node::TryCreateService makes.
  static absl::StatusOr<std::shared_ptr<Service>> Create(
      const transport_internal::NodeContext& context, const std::string& name,
      Callback callback);

  const std::shared_ptr<transport_internal::ServiceCore> core_;
  // The request inlet from other processes (none: in-process only).
  transport_internal::RemoteInlet inlet_;
};

// --- implementation of the template ---------------------------------------

template <typename Req, typename Resp>
absl::StatusOr<std::shared_ptr<Service<Req, Resp>>> Service<Req, Resp>::Create(
    const transport_internal::NodeContext& context, const std::string& name,
    Callback callback) {
  const std::string& node = context.node->name;
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node \"", node, "\": CreateService: service name is empty"));
  }
  if (!callback) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node \"", node, "\": CreateService \"", name, "\": callback is empty"));
  }
  if (context.node->shut_down.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node \"", node, "\": CreateService \"", name, "\": node is shut down"));
  }
  absl::Status used = context.registry->Use(node, name, typeid(Req), typeid(Resp));
  if (!used.ok()) return used;
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
  auto core = std::make_shared<transport_internal::ServiceCore>(
      context, name, std::move(handler));
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
