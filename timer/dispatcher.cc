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

int Dispatcher::PriorityFor(const std::string& /*name*/) const { return 0; }

}  // namespace timer
}  // namespace cyber
