// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// CallbackExecutor: a small fixed pool of threads that runs timer callbacks
// off the tick thread, from a bounded FIFO queue.
//
// Why: a callback must never delay the tick thread (and so every other
// timer). It is the fallback Dispatcher of timers made without cyber::Init
// (which makes the scheduler's coroutine pool the default), and a baseline
// in the benchmarks. The queue is bounded so that a stuck consumer
// shows up as counted refusals instead of unbounded memory; the timer layer
// logs each refusal with the timer's name and re-arms periodic timers.
//
// Threads: Dispatch(), WaitIdle() and the counters from any thread.
// Shutdown() (also run by the destructor) stops accepting work, runs what was
// already queued, and joins the workers; it must not be called from a task.

#ifndef TIMER_CALLBACK_EXECUTOR_H_
#define TIMER_CALLBACK_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"
#include "timer/dispatcher.h"

namespace cyber {
namespace timer {

class CallbackExecutor final : public Dispatcher {
 public:
  struct Options {
    int threads = 2;
    size_t max_queue = size_t{1} << 16;
    std::string name = "timer-cb";  // thread names: name-0, name-1, ...
  };
  struct Stats {
    uint64_t executed = 0;
    uint64_t refused = 0;
    size_t max_depth = 0;  // deepest the queue has been
  };

  // REQUIRES: options.threads >= 1 and options.max_queue >= 1.
  explicit CallbackExecutor(Options options);
  CallbackExecutor() : CallbackExecutor(Options()) {}
  ~CallbackExecutor() override;

  using Dispatcher::Dispatch;
  // FIFO: `priority` is ignored (a plain thread pool has no priorities).
  bool Dispatch(std::function<void()> task, int priority) override;

  void Shutdown();
  // Blocks until the queue is empty and no task is running.
  void WaitIdle();
  Stats stats() const;

 private:
  void WorkerLoop();

  const Options options_;
  mutable Mutex mu_;
  CondVar work_available_;
  CondVar idle_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> workers_;  // written only by ctor and Shutdown()
  Mutex shutdown_mu_;                 // serializes Shutdown()
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_CALLBACK_EXECUTOR_H_
