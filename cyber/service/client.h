// Client<Req, Resp>: the calling side of a service (service.h), as Cyber
// RT's, with a timeout per request and exactly one outcome per request.
//
//   auto client = node.CreateClient<RouteRequest, RouteResponse>("/planning/route");
//   if (!client->WaitForService(absl::Seconds(1))) ...
//   // Cyber RT's spelling: nullptr on timeout or failure (logged).
//   std::shared_ptr<RouteResponse> r = client->SendRequest(req, absl::Milliseconds(200));
//   // The reason travels with the result:
//   absl::StatusOr<std::shared_ptr<const RouteResponse>> s = client->Call(req, timeout);
//   // Without waiting: a future, or a callback that runs as a routine.
//   auto f = client->AsyncSendRequest(req, timeout);
//   client->AsyncCall(req, timeout, [](absl::StatusOr<std::shared_ptr<const RouteResponse>> r) {});
//
// Exactly one outcome per request. Each request is a pending call with its
// own lock; whoever comes first decides its outcome under that lock and the
// others find it decided: the response; the timeout (DEADLINE_EXCEEDED);
// the server going away (UNAVAILABLE); a shutdown (CANCELLED). A response
// that comes after its call was decided is dropped and counted
// (late_responses).
//
// The timeout: the pending call is itself an entry of the timing wheel
// that the node's routines sleep on (its runtime's: that runtime's clock,
// simulated time for a simulated graph), armed for the first tick at or
// after now + timeout, as a oneshot Timer's deadline. When it expires the
// tick thread hands the decision to a routine on the node's route (never
// deciding under the wheel's lock, never before the deadline); a decided
// call leaves the wheel (a cancel, which decides nothing).
//
// Why a lock per call rather than a cancel's verdict: four parties race (a
// transport thread or the server's routine with the response, the
// timeout's routine, a peer-lost listener, a shutdown on any thread), and
// only the decider may wake the caller or run its callback; one small
// lock each needs no order among them. The cost per call: one pending-call
// record (its wheel entry inside), a slot in the pending calls' table; no
// allocation to arm or cancel the timeout.
//
// Outcomes (absl::Status, each naming node, service and the value):
//   OK                 the response;
//   DEADLINE_EXCEEDED  no response within the timeout (a timeout <= 0
//                      sends nothing); InfiniteDuration never times out;
//                      the timeout travels with the request as its
//                      deadline (service.h): the server skips the request
//                      if its turn comes after it, and may say so first;
//   UNAVAILABLE        at once when no server exists: none in this process
//                      (same ChannelBus), none matched in another
//                      (WaitForService waits for one); the message then
//                      suggests the service of this process nearest the
//                      name, if it looks like a typo of one ("did you
//                      mean "/planning/route"?"); later, when the
//                      server goes away with the request pending: shut
//                      down in this process, or its process lost (left, or
//                      declared dead after the transport's lease) with no
//                      other process serving; or the request could not be
//                      sent;
//   CANCELLED          this client (its node) shut down with the call
//                      pending; a blocked thread whose node's scheduler
//                      shuts down;
//   RESOURCE_EXHAUSTED the server's queue was full: at once, naming the
//                      service's server and its depth (counted refused);
//   INTERNAL           the server's callback threw or left the response
//                      null, or a deferred server dropped the request
//                      unanswered; any other error a deferred server
//                      answers with (ServiceResponder::Fail) arrives as
//                      itself, from this process or another;
//   DATA_LOSS          a response from another process did not parse;
//   FAILED_PRECONDITION a call on a client that is shut down; a blocking
//                      Call/SendRequest on the thread that moves the node's
//                      simulated clock (a component's Init() in a
//                      SimulatedGraph or cyber_graph_test): neither the
//                      response nor the timeout could ever come, so it is
//                      refused at once (and logged) instead of hanging;
//                      use AsyncCall there, or call from a routine (Proc,
//                      a timer, a reader, a task);
//   INVALID_ARGUMENT   a null request.
//
// Where callers wait. Call/SendRequest from a scheduler routine park it
// (its processor runs other routines meanwhile: the server, if it shares
// the processor); the wait is a cancellation point (a stopping scheduler
// unwinds it with RoutineCancelled, the call counted CANCELLED). It has a
// wake-up of its own (CRoutine::PrivateWait): a notification for the
// routine (Scheduler::NotifyTask) that comes meanwhile does not end the
// call and stays pending for the routine's next WaitForData. From a
// plain thread they block. The futures of AsyncSendRequest/AsyncCall
// block whoever calls get(): from a routine, prefer the callback form.
// The callback of AsyncCall runs as a routine on the node's route, never
// under a lock, once, with the outcome; the callbacks of one client run one
// at a time, in the order their calls were decided (as a reader's).
//
// Shutdown() (also its node's, and the destructor of the last handle):
// every pending call ends CANCELLED (a blocked caller returns it, a future
// gets it), callbacks not yet started are dropped (callbacks_dropped), a
// running callback is waited for (parking a routine, blocking a thread),
// unless Shutdown() is called from it (the callbacks of one client never
// run at once, so two of them are never both inside it), or, for the
// node's Shutdown(), it is another of the node's callbacks shutting the
// node down at the same moment (node.h); then nothing of this client runs
// any more. A runtime shut down before the node: blocked routines are
// cancelled, blocked threads get CANCELLED, asynchronous calls stay
// pending until the client shuts down.
//
// Between processes (protobuf Req and Resp, a RemoteTransport on the bus):
// requests and responses travel on "<service>/request" and
// "<service>/response" paired by Correlation (service_common.h); a server
// of this process is always preferred. WaitForService/ServiceIsReady: a
// server in this process, or one in another that reads our requests and
// writes responses.
//
// Threads: every method is thread-safe. The node's scheduler must outlive
// the client's Shutdown().

#ifndef CYBER_SERVICE_CLIENT_H_
#define CYBER_SERVICE_CLIENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
#include "cyber/time/wait_list.h"
#include "cyber/time/clock.h"
#include "cyber/transport/channel_bus.h"  // kCrossesProcesses
#include "cyber/transport/node_endpoint.h"
#include "cyber/transport/remote_transport.h"
#include "cyber/service/service_common.h"
#include "cyber/service/service_link.h"
#include "cyber/transport/serial_delivery.h"
#include "cyber/transport/service_registry.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/latency_histogram.h"
#include "timer/timer_system_core.h"

namespace cyber {

class Node;

namespace transport_internal {

class PendingCall;  // client.cc: one request in flight

// The client itself, whatever its types (client.cc): pending calls, their
// timeouts and waits, the link to other processes. Client<Req, Resp> is
// its typed handle.
class ClientCore final : public InProcessClient,
                         public std::enable_shared_from_this<ClientCore> {
 public:
  // Where the outcome of a call nobody waits for goes.
  using Deliver = std::function<void(ServiceOutcome)>;
  // How a call was decided (for the statistics).
  enum class Source {
    kResponse, kTimeout, kServerGone, kNoServer, kRefused, kCancelled, kFailed
  };
  // How the server's error `code` counts.
  static Source SourceOf(absl::StatusCode code);

  ClientCore(const NodeContext& context, std::string service);
  ~ClientCore();
  ClientCore(const ClientCore&) = delete;
  ClientCore& operator=(const ClientCore&) = delete;

  // Links the client to servers in other processes (context.remote set;
  // see service_link.h): a peer-lost listener, the request outlet, and the
  // response inlet, which the caller keeps (its handler holds this core).
  // Errors name node and service.
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> LinkRemote(
      const ServiceTypes& types);

  // Sends `request` (a std::shared_ptr<const Req>) and waits for the
  // outcome: a routine parks, a thread blocks (see the header comment).
  ServiceOutcome Call(std::shared_ptr<const void> request,
                      absl::Duration timeout);
  // Sends `request`; `deliver` gets the outcome once: `as_routine`, in a
  // routine on the node's route (user code; never after Shutdown());
  // otherwise where the outcome is decided (it must only hand it over, as
  // a promise does).
  void CallAsync(std::shared_ptr<const void> request, absl::Duration timeout,
                 Deliver deliver, bool as_routine);

  bool ServiceIsReady() const;
  bool WaitForService(absl::Duration timeout);

  // `peers` (null: none): running callbacks not waited for
  // (NodeEndpoint::ShutdownAmong).
  void Shutdown(const NodeEndpoint::ShutdownPeers* peers = nullptr);
  bool is_shut_down() const override;
  ClientStats stats() const override;
  // NodeEndpoint's, for Node::Shutdown().
  bool RunsCallbackIn(const scheduler::CRoutine* routine) const {
    return callbacks_.RunsHandlerIn(routine);
  }
  void RecheckPeers() { callbacks_.RecheckWaiters(); }
  uint64_t id() const { return id_; }
  const std::string& service_name() const { return service_; }
  const std::string& node_name() const override { return node_->name; }

  // node "n": service "s", opening every error of this client.
  std::string Prefix() const;
  // Decides `call` if it is not decided yet (see the header comment).
  // `at`: when the outcome came about, if the caller knows (the clock is
  // read otherwise, for a response's latency).
  void Finish(const std::shared_ptr<PendingCall>& call, Source source,
              ServiceOutcome outcome, const ServiceTiming& at = {});
  // From the tick thread: `call`'s timeout expired. Dispatches TimeOut.
  void TimeoutDue(const std::shared_ptr<PendingCall>& call);

 private:
  // An AsyncCall callback with its outcome, queued in callbacks_.
  struct Callback {
    Deliver deliver;
    ServiceOutcome outcome;
  };

  // Registers and sends a call; every failure is decided through Finish.
  // `blocks_thread`: the caller will block its thread until the outcome
  // (refused on the thread that moves the node's clock, see Call()).
  std::shared_ptr<PendingCall> Start(std::shared_ptr<const void> request,
                                     absl::Duration timeout, Deliver deliver,
                                     bool as_routine, bool blocks_thread = false);
  // Arms `call`'s timeout on the node's runtime's timer system (not at
  // all beyond the wheel's range: never, as InfiniteDuration). Sets
  // `*armed` when it armed the timeout, which it does under the call's
  // lock and only while the call is undecided.
  absl::Status ArmTimeout(const std::shared_ptr<PendingCall>& call,
                          absl::Duration timeout, bool* armed);
  // The timer system timeouts arm on: the one the node's routines sleep
  // on; null once the process's is shut down (a scheduler without one).
  std::shared_ptr<timer::TimerSystemCore> TimeoutWheel() const;
  // Decides `call` DEADLINE_EXCEEDED (if it is not decided yet).
  void TimeOut(const std::shared_ptr<PendingCall>& call);
  // Waits until `call` is decided. False: the calling routine was
  // cancelled, or (a thread) the node's scheduler is stopping.
  bool ParkUntilDecided(PendingCall* call);
  bool BlockUntilDecided(PendingCall* call);
  // From the response inlet and the transport (transport threads).
  bool OnRemoteResponse(const RemoteSample& sample, DecodeFn decode);
  void OnPeerLost(const RemotePeer& peer, bool crashed);
  // The node's runtime's clock (WaitForService).
  Clock* clock() const;

  const std::shared_ptr<const NodeState> node_;
  const std::string service_;
  const std::shared_ptr<scheduler::Scheduler> scheduler_;
  const timer::Route route_;
  const std::shared_ptr<ServiceRegistry> registry_;
  const std::shared_ptr<RemoteTransport> remote_;
  const uint64_t id_;  // random, never 0: pairs responses between processes

  // Set by LinkRemote before the client is handed out, then read only.
  std::shared_ptr<RemotePublisher> outlet_;
  EncodeFn encode_request_ = nullptr;
  std::atomic<uint64_t> next_sequence_{0};
  // stats().requests_sent, apart from mu_: counted on every call's way
  // out, where a lock less is worth having.
  std::atomic<uint64_t> requests_sent_{0};

  // mu_ protects the following state. Lock order: a call's lock, then mu_.
  mutable Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  // By sequence. A flat table: a call's entry allocates nothing once the
  // table has grown to the calls in flight at once.
  absl::flat_hash_map<uint64_t, std::shared_ptr<PendingCall>> pending_
      ABSL_GUARDED_BY(mu_);
  bool listening_ ABSL_GUARDED_BY(mu_) = false;  // a peer-lost listener is set
  uint64_t listener_ ABSL_GUARDED_BY(mu_) = 0;
  // The counts callbacks_ does not keep (see stats()).
  ClientStats stats_ ABSL_GUARDED_BY(mu_);
  timer::LatencyHistogram latency_ ABSL_GUARDED_BY(mu_);

  // The AsyncCall callbacks decided and not yet run, and the routine that
  // runs them, one at a time (its lock is never held with mu_).
  SerialDelivery<Callback> callbacks_;
};

}  // namespace transport_internal

template <typename Req, typename Resp>
class Client final : public transport_internal::NodeEndpoint {
 public:
  using Result = absl::StatusOr<std::shared_ptr<const Resp>>;
  using Callback = std::function<void(Result)>;

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() override { Shutdown(); }

  // --- The reason travels with the result ----------------------------------
  Result Call(std::shared_ptr<const Req> request,
              absl::Duration timeout = kDefaultServiceTimeout) {
    return Typed(core_->Call(std::move(request), timeout));
  }
  Result Call(const Req& request, absl::Duration timeout = kDefaultServiceTimeout) {
    return Call(std::make_shared<const Req>(request), timeout);
  }
  // `callback` runs once, as a routine on the node's route (not after
  // Shutdown()). A null callback: the outcome is only counted.
  void AsyncCall(std::shared_ptr<const Req> request, absl::Duration timeout,
                 Callback callback) {
    transport_internal::ClientCore::Deliver deliver;
    if (callback) {
      deliver = [callback = std::move(callback)](
                    transport_internal::ServiceOutcome outcome) {
        callback(Typed(std::move(outcome)));
      };
    }
    core_->CallAsync(std::move(request), timeout, std::move(deliver),
                     /*as_routine=*/true);
  }
  std::shared_future<Result> AsyncCall(std::shared_ptr<const Req> request,
                                       absl::Duration timeout = kDefaultServiceTimeout) {
    auto promise = std::make_shared<std::promise<Result>>();
    std::shared_future<Result> future = promise->get_future().share();
    core_->CallAsync(
        std::move(request), timeout,
        [promise](transport_internal::ServiceOutcome outcome) {
          promise->set_value(Typed(std::move(outcome)));
        },
        /*as_routine=*/false);
    return future;
  }

  // --- Cyber RT's spellings (nullptr on failure, logged) -------------------
  std::shared_ptr<Resp> SendRequest(std::shared_ptr<Req> request,
                                    absl::Duration timeout = kDefaultServiceTimeout) {
    return Untyped(Call(std::shared_ptr<const Req>(std::move(request)), timeout));
  }
  std::shared_ptr<Resp> SendRequest(const Req& request,
                                    absl::Duration timeout = kDefaultServiceTimeout) {
    return Untyped(Call(request, timeout));
  }
  std::shared_future<std::shared_ptr<Resp>> AsyncSendRequest(
      std::shared_ptr<Req> request, absl::Duration timeout = kDefaultServiceTimeout) {
    auto promise = std::make_shared<std::promise<std::shared_ptr<Resp>>>();
    std::shared_future<std::shared_ptr<Resp>> future = promise->get_future().share();
    core_->CallAsync(
        std::shared_ptr<const Req>(std::move(request)), timeout,
        [promise](transport_internal::ServiceOutcome outcome) {
          promise->set_value(Untyped(Typed(std::move(outcome))));
        },
        /*as_routine=*/false);
    return future;
  }
  std::shared_future<std::shared_ptr<Resp>> AsyncSendRequest(
      const Req& request, absl::Duration timeout = kDefaultServiceTimeout) {
    return AsyncSendRequest(std::make_shared<Req>(request), timeout);
  }

  // Whether a call now would find a server (see the header comment).
  bool ServiceIsReady() const { return core_->ServiceIsReady(); }
  // Waits until ServiceIsReady() (polling on the node's runtime clock:
  // a routine parks between polls, a thread sleeps), at most `timeout`.
  // False on timeout or once shut down.
  bool WaitForService(absl::Duration timeout = absl::InfiniteDuration()) {
    return core_->WaitForService(timeout);
  }

  const std::string& ServiceName() const { return core_->service_name(); }
  const std::string& service_name() const { return core_->service_name(); }
  const std::string& node_name() const { return core_->node_name(); }
  // The client id carried by its requests between processes.
  uint64_t id() const { return core_->id(); }
  ClientStats stats() const { return core_->stats(); }

  void Shutdown() override {
    core_->Shutdown();
    inlet_.Close();
  }
  // Cyber RT's name for Shutdown().
  void Destroy() { Shutdown(); }
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

  explicit Client(std::shared_ptr<transport_internal::ClientCore> core)
      : core_(std::move(core)) {}

  static absl::StatusOr<std::shared_ptr<Client>> Create(
      const transport_internal::NodeContext& context, const std::string& name);

  static Result Typed(transport_internal::ServiceOutcome outcome) {
    if (!outcome.ok()) return outcome.status();
    // The registry guarantees the type.
    return std::static_pointer_cast<const Resp>(*std::move(outcome));
  }
  static std::shared_ptr<Resp> Untyped(Result result) {
    if (!result.ok()) {
      AWARN_EVERY(100) << result.status().message();
      return nullptr;
    }
    // Cyber RT hands the response out non-const; nobody else holds it.
    return std::const_pointer_cast<Resp>(*std::move(result));
  }

  const std::shared_ptr<transport_internal::ClientCore> core_;
  // The response inlet from other processes (none: in-process only).
  transport_internal::RemoteInlet inlet_;
};

// --- implementation of the template ---------------------------------------

template <typename Req, typename Resp>
absl::StatusOr<std::shared_ptr<Client<Req, Resp>>> Client<Req, Resp>::Create(
    const transport_internal::NodeContext& context, const std::string& name) {
  const std::string& node = context.node->name;
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node \"", node, "\": CreateClient: service name is empty"));
  }
  if (context.node->shut_down.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node \"", node, "\": CreateClient \"", name, "\": node is shut down"));
  }
  absl::Status used = context.registry->Use(
      node, name, typeid(Req), typeid(Resp), transport_internal::DescriptorOf<Req>(),
      transport_internal::DescriptorOf<Resp>());
  if (!used.ok()) return used;
  auto core = std::make_shared<transport_internal::ClientCore>(context, name);
  context.registry->AddClient(name, core);  // for the graph check
  std::shared_ptr<Client> client(new Client(core));
  absl::Status linked = transport_internal::LinkToOtherProcesses<Req, Resp>(
      context, core.get(), &client->inlet_);
  if (!linked.ok()) {
    client->Shutdown();
    return linked;
  }
  return client;
}

}  // namespace cyber

#endif  // CYBER_SERVICE_CLIENT_H_
