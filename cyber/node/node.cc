#include "cyber/node/node.h"

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

void Node::LogCreateFailure(const absl::Status& status) const {
  AERROR << status.message();
}

void Node::Shutdown() {
  std::vector<std::shared_ptr<transport_internal::NodeEndpoint>> readers;
  {
    MutexLock lock(&mu_);
    state_->shut_down.store(true, std::memory_order_release);
    readers = readers_;
  }
  // Outside mu_: a reader's Shutdown() may wait for its callback, and that
  // callback may call into this node. Every caller shuts every reader down
  // (Reader::Shutdown is idempotent), so each caller gets the guarantee.
  for (const auto& reader : readers) reader->Shutdown();
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
