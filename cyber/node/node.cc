#include "cyber/node/node.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "cyber/common/runtime_scope.h"
#include "cyber/runtime/runtime.h"

namespace cyber {

Node::Node(std::string name, Runtime* runtime)
    : Node(std::move(name), runtime->scheduler(), runtime->bus()) {}

Node::Node(std::string name, scheduler::Scheduler* scheduler, ChannelBus* bus)
    : state_(std::make_shared<transport_internal::NodeState>(std::move(name))),
      runtime_(scheduler != nullptr && bus != nullptr ? RuntimeRef()
                                                      : CurrentRuntime()),
      scheduler_owner_(
          scheduler != nullptr
              ? std::shared_ptr<scheduler::Scheduler>(
                    std::shared_ptr<scheduler::Scheduler>(), scheduler)
              : runtime_.shared_part(&RuntimeScope::scheduler)),
      scheduler_(scheduler_owner_.get()),
      route_(scheduler_->RouteFor(state_->name)),
      bus_(bus != nullptr ? bus : runtime_.part(&RuntimeScope::bus)) {}

Node::~Node() { Shutdown(); }

absl::Status Node::CheckCreate(const char* what,
                               const std::string& channel) const {
  if (channel.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node \"", name(), "\": ", what, ": channel name is empty"));
  }
  if (is_shut_down()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node \"", name(), "\": ", what, " on channel \"", channel,
        "\": node is shut down"));
  }
  return absl::OkStatus();
}

absl::Status Node::Adopt(const char* what, const std::string& channel,
                         std::shared_ptr<transport_internal::NodeEndpoint> reader) {
  std::vector<std::shared_ptr<transport_internal::NodeEndpoint>> retired;
  MutexLock lock(&mu_);
  // Checked under mu_, which Shutdown() holds while it sets the flag and
  // copies the list: a reader adopted here is in that copy.
  if (is_shut_down()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node \"", name(), "\": ", what, " on channel \"", channel,
        "\": node is shut down"));
  }
  // Forget readers shut down on their own, so a node that creates and drops
  // readers does not grow.
  std::vector<std::shared_ptr<transport_internal::NodeEndpoint>> kept;
  kept.reserve(readers_.size() + 1);
  for (auto& r : readers_) {
    (r->is_shut_down() ? retired : kept).push_back(std::move(r));
  }
  kept.push_back(std::move(reader));
  readers_.swap(kept);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<SerializedWriter>> Node::TryCreateSerializedWriter(
    const std::string& channel) {
  absl::Status checked = CheckCreate("CreateSerializedWriter", channel);
  if (!checked.ok()) return checked;
  std::shared_ptr<transport_internal::ChannelBase> ch = bus_->FindChannel(channel);
  if (ch == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "node \"", name(), "\": CreateSerializedWriter on channel \"", channel,
        "\": no reader or writer uses the channel, so its message type is not known"));
  }
  if (ch->descriptor() == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node \"", name(), "\": CreateSerializedWriter on channel \"", channel,
        "\": the channel carries ", ch->type_name(), ", not a protobuf message"));
  }
  std::shared_ptr<SerializedWriter> writer(
      new SerializedWriter(state_, ch, ch->descriptor()->full_name()));
  ch->AddWriter(state_, writer);  // for ChannelBus::Topology()
  return writer;
}

void Node::LogCreateFailure(const absl::Status& status) const {
  AERROR << status.message();
}

void Node::Shutdown() {
  std::vector<std::shared_ptr<transport_internal::NodeEndpoint>> endpoints;
  {
    MutexLock lock(&mu_);
    state_->shut_down.store(true, std::memory_order_release);
    endpoints = readers_;
  }
  // Outside mu_: an endpoint's Shutdown() may wait for its callback, and
  // that callback may call into this node. Every caller shuts every
  // endpoint down (their Shutdown() is idempotent), so each caller gets
  // the guarantee.
  const scheduler::CRoutine* const self = scheduler::CRoutine::Current();
  const bool from_callback =
      self != nullptr &&
      std::any_of(endpoints.begin(), endpoints.end(),
                  [self](const auto& e) { return e->RunsCallbackIn(self); });
  if (!from_callback) {
    for (const auto& endpoint : endpoints) endpoint->Shutdown();
    return;
  }
  // One of our callbacks: it does not wait for another one that is shutting
  // the node down too. Joining the callers first, then waking whoever waits
  // for a callback, makes a waiter that is one of them see it joined.
  struct Joined {
    ShutdownCallers* callers;
    const scheduler::CRoutine* self;
    ~Joined() { callers->Remove(self); }
  };
  shutdown_callers_.Add(self);
  const Joined joined{&shutdown_callers_, self};
  for (const auto& endpoint : endpoints) endpoint->RecheckPeers();
  for (const auto& endpoint : endpoints) endpoint->ShutdownAmong(shutdown_callers_);
}

void Node::ShutdownCallers::Add(const scheduler::CRoutine* routine) {
  MutexLock lock(&mu_);
  routines_.push_back(routine);
}

void Node::ShutdownCallers::Remove(const scheduler::CRoutine* routine) {
  MutexLock lock(&mu_);
  const auto it = std::find(routines_.begin(), routines_.end(), routine);
  if (it != routines_.end()) routines_.erase(it);
}

bool Node::ShutdownCallers::Contains(const scheduler::CRoutine* routine) const {
  MutexLock lock(&mu_);
  return std::find(routines_.begin(), routines_.end(), routine) != routines_.end();
}

// --- services -------------------------------------------------------------

transport_internal::NodeContext Node::ServiceContext() const {
  transport_internal::NodeContext c;
  c.node = state_;
  c.scheduler = scheduler_owner_;
  c.route = route_;
  c.registry = bus_->services();
  c.remote = bus_->remote();
  return c;
}

// --- end of services --------------------------------------------------------

absl::Status Node::WithNode(const absl::Status& status) const {
  const std::string prefix = absl::StrCat("node \"", name(), "\"");
  if (absl::StrContains(status.message(), prefix)) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace cyber
