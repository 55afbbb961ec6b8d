// HoldingDispatcher: a Dispatcher that keeps every dispatched call until the
// test runs them (RunHeld), so a call can be "queued" — handed to the
// dispatcher, not begun — while the test acts on or queries its timer.
//
// Threads: one thread (the test's), with a thread-free timer system.

#ifndef TIMER_TESTING_HOLDING_DISPATCHER_H_
#define TIMER_TESTING_HOLDING_DISPATCHER_H_

#include <deque>
#include <functional>
#include <utility>

#include "timer/dispatcher.h"

namespace cyber {
namespace timer {

class HoldingDispatcher final : public Dispatcher {
 public:
  using Dispatcher::Dispatch;
  bool Dispatch(std::function<void()> task, int /*priority*/) override {
    held.push_back(std::move(task));
    return true;
  }
  // Runs what was held when it was called (calls dispatched meanwhile wait
  // for the next RunHeld()).
  void RunHeld() {
    std::deque<std::function<void()>> tasks;
    tasks.swap(held);
    for (auto& task : tasks) task();
  }
  std::deque<std::function<void()>> held;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TESTING_HOLDING_DISPATCHER_H_
