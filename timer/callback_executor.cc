#include "timer/callback_executor.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

#include "cyber/common/log.h"

namespace cyber {
namespace timer {

CallbackExecutor::CallbackExecutor(Options options)
    : options_(std::move(options)) {
  ACHECK(options_.threads >= 1 && options_.max_queue >= 1)
      << "CallbackExecutor \"" << options_.name << "\": threads "
      << options_.threads << " and max_queue " << options_.max_queue
      << " must be at least 1";
  for (int i = 0; i < options_.threads; ++i) {
    workers_.emplace_back([this, i] {
      // Linux limits thread names to 15 characters.
      const std::string name = (options_.name + "-" + std::to_string(i)).substr(0, 15);
      pthread_setname_np(pthread_self(), name.c_str());
      WorkerLoop();
    });
  }
}

CallbackExecutor::~CallbackExecutor() { Shutdown(); }

bool CallbackExecutor::Dispatch(std::function<void()> task, int /*priority*/) {
  {
    MutexLock lock(&mu_);
    if (stopping_ || queue_.size() >= options_.max_queue) {
      ++stats_.refused;
      return false;
    }
    queue_.push_back(std::move(task));
    stats_.max_depth = std::max(stats_.max_depth, queue_.size());
  }
  work_available_.Signal();  // one worker, not all of them
  return true;
}

void CallbackExecutor::WorkerLoop() {
  while (true) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stopping_) work_available_.Wait(&mu_);
      if (queue_.empty()) return;  // stopping, and everything queued ran
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task();  // never under the lock
    task = nullptr;  // release captures before reporting idle
    {
      MutexLock lock(&mu_);
      --running_;
      ++stats_.executed;
      if (queue_.empty() && running_ == 0) idle_.SignalAll();
    }
  }
}

void CallbackExecutor::Shutdown() {
  MutexLock serialize(&shutdown_mu_);
  {
    MutexLock lock(&mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  work_available_.SignalAll();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  MutexLock lock(&mu_);
  idle_.SignalAll();
}

void CallbackExecutor::WaitIdle() {
  MutexLock lock(&mu_);
  while (!queue_.empty() || running_ != 0) idle_.Wait(&mu_);
}

CallbackExecutor::Stats CallbackExecutor::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace timer
}  // namespace cyber
