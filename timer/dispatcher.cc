#include "timer/dispatcher.h"

#include <utility>

namespace cyber {
namespace timer {

namespace {
// The not-before instant of the early batch open on this thread.
thread_local std::optional<DispatchBatch::SteadyTime> t_not_before;
}  // namespace

DispatchBatch::DispatchBatch(Dispatcher* dispatcher)
    : dispatcher_(dispatcher), outer_(t_not_before) {
  // Work dispatched in a batch due now is due now, whatever an enclosing
  // batch said (batches do not nest in practice: one tick pass each).
  t_not_before.reset();
  dispatcher_->BeginBatch();
}

DispatchBatch::DispatchBatch(Dispatcher* dispatcher, SteadyTime not_before)
    : dispatcher_(dispatcher), outer_(t_not_before) {
  // Set before BeginBatch(): the dispatcher may read it there.
  t_not_before = not_before;
  dispatcher_->BeginBatch();
}

DispatchBatch::~DispatchBatch() {
  // Read by the dispatcher in EndBatch(): reset only after it.
  dispatcher_->EndBatch();
  t_not_before = outer_;
}

std::optional<DispatchBatch::SteadyTime> DispatchBatch::NotBefore() {
  return t_not_before;
}

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
