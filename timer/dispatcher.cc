#include "timer/dispatcher.h"

#include <utility>

namespace cyber {
namespace timer {

bool Dispatcher::Dispatch(std::function<void()> task, int priority,
                          std::shared_ptr<const void> owner) {
  if (owner == nullptr) return Dispatch(std::move(task), priority);
  return Dispatch(
      [task = std::move(task), owner = std::move(owner)] { task(); }, priority);
}

bool Dispatcher::Dispatch(std::function<void()> task, Route route,
                          std::shared_ptr<const void> owner) {
  return Dispatch(std::move(task), route.priority, std::move(owner));
}

int Dispatcher::PriorityFor(const std::string& /*name*/) const { return 0; }

Route Dispatcher::RouteFor(const std::string& name) const {
  return Route{PriorityFor(name), 0};
}

}  // namespace timer
}  // namespace cyber
