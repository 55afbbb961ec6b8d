#include "scheduler/processor_group.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "cyber/common/log.h"
#include "scheduler/config/thread_attributes.h"

namespace cyber {
namespace scheduler {

namespace {
// Timer slack of processors (ns): the waiter's timed wait must end when
// asked, not up to the default 50 us later.
constexpr unsigned long kProcessorTimerSlackNs = 1000;  // NOLINT: prctl's type

using Clock = std::chrono::steady_clock;
}  // namespace

ProcessorGroup::ProcessorGroup(ProcessorGroupConfig config,
                               std::unique_ptr<SchedulingPolicy> policy,
                               ReturnedFn returned, bool run_threads,
                               Anticipation anticipation)
    : config_(std::move(config)),
      returned_(std::move(returned)),
      anticipation_(std::move(anticipation)) {
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

ProcessorGroup::Placement ProcessorGroup::PlacementFor(
    std::optional<SteadyTime> not_before) {
  // Read before the lock: a hand-over whose instant has come is an ordinary
  // enqueue.
  Placement placement;
  if (not_before) {
    placement.measured = Clock::now();
    if (*not_before > placement.measured) placement.until = not_before;
  }
  return placement;
}

void ProcessorGroup::PlaceLocked(std::shared_ptr<CRoutine> routine,
                                 const Placement& placement) {
  if (placement.until) {
    HoldLocked(std::move(routine), *placement.until);
  } else {
    policy_->Push(std::move(routine));
  }
}

ProcessorGroup::Wakes ProcessorGroup::PlacedWakesLocked(
    const Placement& placement, size_t placed, bool pinned) {
  if (!placement.until) return WakesLocked(placed, pinned);
  held_count_.fetch_add(placed, std::memory_order_relaxed);
  held_ns_.fetch_add(
      static_cast<uint64_t>((*placement.until - placement.measured).count()) *
          placed,
      std::memory_order_relaxed);
  return HoldWakesLocked(*placement.until);
}

void ProcessorGroup::Enqueue(std::shared_ptr<CRoutine> routine,
                             std::optional<SteadyTime> not_before) {
  const Placement placement = PlacementFor(not_before);
  const bool pinned = routine->processor() >= 0;
  Wakes wakes;
  {
    MutexLock lock(&mu_);
    PlaceLocked(std::move(routine), placement);
    wakes = PlacedWakesLocked(placement, 1, pinned);
  }
  Wake(wakes);
}

void ProcessorGroup::EnqueueAll(std::vector<std::shared_ptr<CRoutine>>* routines,
                                int group,
                                std::optional<SteadyTime> not_before) {
  const Placement placement = PlacementFor(not_before);
  Wakes wakes;
  {
    MutexLock lock(&mu_);
    size_t queued = 0;
    bool pinned = false;
    for (std::shared_ptr<CRoutine>& routine : *routines) {
      if (routine == nullptr || routine->group() != group) {
        continue;
      }
      pinned = pinned || routine->processor() >= 0;
      PlaceLocked(std::move(routine), placement);
      ++queued;
    }
    if (queued == 0) return;
    wakes = PlacedWakesLocked(placement, queued, pinned);
  }
  Wake(wakes);
}

void ProcessorGroup::HoldLocked(std::shared_ptr<CRoutine> routine,
                                SteadyTime not_before) {
  // From the back: hand-overs come in time order, so this is an append.
  size_t at = held_.size();
  while (at > 0 && held_[at - 1].not_before > not_before) --at;
  held_.insert(held_.begin() + static_cast<std::ptrdiff_t>(at),
               Held{not_before, std::move(routine)});
}

void ProcessorGroup::ReleaseHeld() {
  {
    MutexLock lock(&mu_);
    for (Held& h : held_) policy_->Push(std::move(h.routine));
    held_.clear();
  }
  work_.SignalAll();
  waiter_cv_.SignalAll();
}

ProcessorGroup::Wakes ProcessorGroup::ReleaseDueLocked(SteadyTime now) {
  size_t due = 0;
  bool pinned = false;
  while (due < held_.size() && held_[due].not_before <= now) {
    pinned = pinned || held_[due].routine->processor() >= 0;
    policy_->Push(std::move(held_[due].routine));
    ++due;
  }
  if (due == 0) return Wakes{};
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(due));
  // The caller takes one itself (unless it is pinned elsewhere).
  return WakesLocked(due - 1, pinned);
}

ProcessorGroup::Wakes ProcessorGroup::WakesLocked(size_t queued, bool pinned) {
  Wakes wakes;
  if (pinned) {  // it must be a particular processor
    wakes.all = true;
    return wakes;
  }
  // Each routine needs a processor that is asleep and not already being
  // woken. Work queued while a wake-up is on its way is found by the woken
  // processor, which drains the queue before it sleeps again: one wake-up
  // per processor for a burst, not one per routine. The waiter comes last:
  // while another processor can take the work, it keeps its appointment.
  const int available = std::max(sleeping_ - pending_wakes_, 0);
  wakes.sleepers =
      static_cast<int>(std::min<size_t>(queued, static_cast<size_t>(available)));
  pending_wakes_ += wakes.sleepers;
  if (queued > static_cast<size_t>(wakes.sleepers) && waiter_ && !waiter_woken_) {
    waiter_woken_ = true;
    wakes.waiter = true;
  }
  return wakes;
}

ProcessorGroup::Wakes ProcessorGroup::HoldWakesLocked(SteadyTime not_before) {
  Wakes wakes;
  if (waiter_) {
    // Asleep until the announced event, which this hand-over is for: no
    // signal (the common case). Until later: it must wake earlier.
    if (waiter_until_ > not_before && !waiter_woken_) {
      waiter_woken_ = true;
      wakes.waiter = true;
    }
    return wakes;
  }
  if (sleeping_ - pending_wakes_ > 0) {  // one of them becomes the waiter
    ++pending_wakes_;
    wakes.sleepers = 1;
  }
  return wakes;
}

void ProcessorGroup::Wake(Wakes wakes) {
  if (wakes.all) {
    work_.SignalAll();
    waiter_cv_.SignalAll();
    return;
  }
  for (int i = 0; i < wakes.sleepers; ++i) work_.Signal();
  if (wakes.waiter) waiter_cv_.Signal();
}

bool ProcessorGroup::SleepLocked(const SteadyTime* until) {
  ++sleeping_;
  bool signalled = true;
  if (until != nullptr) {
    signalled = work_.WaitUntil(&mu_, *until);
  } else {
    work_.Wait(&mu_);
  }
  --sleeping_;
  // Any return counts as the wake-up on its way (a timeout or a spurious
  // return wakes this processor just the same: it looks at the queue).
  if (pending_wakes_ > 0) --pending_wakes_;
  return signalled;
}

std::optional<ProcessorGroup::SteadyTime> ProcessorGroup::WaitUntilLocked(
    SteadyTime now) {
  if (!held_.empty()) return held_.front().not_before;
  if (anticipation_.next_work) {
    // The announced event, before its work is handed over: sleeping until
    // it now makes that hand-over cost no signal. Passed and not handed
    // over (a late tick thread, an event with no work here): wait to be
    // signalled like any idle processor.
    const std::optional<SteadyTime> next = anticipation_.next_work();
    if (next && *next > now) return next;
  }
  return std::nullopt;
}

void ProcessorGroup::WaitAsWaiterLocked(SteadyTime until) {
  waiter_ = true;
  waiter_until_ = until;
  waiter_woken_ = false;
  const bool signalled = waiter_cv_.WaitUntil(&mu_, until);
  waiter_ = false;
  waiter_woken_ = false;
  if (signalled) return;
  timed_wakes_.fetch_add(1, std::memory_order_relaxed);
  // Nothing held has come due and nothing is ready: an announced event
  // that brought nothing here, or a hand-over still to come.
  const SteadyTime now = Clock::now();
  if (policy_->size() == 0 &&
      (held_.empty() || held_.front().not_before > now)) {
    idle_wakes_.fetch_add(1, std::memory_order_relaxed);
  }
}

size_t ProcessorGroup::queued() const {
  MutexLock lock(&mu_);
  return policy_->size() + held_.size();
}

std::shared_ptr<CRoutine> ProcessorGroup::Next(int index) {
  MutexLock lock(&mu_);
  while (!stop_) {
    Wakes wakes;
    if (!held_.empty()) wakes = ReleaseDueLocked(Clock::now());
    std::shared_ptr<CRoutine> r = policy_->Pop(index);
    if (r) {
      // Work held or announced, and nobody waiting for it any more (the
      // waiter was called away to run this): an idle processor takes over.
      if (!waiter_ && !wakes.all && !held_.empty() &&
          sleeping_ - pending_wakes_ > 0) {
        ++pending_wakes_;
        ++wakes.sleepers;
      }
      Wake(wakes);  // under the lock: rare (more than one released)
      return r;
    }
    Wake(wakes);
    const std::optional<SteadyTime> until =
        waiter_ ? std::nullopt : WaitUntilLocked(Clock::now());
    if (until) {
      WaitAsWaiterLocked(*until);
    } else {
      SleepLocked(nullptr);
    }
  }
  return nullptr;
}

ProcessorGroup::Stats ProcessorGroup::stats() const {
  Stats s;
  s.switches = switches_.load(std::memory_order_relaxed);
  s.held = held_count_.load(std::memory_order_relaxed);
  s.held_ns = held_ns_.load(std::memory_order_relaxed);
  s.timed_wakes = timed_wakes_.load(std::memory_order_relaxed);
  s.idle_wakes = idle_wakes_.load(std::memory_order_relaxed);
  return s;
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
      if (!held_.empty()) ReleaseDueLocked(Clock::now());  // no one to wake
      for (int i = 0; i < processors && !r; ++i) {
        r = policy_->Pop(next_manual_processor_);
        next_manual_processor_ = (next_manual_processor_ + 1) % processors;
      }
      if (r || std::chrono::steady_clock::now() >= limit) break;
      // Until the earliest held instant at most: it is released then.
      const SteadyTime until =
          held_.empty() ? limit : std::min(limit, held_.front().not_before);
      SleepLocked(&until);  // counted asleep: an enqueue signals it
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
  // Any processor may be the waiter (work held until its instant), whose
  // timed wait must end when asked, not up to the default 50 us of timer
  // slack later: the call would begin that much late.
  if (prctl(PR_SET_TIMERSLACK, kProcessorTimerSlackNs, 0, 0, 0) != 0) {
    AWARN << "processor " << name << ": cannot lower its timer slack";
  }

  while (std::shared_ptr<CRoutine> r = Next(index)) Run(std::move(r));
}

void ProcessorGroup::Stop() {
  {
    MutexLock lock(&mu_);
    if (stop_) return;
    stop_ = true;
  }
  work_.SignalAll();
  waiter_cv_.SignalAll();
  for (std::thread& t : threads_) t.join();
}

}  // namespace scheduler
}  // namespace cyber
