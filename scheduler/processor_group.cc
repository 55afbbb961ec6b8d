#include "scheduler/processor_group.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

#include "cyber/common/log.h"
#include "scheduler/config/thread_attributes.h"

namespace cyber {
namespace scheduler {

ProcessorGroup::ProcessorGroup(ProcessorGroupConfig config,
                               std::unique_ptr<SchedulingPolicy> policy,
                               ReturnedFn returned, bool run_threads)
    : config_(std::move(config)), returned_(std::move(returned)) {
  {
    MutexLock lock(&mu_);
    policy_ = std::move(policy);
  }
  if (!run_threads) return;
  for (int i = 0; i < config_.processor_num; ++i) {
    threads_.emplace_back([this, i] { ProcessorMain(i); });
  }
}

ProcessorGroup::~ProcessorGroup() { Stop(); }

void ProcessorGroup::Enqueue(std::shared_ptr<CRoutine> routine) {
  const bool pinned = routine->processor() >= 0;
  {
    MutexLock lock(&mu_);
    policy_->Push(std::move(routine));
  }
  // One idle processor, unless it must be a particular one.
  if (pinned) {
    work_.SignalAll();
  } else {
    work_.Signal();
  }
}

void ProcessorGroup::EnqueueAll(std::vector<std::shared_ptr<CRoutine>>* routines,
                                int group) {
  size_t queued = 0;
  bool pinned = false;
  {
    MutexLock lock(&mu_);
    for (std::shared_ptr<CRoutine>& routine : *routines) {
      if (routine == nullptr || (group >= 0 && routine->group() != group)) {
        continue;
      }
      pinned = pinned || routine->processor() >= 0;
      policy_->Push(std::move(routine));
      ++queued;
    }
  }
  if (queued == 0) return;
  if (pinned) {
    work_.SignalAll();
    return;
  }
  // Each signal wakes one idle processor (or none, cheaply, when none
  // waits): as many as there is work for, never more than there are.
  const size_t wakes = std::min(queued, std::max<size_t>(threads_.size(), 1));
  for (size_t i = 0; i < wakes; ++i) work_.Signal();
}

size_t ProcessorGroup::queued() const {
  MutexLock lock(&mu_);
  return policy_->size();
}

std::shared_ptr<CRoutine> ProcessorGroup::Next(int index) {
  MutexLock lock(&mu_);
  while (!stop_) {
    std::shared_ptr<CRoutine> r = policy_->Pop(index);
    if (r) return r;
    work_.Wait(&mu_);
  }
  return nullptr;
}

bool ProcessorGroup::RunOne(std::chrono::nanoseconds wait) {
  std::shared_ptr<CRoutine> r;
  {
    MutexLock lock(&mu_);
    const auto limit = std::chrono::steady_clock::now() + wait;
    // Every processor's queue in turn (routines pinned to any of them run
    // here too).
    const int processors = std::max(config_.processor_num, 1);
    while (!stop_) {
      for (int i = 0; i < processors && !r; ++i) {
        r = policy_->Pop(next_manual_processor_);
        next_manual_processor_ = (next_manual_processor_ + 1) % processors;
      }
      if (r || std::chrono::steady_clock::now() >= limit) break;
      work_.WaitUntil(&mu_, limit);
    }
  }
  if (!r) return false;
  Run(std::move(r));
  return true;
}

void ProcessorGroup::Run(std::shared_ptr<CRoutine> r) {
  const CRoutine::State state = r->Resume();
  switches_.fetch_add(1, std::memory_order_relaxed);
  returned_(std::move(r), state);
}

void ProcessorGroup::ProcessorMain(int index) {
  const std::string name = (config_.name + "-" + std::to_string(index)).substr(0, 15);
  pthread_setname_np(pthread_self(), name.c_str());
  const std::vector<int> cpus = CpusForProcessor(config_, index);
  if (!cpus.empty()) {
    const absl::Status s = SetCurrentThreadAffinity(cpus, name);
    if (!s.ok()) AWARN << "processor " << name << ": " << s.message();
  }
  const absl::Status s =
      SetCurrentThreadPolicy(config_.policy, config_.priority, name);
  if (!s.ok()) AWARN << "processor " << name << ": " << s.message();

  while (std::shared_ptr<CRoutine> r = Next(index)) Run(std::move(r));
}

void ProcessorGroup::Stop() {
  {
    MutexLock lock(&mu_);
    if (stop_) return;
    stop_ = true;
  }
  work_.SignalAll();
  for (std::thread& t : threads_) t.join();
}

}  // namespace scheduler
}  // namespace cyber
