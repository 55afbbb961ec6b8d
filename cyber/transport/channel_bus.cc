#include "cyber/transport/channel_bus.h"

#include <cxxabi.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

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

}  // namespace transport_internal

ChannelBus* ChannelBus::Default() {
  static ChannelBus* const bus = new ChannelBus();
  return bus;
}

std::vector<std::string> ChannelBus::ChannelNames() const {
  MutexLock lock(&mu_);
  std::vector<std::string> names;
  names.reserve(channels_.size());
  for (const auto& entry : channels_) names.push_back(entry.first);
  return names;
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
