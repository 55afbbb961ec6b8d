#include "scheduler/processor_group.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <utility>

#include "cyber/common/cpu_relax.h"
#include "cyber/common/log.h"
#include "scheduler/config/thread_attributes.h"

namespace cyber {
namespace scheduler {

namespace {
// The most the watcher adds to its lead for its own wake-up lateness (ns).
constexpr int64_t kMaxLearnedLateNs = 500'000;

// Timer slack of anticipating processors (ns).
constexpr unsigned long kWatcherTimerSlackNs = 1000;  // NOLINT: prctl's type
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

void ProcessorGroup::Enqueue(std::shared_ptr<CRoutine> routine) {
  const bool pinned = routine->processor() >= 0;
  int wakes;
  {
    MutexLock lock(&mu_);
    policy_->Push(std::move(routine));
    enqueued_.fetch_add(1, std::memory_order_release);
    wakes = WakesLocked(1, pinned);
  }
  Wake(wakes);
}

void ProcessorGroup::EnqueueAll(std::vector<std::shared_ptr<CRoutine>>* routines,
                                int group) {
  int wakes;
  {
    MutexLock lock(&mu_);
    size_t queued = 0;
    bool pinned = false;
    for (std::shared_ptr<CRoutine>& routine : *routines) {
      if (routine == nullptr || routine->group() != group) {
        continue;
      }
      pinned = pinned || routine->processor() >= 0;
      policy_->Push(std::move(routine));
      ++queued;
    }
    if (queued == 0) return;
    enqueued_.fetch_add(queued, std::memory_order_release);
    wakes = WakesLocked(queued, pinned);
  }
  Wake(wakes);
}

int ProcessorGroup::WakesLocked(size_t queued, bool pinned) {
  if (pinned) return kWakeAll;  // it must be a particular processor
  // A spinning watcher takes one without a wake-up; each other routine
  // needs a processor that is asleep and not already being woken. Work
  // queued while a wake-up is on its way is found by the woken processor,
  // which drains the queue before it sleeps again: one wake-up per
  // processor for a burst, not one per routine.
  if (spinning_ && queued > 0) {
    // Claimed: a later enqueue before the spinner takes its routine must
    // not count on it again.
    spinning_ = false;
    --queued;
  }
  const int available = sleeping_ - pending_wakes_;
  const int wakes =
      static_cast<int>(std::min<size_t>(queued, std::max(available, 0)));
  pending_wakes_ += wakes;
  return wakes;
}

void ProcessorGroup::Wake(int wakes) {
  if (wakes == kWakeAll) {
    work_.SignalAll();
    return;
  }
  for (int i = 0; i < wakes; ++i) work_.Signal();
}

bool ProcessorGroup::SleepLocked(
    const std::chrono::steady_clock::time_point* until) {
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

size_t ProcessorGroup::queued() const {
  MutexLock lock(&mu_);
  return policy_->size();
}

std::shared_ptr<CRoutine> ProcessorGroup::Next(int index) {
  MutexLock lock(&mu_);
  while (!stop_) {
    std::shared_ptr<CRoutine> r = policy_->Pop(index);
    if (r) return r;
    if (anticipation_.next_work && !watcher_) {
      watcher_ = true;
      WatchLocked();
      watcher_ = false;
    } else {
      SleepLocked(nullptr);
    }
  }
  return nullptr;
}

void ProcessorGroup::WatchLocked() {
  using Clock = std::chrono::steady_clock;
  const uint64_t seen = enqueued_.load(std::memory_order_acquire);
  const std::optional<Clock::time_point> next = anticipation_.next_work();
  if (!next) {
    SleepLocked(nullptr);  // nothing expected: idle like the others
    return;
  }
  const Clock::time_point now = Clock::now();
  // The lead, plus how late this machine's timed wake-ups of the watcher
  // have been lately (an idle virtual CPU wakes tens of microseconds late,
  // more after a long sleep): the watcher should be spinning by lead
  // before the event, not arriving after it.
  const Clock::time_point wake =
      *next - anticipation_.lead - std::chrono::nanoseconds(wake_late_ns_);
  if (now < wake) {
    // Until shortly before it; then ask again (a cancelled timeout moves
    // it, and costs no spin). Queued work wakes us earlier.
    if (!SleepLocked(&wake)) {
      // Timed out: learn how late (moving average of 1/8, bounded).
      const int64_t late = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               Clock::now() - wake)
                               .count();
      const int64_t bounded = std::clamp<int64_t>(late, 0, kMaxLearnedLateNs);
      wake_late_ns_ += (bounded - wake_late_ns_) / 8;
    }
    return;
  }
  const Clock::time_point give_up = *next + anticipation_.spin_limit;
  if (now >= give_up) {
    // Expected long ago and not come (a late tick thread, an event with no
    // work for us): wait to be handed work, as any idle processor.
    SleepLocked(nullptr);
    return;
  }
  spinning_ = true;
  mu_.Unlock();
  bool handed = false;
  Clock::time_point t = now;
  while (!stopping_.load(std::memory_order_relaxed)) {
    for (int i = 0; i < 64 && !handed; ++i) {
      handed = enqueued_.load(std::memory_order_acquire) != seen;
      CpuRelax();
    }
    if (handed) break;
    t = Clock::now();
    if (t >= give_up) break;
    // The tick thread may be waking on this very CPU (a 2-CPU machine has
    // no other idle one while we spin): let it run at once.
    sched_yield();
  }
  if (handed) t = Clock::now();
  spin_ns_.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t - now).count(),
      std::memory_order_relaxed);
  (handed ? anticipated_ : missed_).fetch_add(1, std::memory_order_relaxed);
  mu_.Lock();
  spinning_ = false;
  if (!handed && !stop_ && enqueued_.load(std::memory_order_acquire) == seen) {
    SleepLocked(nullptr);
  }
}

ProcessorGroup::Stats ProcessorGroup::stats() const {
  Stats s;
  s.switches = switches_.load(std::memory_order_relaxed);
  s.anticipated = anticipated_.load(std::memory_order_relaxed);
  s.missed = missed_.load(std::memory_order_relaxed);
  s.spin_ns = spin_ns_.load(std::memory_order_relaxed);
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
      for (int i = 0; i < processors && !r; ++i) {
        r = policy_->Pop(next_manual_processor_);
        next_manual_processor_ = (next_manual_processor_ + 1) % processors;
      }
      if (r || std::chrono::steady_clock::now() >= limit) break;
      SleepLocked(&limit);  // counted asleep: an enqueue signals it
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
  if (anticipation_.next_work) {
    // The watcher's timed wait must end when asked, not up to the default
    // 50 us of timer slack later: the slack would eat the lead.
    if (prctl(PR_SET_TIMERSLACK, kWatcherTimerSlackNs, 0, 0, 0) != 0) {
      AWARN << "processor " << name << ": cannot lower its timer slack";
    }
  }

  while (std::shared_ptr<CRoutine> r = Next(index)) Run(std::move(r));
}

void ProcessorGroup::Stop() {
  {
    MutexLock lock(&mu_);
    if (stop_) return;
    stop_ = true;
    stopping_.store(true, std::memory_order_relaxed);
  }
  work_.SignalAll();
  for (std::thread& t : threads_) t.join();
}

}  // namespace scheduler
}  // namespace cyber
