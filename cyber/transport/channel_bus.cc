#include "cyber/transport/channel_bus.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cyber/transport/node_state.h"

namespace cyber {
namespace transport_internal {

std::string TypeName(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return type.name();
  std::string name(demangled);
  std::free(demangled);
  return name;
}

std::vector<std::string> SortedUnique(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

void ChannelBase::AddWriter(const std::shared_ptr<const NodeState>& node,
                            const std::shared_ptr<const void>& writer) {
  MutexLock lock(&writers_mu_);
  // Forget writers that are gone, so a node that creates and drops writers
  // does not grow the list.
  writers_.erase(std::remove_if(writers_.begin(), writers_.end(),
                                [](const WriterRecord& r) {
                                  return r.writer.expired() || r.node.expired();
                                }),
                 writers_.end());
  writers_.push_back(WriterRecord{node, writer});
}

std::vector<std::string> ChannelBase::WriterNodes() const {
  std::vector<std::shared_ptr<const NodeState>> live;
  {
    MutexLock lock(&writers_mu_);
    for (const WriterRecord& r : writers_) {
      if (r.writer.expired()) continue;
      if (auto node = r.node.lock()) live.push_back(std::move(node));
    }
  }
  // The last references may drop here, outside the lock.
  std::vector<std::string> nodes;
  for (const auto& node : live) {
    if (!node->shut_down.load(std::memory_order_acquire)) nodes.push_back(node->name);
  }
  return SortedUnique(std::move(nodes));
}

std::optional<ChannelQos> ChannelBase::RemoteQos(bool writer) const {
  MutexLock lock(&writers_mu_);
  return writer ? outlet_qos_ : inlet_qos_;
}

void ChannelBase::NoteRemoteQos(bool writer, const ChannelQos& qos) {
  MutexLock lock(&writers_mu_);
  (writer ? outlet_qos_ : inlet_qos_) = qos;
}

}  // namespace transport_internal

void ChannelBus::SetRemote(std::shared_ptr<RemoteTransport> remote) {
  std::shared_ptr<RemoteTransport> old;  // released outside the lock
  MutexLock lock(&mu_);
  old = std::exchange(remote_, std::move(remote));
}

void ChannelBus::ClearRemote(const RemoteTransport* remote) {
  std::shared_ptr<RemoteTransport> old;
  MutexLock lock(&mu_);
  if (remote_.get() == remote) old = std::exchange(remote_, nullptr);
}

std::shared_ptr<RemoteTransport> ChannelBus::remote() const {
  MutexLock lock(&mu_);
  return remote_;
}

std::vector<std::string> ChannelBus::ChannelNames() const {
  MutexLock lock(&mu_);
  std::vector<std::string> names;
  names.reserve(channels_.size());
  for (const auto& entry : channels_) names.push_back(entry.first);
  return names;
}

std::vector<ChannelTopology> ChannelBus::Topology() const {
  std::vector<std::shared_ptr<transport_internal::ChannelBase>> channels;
  {
    MutexLock lock(&mu_);
    for (const auto& entry : channels_) channels.push_back(entry.second);
  }
  // Each channel is asked under its own locks only, never under the bus's.
  std::vector<ChannelTopology> topology;
  topology.reserve(channels.size());
  for (const auto& c : channels) {
    ChannelTopology t;
    t.channel = c->name();
    t.type_name = c->type_name();
    t.writers = c->WriterNodes();
    t.readers = c->ReaderNodes();
    t.descriptor = c->descriptor();
    t.writer_qos = c->RemoteQos(/*writer=*/true);
    t.reader_qos = c->RemoteQos(/*writer=*/false);
    topology.push_back(std::move(t));
  }
  return topology;
}

std::shared_ptr<transport_internal::ChannelBase> ChannelBus::FindChannel(
    const std::string& channel) const {
  MutexLock lock(&mu_);
  auto it = channels_.find(channel);
  return it == channels_.end() ? nullptr : it->second;
}

absl::StatusOr<std::shared_ptr<transport_internal::ChannelBase>>
ChannelBus::FindOrAdd(
    const std::string& node, const std::string& channel,
    const std::type_info& type,
    const std::function<std::shared_ptr<transport_internal::ChannelBase>()>&
        make) {
  MutexLock lock(&mu_);
  auto it = channels_.find(channel);
  if (it == channels_.end()) {
    it = channels_.emplace(channel, make()).first;
  } else if (it->second->type() != std::type_index(type)) {
    const transport_internal::ChannelBase& existing = *it->second;
    return absl::FailedPreconditionError(absl::StrCat(
        "node \"", node, "\": channel \"", channel, "\" carries ",
        existing.type_name(), " (first used by node \"", existing.first_node(),
        "\"), not ", transport_internal::TypeName(type)));
  }
  return it->second;
}

}  // namespace cyber
