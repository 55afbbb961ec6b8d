#include "cyber/component/component_registry.h"

#include <utility>

#include "cyber/common/log.h"

namespace cyber {

ComponentRegistry& ComponentRegistry::Global() {
  static ComponentRegistry* const registry = new ComponentRegistry();
  return *registry;
}

bool ComponentRegistry::Register(const std::string& class_name,
                                 Factory factory) {
  MutexLock lock(&mu_);
  if (!factories_.emplace(class_name, std::move(factory)).second) {
    AERROR << "CYBER_REGISTER_COMPONENT: class \"" << class_name
           << "\" is registered twice; keeping the first";
  }
  return true;
}

std::unique_ptr<ComponentBase> ComponentRegistry::Create(
    const std::string& class_name) const {
  Factory factory;
  {
    MutexLock lock(&mu_);
    const auto it = factories_.find(class_name);
    if (it == factories_.end()) return nullptr;
    factory = it->second;
  }
  return factory();  // user constructor: not under our lock
}

bool ComponentRegistry::Contains(const std::string& class_name) const {
  MutexLock lock(&mu_);
  return factories_.count(class_name) != 0;
}

std::vector<std::string> ComponentRegistry::Names() const {
  MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& entry : factories_) names.push_back(entry.first);
  return names;
}

}  // namespace cyber
