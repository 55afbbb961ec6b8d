// Node: a named participant in in-process communication, the way Cyber RT
// modules talk: it creates Writers and Readers on named channels, and shuts
// them down together.
//
//   cyber::Node planner("planner", &runtime);   // or Node("planner")
//   auto writer = planner.TryCreateWriter<Trajectory>("/planning/trajectory");
//   auto reader = planner.TryCreateReader<Obstacles>(
//       "/perception/obstacles",
//       [](const std::shared_ptr<const Obstacles>& o) { Replan(*o); },
//       /*pending_queue_size=*/1);
//   if (!reader.ok()) AERROR << reader.status();
//   (*writer)->Write(trajectory);
//
// Two spellings of each factory. TryCreateWriter/TryCreateReader return
// absl::StatusOr (the reason travels with the result): use them in new code.
// CreateWriter/CreateReader are Cyber RT's spellings, for code ported from
// it unchanged: they return the std::shared_ptr, or nullptr after logging
// the same error (AERROR) -- thin adapters over the Try forms:
//
//   auto writer = node_->CreateWriter<Driver>("/carstatus/channel");
//   if (writer == nullptr) return false;
//   auto reader = node_->CreateReader<Chatter>(
//       "/chatter", [](const std::shared_ptr<Chatter>& msg) { ... });
//
// Why collaborators come in: the scheduler that runs reader callbacks and the
// ChannelBus that connects nodes are constructor arguments, so a test builds
// its own and shares nothing with other tests. Null means the current
// runtime's (the rule of cyber/common/runtime_scope.h): in a graph's code
// (a component's Init(), a callback), that graph's scheduler and bus;
// outside any, the process runtime's, which is what robot code written for
// Cyber RT expects (every node of the process talks to every other). Such a
// node holds the process runtime, so it may outlive a cyber::Shutdown().
//
// Errors (absl::Status; the message names the node, the channel and the
// problem): InvalidArgument for an empty channel name, an empty callback or a
// pending_queue_size of 0; FailedPrecondition for a channel already used with
// another message type (both type names are given) and for a node that is
// shut down.
//
// Shutdown() (also run by the destructor) refuses further writes from this
// node's writers (Write returns false) and new writers and readers, and shuts
// down every reader of the node synchronously (see Reader::Shutdown): when it
// returns none of its callbacks is running or will run again, except the one
// calling Shutdown(), if any. It may be called from a callback of the node's
// own readers, services and clients, and more than once. Two such callbacks
// may shut the node down at the same moment: neither waits for the other
// (each would wait for ever), so when a callback's Shutdown() returns, the
// callbacks still running are the node's callbacks that are inside
// Shutdown() themselves; they finish normally and nothing follows them. A
// caller that is not one of the node's callbacks (a thread, another
// routine) waits for every callback.
//
// Services (CreateService, CreateClient; service.h, client.h) are made and
// shut down with the node the same way.
//
// Threads: every method is thread-safe. The scheduler must outlive the node's
// Shutdown() (readers dispatch routines to it until then); the bus must
// outlive calls to CreateWriter/CreateReader.

#ifndef CYBER_NODE_NODE_H_
#define CYBER_NODE_NODE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/mutex.h"
#include "cyber/common/runtime_scope.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/transport/channel_qos.h"
#include "cyber/service/client.h"
#include "cyber/node/reader.h"
#include "cyber/service/service.h"
#include "cyber/node/serialized_writer.h"
#include "cyber/node/writer.h"
#include "scheduler/scheduler.h"
#include "timer/dispatcher.h"  // timer::Route

namespace cyber {

class Runtime;

// Cyber RT's reader configuration (the fields this transport honours).
// qos_profile applies between processes only (channel_qos.h).
struct ReaderConfig {
  std::string channel_name;
  uint32_t pending_queue_size = 1;
  ChannelQos qos_profile;
};

class Node {
 public:
  // On `runtime`'s scheduler and bus: code that has its runtime passes it.
  // REQUIRES: `runtime` outlives the node's Shutdown().
  Node(std::string name, Runtime* runtime);
  // `scheduler` null, `bus` null: the current runtime's (see above). The node's
  // readers deliver on the scheduler's route for `name` (its conf entry's
  // priority and group; a component's node is named like the component).
  explicit Node(std::string name, scheduler::Scheduler* scheduler = nullptr,
                ChannelBus* bus = nullptr);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // `qos`: what the channel promises between processes (channel_qos.h);
  // the first writer of the process fixes it.
  template <typename M>
  absl::StatusOr<std::shared_ptr<Writer<M>>> TryCreateWriter(
      const std::string& channel, const ChannelQos& qos = ChannelQos());

  // A writer of serialized protobuf messages on `channel`, which a reader
  // or writer of this node's bus has used already (that fixed its type):
  // serialized_writer.h. Errors, naming the node and the channel: as
  // TryCreateWriter; NotFound when no one has used the channel (its type is
  // not known); FailedPrecondition when its message is not a protobuf
  // message (the C++ type named).
  absl::StatusOr<std::shared_ptr<SerializedWriter>> TryCreateSerializedWriter(
      const std::string& channel);

  // `callback` runs as a scheduler routine, never on the writer's thread,
  // never concurrently with itself, in write order. `pending_queue_size`:
  // messages buffered for this reader; when full, the oldest pending message
  // is dropped and counted (the writer never blocks).
  template <typename M>
  absl::StatusOr<std::shared_ptr<Reader<M>>> TryCreateReader(
      const std::string& channel,
      std::function<void(const std::shared_ptr<const M>&)> callback,
      size_t pending_queue_size = 1);
  // The same, with a qos between processes (config.qos_profile).
  template <typename M>
  absl::StatusOr<std::shared_ptr<Reader<M>>> TryCreateReader(
      const ReaderConfig& config,
      std::function<void(const std::shared_ptr<const M>&)> callback);

  // --- Cyber RT's spellings (nullptr plus an AERROR on failure) -----------
  template <typename M>
  std::shared_ptr<Writer<M>> CreateWriter(const std::string& channel);
  // Cyber RT passes the message as std::shared_ptr<M>; it is shared with
  // every other reader of the channel, so the callback must not modify it.
  // A null callback (Cyber's polling reader, read with Observe()) is not
  // supported: nullptr and an AERROR saying so.
  template <typename M>
  std::shared_ptr<Reader<M>> CreateReader(
      const std::string& channel,
      const std::function<void(const std::shared_ptr<M>&)>& callback);
  template <typename M>
  std::shared_ptr<Reader<M>> CreateReader(
      const ReaderConfig& config,
      const std::function<void(const std::shared_ptr<M>&)>& callback);

  // --- Services (service.h, client.h) --------------------------------------
  // A server of `service`: `callback` runs as a routine on this node's
  // route, one request at a time unless `options` says more; it fills the
  // response before it returns. Shut down with the node.
  template <typename Req, typename Resp>
  absl::StatusOr<std::shared_ptr<Service<Req, Resp>>> TryCreateService(
      const std::string& service, typename Service<Req, Resp>::Callback callback,
      const ServiceOptions& options = {});
  // The same, answering through a ServiceResponder, now or later, from any
  // routine, timer or thread (service.h).
  template <typename Req, typename Resp>
  absl::StatusOr<std::shared_ptr<Service<Req, Resp>>> TryCreateDeferredService(
      const std::string& service,
      typename Service<Req, Resp>::DeferredCallback callback,
      const ServiceOptions& options = {});
  // A client of `service`; its timeouts run on this node's runtime's timer
  // system. Shut down with the node.
  template <typename Req, typename Resp>
  absl::StatusOr<std::shared_ptr<Client<Req, Resp>>> TryCreateClient(
      const std::string& service);
  // Cyber RT's spellings: nullptr plus an AERROR on failure.
  template <typename Req, typename Resp>
  std::shared_ptr<Service<Req, Resp>> CreateService(
      const std::string& service, typename Service<Req, Resp>::Callback callback,
      const ServiceOptions& options = {});
  template <typename Req, typename Resp>
  std::shared_ptr<Service<Req, Resp>> CreateDeferredService(
      const std::string& service,
      typename Service<Req, Resp>::DeferredCallback callback,
      const ServiceOptions& options = {});
  template <typename Req, typename Resp>
  std::shared_ptr<Client<Req, Resp>> CreateClient(const std::string& service);
  // --- end of services ------------------------------------------------------

  const std::string& name() const { return state_->name; }
  scheduler::Scheduler* scheduler() const { return scheduler_; }
  // Where its readers' deliveries run, resolved once from the conf.
  timer::Route route() const { return route_; }
  ChannelBus* bus() const { return bus_; }

  void Shutdown();
  bool is_shut_down() const {
    return state_->shut_down.load(std::memory_order_acquire);
  }

 private:
  // InvalidArgument for an empty channel name, FailedPrecondition when shut
  // down. `what` names the call in the message.
  absl::Status CheckCreate(const char* what, const std::string& channel) const;
  // Keeps `reader` for Shutdown(); FailedPrecondition when shut down.
  absl::Status Adopt(const char* what, const std::string& channel,
                     std::shared_ptr<transport_internal::NodeEndpoint> reader);
  // A service or client just made (or why not), adopted: shut down again
  // with the error if the node shut down meanwhile.
  template <typename Endpoint>
  absl::StatusOr<std::shared_ptr<Endpoint>> Adopted(
      const char* what, const std::string& service,
      absl::StatusOr<std::shared_ptr<Endpoint>> created);
  // The Cyber spellings' failure path: logs `status` (AERROR).
  void LogCreateFailure(const absl::Status& status) const;
  // A transport error, its message prefixed with the node when it does not
  // name it already.
  absl::Status WithNode(const absl::Status& status) const;
  // What a service or client takes from this node (services).
  transport_internal::NodeContext ServiceContext() const;

  // The node's callbacks inside Shutdown() now: they do not wait for each
  // other (cyber/transport/node_endpoint.h).
  class ShutdownCallers final
      : public transport_internal::NodeEndpoint::ShutdownPeers {
   public:
    void Add(const scheduler::CRoutine* routine);
    void Remove(const scheduler::CRoutine* routine);
    bool Contains(const scheduler::CRoutine* routine) const override;

   private:
    // Taken under an endpoint's delivery lock (Contains): takes no other.
    mutable Mutex mu_;
    std::vector<const scheduler::CRoutine*> routines_ ABSL_GUARDED_BY(mu_);
  };

  const std::shared_ptr<transport_internal::NodeState> state_;
  // Holds the process scheduler when the node defaulted to it (its readers
  // hold it too): one replaced after cyber::Shutdown is freed once no node
  // delivers on it. Empty for a scheduler given (its owner keeps it).
  // The runtime found by the rule when a part was not given (held when it
  // is the process runtime), else empty.
  const RuntimeRef runtime_;
  const std::shared_ptr<scheduler::Scheduler> scheduler_owner_;
  scheduler::Scheduler* const scheduler_;
  const timer::Route route_;
  ChannelBus* const bus_;

  ShutdownCallers shutdown_callers_;

  // mu_ protects the following state.
  Mutex mu_;
  std::vector<std::shared_ptr<transport_internal::NodeEndpoint>> readers_
      ABSL_GUARDED_BY(mu_);
};

// --- implementation of the templates --------------------------------------

template <typename M>
absl::StatusOr<std::shared_ptr<Writer<M>>> Node::TryCreateWriter(
    const std::string& channel, const ChannelQos& qos) {
  absl::Status checked = CheckCreate("CreateWriter", channel);
  if (!checked.ok()) return checked;
  auto found = bus_->GetChannel<M>(name(), channel);
  if (!found.ok()) return found.status();
  std::shared_ptr<transport_internal::Channel<M>> ch = *std::move(found);
  absl::StatusOr<std::shared_ptr<RemotePublisher>> outlet =
      ch->RemoteOutlet(bus_->remote(), qos, name());
  if (!outlet.ok()) return WithNode(outlet.status());
  std::shared_ptr<Writer<M>> writer(new Writer<M>(state_, ch, *std::move(outlet)));
  ch->AddWriter(state_, writer);  // for ChannelBus::Topology()
  return writer;
}

template <typename M>
absl::StatusOr<std::shared_ptr<Reader<M>>> Node::TryCreateReader(
    const std::string& channel,
    std::function<void(const std::shared_ptr<const M>&)> callback,
    size_t pending_queue_size) {
  ReaderConfig config;
  config.channel_name = channel;
  config.pending_queue_size = static_cast<uint32_t>(pending_queue_size);
  if (config.pending_queue_size != pending_queue_size) config.pending_queue_size = UINT32_MAX;
  return TryCreateReader<M>(config, std::move(callback));
}

template <typename M>
absl::StatusOr<std::shared_ptr<Reader<M>>> Node::TryCreateReader(
    const ReaderConfig& config,
    std::function<void(const std::shared_ptr<const M>&)> callback) {
  const std::string& channel = config.channel_name;
  const size_t pending_queue_size = config.pending_queue_size;
  absl::Status checked = CheckCreate("CreateReader", channel);
  if (!checked.ok()) return checked;
  if (!callback) {
    return absl::InvalidArgumentError(
        absl::StrCat("node \"", name(), "\": CreateReader on channel \"",
                     channel, "\": callback is empty"));
  }
  if (pending_queue_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node \"", name(), "\": CreateReader on channel \"", channel,
        "\": pending_queue_size 0 is invalid (must be at least 1)"));
  }
  auto found = bus_->GetChannel<M>(name(), channel);
  if (!found.ok()) return found.status();
  std::shared_ptr<transport_internal::Channel<M>> ch = *std::move(found);
  std::shared_ptr<Reader<M>> reader(new Reader<M>(
      name(), ch, scheduler_owner_, route_, std::move(callback), pending_queue_size));
  absl::Status adopted = Adopt("CreateReader", channel, reader);
  if (!adopted.ok()) return adopted;
  // After Adopt: a concurrent Shutdown() either shuts the reader down before
  // it attaches (it then stays out of the channel) or detaches it after.
  reader->Attach();
  // Only then the subscription to other processes: what arrives the moment
  // it is made (a transient-local writer's replay) finds the reader there.
  absl::Status inlet = ch->RemoteInlet(bus_->remote(), config.qos_profile, name());
  if (!inlet.ok()) {
    reader->Shutdown();
    return WithNode(inlet);
  }
  return reader;
}

template <typename M>
std::shared_ptr<Writer<M>> Node::CreateWriter(const std::string& channel) {
  auto writer = TryCreateWriter<M>(channel);
  if (!writer.ok()) {
    LogCreateFailure(writer.status());
    return nullptr;
  }
  return *std::move(writer);
}

template <typename M>
std::shared_ptr<Reader<M>> Node::CreateReader(
    const ReaderConfig& config,
    const std::function<void(const std::shared_ptr<M>&)>& callback) {
  if (!callback) {
    LogCreateFailure(absl::UnimplementedError(absl::StrCat(
        "node \"", name(), "\": CreateReader on channel \"", config.channel_name,
        "\": a reader without a callback (polled with Observe()) is not "
        "supported; pass a callback")));
    return nullptr;
  }
  auto reader = TryCreateReader<M>(
      config, [callback](const std::shared_ptr<const M>& msg) {
        callback(std::const_pointer_cast<M>(msg));
      });
  if (!reader.ok()) {
    LogCreateFailure(reader.status());
    return nullptr;
  }
  return *std::move(reader);
}

template <typename M>
std::shared_ptr<Reader<M>> Node::CreateReader(
    const std::string& channel,
    const std::function<void(const std::shared_ptr<M>&)>& callback) {
  ReaderConfig config;
  config.channel_name = channel;
  return CreateReader<M>(config, callback);
}

// --- services -------------------------------------------------------------

template <typename Endpoint>
absl::StatusOr<std::shared_ptr<Endpoint>> Node::Adopted(
    const char* what, const std::string& service,
    absl::StatusOr<std::shared_ptr<Endpoint>> created) {
  if (!created.ok()) return created.status();
  absl::Status adopted = Adopt(what, service, *created);
  if (!adopted.ok()) {
    (*created)->Shutdown();  // the node shut down meanwhile
    return adopted;
  }
  return created;
}

template <typename Req, typename Resp>
absl::StatusOr<std::shared_ptr<Service<Req, Resp>>> Node::TryCreateService(
    const std::string& service, typename Service<Req, Resp>::Callback callback,
    const ServiceOptions& options) {
  auto created =
      Service<Req, Resp>::Create(ServiceContext(), service, std::move(callback), options);
  return Adopted("CreateService", service, std::move(created));
}

template <typename Req, typename Resp>
absl::StatusOr<std::shared_ptr<Service<Req, Resp>>> Node::TryCreateDeferredService(
    const std::string& service, typename Service<Req, Resp>::DeferredCallback callback,
    const ServiceOptions& options) {
  auto created = Service<Req, Resp>::CreateDeferred(ServiceContext(), service,
                                                    std::move(callback), options);
  return Adopted("CreateService", service, std::move(created));
}

template <typename Req, typename Resp>
absl::StatusOr<std::shared_ptr<Client<Req, Resp>>> Node::TryCreateClient(
    const std::string& service) {
  auto created = Client<Req, Resp>::Create(ServiceContext(), service);
  return Adopted("CreateClient", service, std::move(created));
}

template <typename Req, typename Resp>
std::shared_ptr<Service<Req, Resp>> Node::CreateService(
    const std::string& service, typename Service<Req, Resp>::Callback callback,
    const ServiceOptions& options) {
  auto created = TryCreateService<Req, Resp>(service, std::move(callback), options);
  if (!created.ok()) {
    LogCreateFailure(created.status());
    return nullptr;
  }
  return *std::move(created);
}

template <typename Req, typename Resp>
std::shared_ptr<Service<Req, Resp>> Node::CreateDeferredService(
    const std::string& service, typename Service<Req, Resp>::DeferredCallback callback,
    const ServiceOptions& options) {
  auto created =
      TryCreateDeferredService<Req, Resp>(service, std::move(callback), options);
  if (!created.ok()) {
    LogCreateFailure(created.status());
    return nullptr;
  }
  return *std::move(created);
}

template <typename Req, typename Resp>
std::shared_ptr<Client<Req, Resp>> Node::CreateClient(const std::string& service) {
  auto created = TryCreateClient<Req, Resp>(service);
  if (!created.ok()) {
    LogCreateFailure(created.status());
    return nullptr;
  }
  return *std::move(created);
}

}  // namespace cyber

#endif  // CYBER_NODE_NODE_H_
