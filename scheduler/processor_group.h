// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// ProcessorGroup and Processor: the threads that run routines.
//
// A group is a set of processor threads sharing one SchedulingPolicy (one
// run queue) under one lock. An idle processor blocks on the group's
// condition variable (the one exception, the anticipating watcher below,
// spins briefly around a known timer event). Making a routine ready wakes
// one idle processor unless one is already being woken (all of them only for
// a routine pinned to a particular processor, which must be the one to take
// it): a burst of routines costs one wake-up per processor, not one per
// routine.
//
// Each processor applies its thread attributes (name, CPU affinity,
// scheduling policy and priority) at start; a setting the OS refuses (e.g.
// SCHED_FIFO without privileges) is logged as a warning and the processor
// runs without it.
//
// Timer hand-off without a second wake-up (Anticipation). A due timer's
// callback otherwise waits for two wake-ups in series: the tick thread's,
// then, when it hands the callback over, an idle processor's. With an
// Anticipation, one idle processor (the watcher) reads when timer work is
// next expected (what the timer system last told the scheduler:
// timer::Dispatcher::ExpectWork; the group never looks at a wheel), sleeps
// until `lead` before it and then spins, at most until
// `spin_limit` past it, for the hand-off: the two wake-ups happen side by
// side and the hand-off is a store the spinner sees. The spinner yields the
// CPU every few hundred nanoseconds (the tick thread may be waking on the
// very CPU it spins on). The watcher learns how late its own timed
// wake-ups come (an idle virtual CPU wakes late, later after a long sleep)
// and wakes that much earlier. It reads again before spinning, so a
// timeout cancelled meanwhile (the cancel announces it) costs no spin; with
// nothing expected it blocks like any idle processor (no wake-ups when
// idle). The spin is counted (stats()).
//
// A group made with run_threads false has no threads at all: its owner runs
// the queued routines on its own thread with RunOne() (a simulated graph
// does, for a deterministic order).
//
// Threads: Enqueue() from any thread. Stop() once, from outside the group.
// RunOne() only on a group without threads, from one thread at a time.

#ifndef SCHEDULER_PROCESSOR_GROUP_H_
#define SCHEDULER_PROCESSOR_GROUP_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduling_policy.h"

namespace cyber {
namespace scheduler {

// How a group's idle processors anticipate timer work (see above).
struct TimerAnticipation {
  // When the next timer work is due (steady clock), if any is expected.
  // Called under the group's lock: quick, takes no lock (a load of what the
  // timer system announced). Null: no anticipation.
  std::function<std::optional<std::chrono::steady_clock::time_point>()>
      next_work;
  std::chrono::nanoseconds lead{0};
  std::chrono::nanoseconds spin_limit{0};
};

class ProcessorGroup {
 public:
  // Called on the processor thread after each Resume() with the state the
  // routine switched out in (never under the group's lock).
  using ReturnedFn =
      std::function<void(std::shared_ptr<CRoutine>, CRoutine::State)>;

  using Anticipation = TimerAnticipation;
  struct Stats {
    uint64_t switches = 0;
    uint64_t anticipated = 0;  // spins that ended with work handed over
    uint64_t missed = 0;       // spins that gave up (no work by the limit)
    uint64_t spin_ns = 0;      // time spent spinning, all processors
  };

  ProcessorGroup(ProcessorGroupConfig config,
                 std::unique_ptr<SchedulingPolicy> policy, ReturnedFn returned,
                 bool run_threads = true, Anticipation anticipation = {});
  ~ProcessorGroup();  // Stop()
  ProcessorGroup(const ProcessorGroup&) = delete;
  ProcessorGroup& operator=(const ProcessorGroup&) = delete;

  void Enqueue(std::shared_ptr<CRoutine> routine);
  // Queues those of `routines` that belong to group `group` (this group's
  // index in its scheduler), in order, under one lock, then wakes sleeping
  // processors as Enqueue() does, once for the lot. Moves each queued one
  // out (its slot is left null).
  void EnqueueAll(std::vector<std::shared_ptr<CRoutine>>* routines, int group);
  // Stops the processors after the routine each is running switches out;
  // queued routines stay queued (the scheduler drains before stopping).
  void Stop();

  // Without threads: resumes the next queued routine (processors' queues in
  // turn, so pinned routines run too) on
  // the calling thread, waiting up to `wait` of real time for one to be
  // queued; false if none came (or the group stopped).
  bool RunOne(std::chrono::nanoseconds wait);

  const ProcessorGroupConfig& config() const { return config_; }
  int size() const { return static_cast<int>(threads_.size()); }
  size_t queued() const;
  Stats stats() const;

 private:
  void ProcessorMain(int index);
  std::shared_ptr<CRoutine> Next(int index);
  // Resumes `r` on the calling thread and hands it to returned_.
  void Run(std::shared_ptr<CRoutine> r);
  // The watcher's turn (see the header comment): returns after waiting,
  // with work possibly queued.
  void WatchLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // How many sleeping processors `queued` new routines need woken (counted
  // as on their way), or kWakeAll for a pinned one; Wake() then signals.
  static constexpr int kWakeAll = -1;
  int WakesLocked(size_t queued, bool pinned) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Wake(int wakes);
  // Waits on work_ (until `until`, if given), counted as asleep. False if
  // it timed out.
  bool SleepLocked(const std::chrono::steady_clock::time_point* until)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ProcessorGroupConfig config_;
  const ReturnedFn returned_;
  mutable Mutex mu_;
  CondVar work_;
  std::unique_ptr<SchedulingPolicy> policy_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  const Anticipation anticipation_;
  bool watcher_ ABSL_GUARDED_BY(mu_) = false;   // a processor watches
  bool spinning_ ABSL_GUARDED_BY(mu_) = false;  // the watcher spins now
  int sleeping_ ABSL_GUARDED_BY(mu_) = 0;       // processors in SleepLocked
  // How late the watcher's timed wake-ups have been (moving average, ns).
  int64_t wake_late_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int pending_wakes_ ABSL_GUARDED_BY(mu_) = 0;  // signals not yet consumed
  // Routines queued so far (written under mu_): what a spinner watches.
  std::atomic<uint64_t> enqueued_{0};
  std::atomic<bool> stopping_{false};  // stop_, for a spinner
  std::atomic<uint64_t> anticipated_{0};
  std::atomic<uint64_t> missed_{0};
  std::atomic<uint64_t> spin_ns_{0};
  int next_manual_processor_ ABSL_GUARDED_BY(mu_) = 0;  // RunOne's turn
  std::atomic<uint64_t> switches_{0};
  std::vector<std::thread> threads_;
};

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_PROCESSOR_GROUP_H_
