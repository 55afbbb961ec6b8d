// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// ProcessorGroup and Processor: the threads that run routines.
//
// A group is a set of processor threads sharing one SchedulingPolicy (one
// run queue) under one lock. An idle processor blocks on the group's
// condition variable (one of them, the waiter below, with a timeout).
// Making a routine ready wakes one idle processor unless one is already
// being woken (all of them only for a routine pinned to a particular
// processor, which must be the one to take it): a burst of routines costs
// one wake-up per processor, not one per routine.
//
// Each processor applies its thread attributes (name, CPU affinity,
// scheduling policy and priority) at start; a setting the OS refuses (e.g.
// SCHED_FIFO without privileges) is logged as a warning and the processor
// runs without it.
//
// Work held until its instant (early hand-over). A due timer's callback
// otherwise waits for two wake-ups in series: the tick thread's, then, when
// it hands the callback over, an idle processor's. The timer system can
// instead hand an event's work over a little before the event
// (timer::Dispatcher::HandOverLead), with the instant before which it must
// not begin: such routines are held here, in order of that instant, not
// queued to run. One idle processor, the waiter, sleeps on its own timer
// until the earliest held instant and then moves what has come due into
// the run queue and runs it: the two wake-ups happen side by side, none
// of them spins, and the call never begins early (held work is released
// only once the steady clock has reached its instant). With an
// Anticipation the waiter already sleeps until the timer system's
// announced next event (timer::Dispatcher::ExpectWork; the group never
// looks at a wheel) before that event's work arrives, so an early
// hand-over at or after the waiter's wake instant needs no signal at all.
// The waiter is an idle processor like the others: ready work wakes the
// untimed sleepers first and the waiter only when none is left (it then
// runs the ready work, higher priority first as always, and an idle
// processor takes over the waiting); a hand-over earlier than its wake
// instant re-arms it; with nothing held and nothing announced no processor
// has a timeout (no wake-ups when idle). The held routines, the waiter's
// timed wake-ups and those that found nothing are counted (stats()).
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

// How a group's waiter anticipates timer work (see above).
struct TimerAnticipation {
  // When the next timer work is due (steady clock), if any is expected.
  // Called under the group's lock: quick, takes no lock (a load of what the
  // timer system announced). Null: no anticipation.
  std::function<std::optional<std::chrono::steady_clock::time_point>()>
      next_work;
};

class ProcessorGroup {
 public:
  // Called on the processor thread after each Resume() with the state the
  // routine switched out in (never under the group's lock).
  using ReturnedFn =
      std::function<void(std::shared_ptr<CRoutine>, CRoutine::State)>;

  using Anticipation = TimerAnticipation;
  using SteadyTime = std::chrono::steady_clock::time_point;
  struct Stats {
    uint64_t switches = 0;
    uint64_t held = 0;         // routines handed over ahead of their instant
    uint64_t held_ns = 0;      // how far ahead they came, summed
    uint64_t timed_wakes = 0;  // the waiter's wake-ups by its own timer
    uint64_t idle_wakes = 0;   // of those, wake-ups that found nothing to run
  };

  ProcessorGroup(ProcessorGroupConfig config,
                 std::unique_ptr<SchedulingPolicy> policy, ReturnedFn returned,
                 bool run_threads = true, Anticipation anticipation = {});
  ~ProcessorGroup();  // Stop()
  ProcessorGroup(const ProcessorGroup&) = delete;
  ProcessorGroup& operator=(const ProcessorGroup&) = delete;

  // Queues `routine`; with `not_before` still to come, holds it until
  // then (see the header comment).
  void Enqueue(std::shared_ptr<CRoutine> routine,
               std::optional<SteadyTime> not_before = std::nullopt);
  // Queues (or holds, as Enqueue) those of `routines` that belong to group
  // `group` (this group's index in its scheduler), in order, under one
  // lock, then wakes sleeping processors as Enqueue() does, once for the
  // lot. Moves each queued one out (its slot is left null).
  void EnqueueAll(std::vector<std::shared_ptr<CRoutine>>* routines, int group,
                  std::optional<SteadyTime> not_before = std::nullopt);
  // Queues every held routine now, whatever its instant, and wakes the
  // processors: for a scheduler shutting down, whose cancelled routines
  // end without running their body and must not keep it waiting.
  void ReleaseHeld();
  // Stops the processors after the routine each is running switches out;
  // queued routines stay queued (the scheduler drains before stopping).
  void Stop();

  // Without threads: resumes the next queued routine (processors' queues in
  // turn, so pinned routines run too) on
  // the calling thread, waiting up to `wait` of real time for one to be
  // queued (or for a held one's instant); false if none came (or the group
  // stopped).
  bool RunOne(std::chrono::nanoseconds wait);

  const ProcessorGroupConfig& config() const { return config_; }
  int size() const { return static_cast<int>(threads_.size()); }
  // Routines queued or held (not parked, not running).
  size_t queued() const;
  Stats stats() const;

 private:
  // Signals to send after a change to the queue (see WakesLocked).
  struct Wakes {
    int sleepers = 0;     // processors in SleepLocked, one each
    bool waiter = false;  // the waiter
    bool all = false;     // everybody (a pinned routine)
  };
  struct Held {
    SteadyTime not_before;
    std::shared_ptr<CRoutine> routine;
  };

  void ProcessorMain(int index);
  std::shared_ptr<CRoutine> Next(int index);
  // Resumes `r` on the calling thread and hands it to returned_.
  void Run(std::shared_ptr<CRoutine> r);
  // Whom `queued` newly ready routines need woken (counted as on their
  // way): sleeping processors not already being woken first, then the
  // waiter; everybody for a pinned one.
  Wakes WakesLocked(size_t queued, bool pinned) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whom routines held until `not_before` need woken: the waiter if it
  // would wake later than that; else, with no waiter, one sleeping
  // processor (which becomes it); else nobody (a busy processor looks at
  // the held routines when it is done).
  Wakes HoldWakesLocked(SteadyTime not_before)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Wake(Wakes wakes);
  // Holds `routine` until `not_before`, in order of that instant.
  void HoldLocked(std::shared_ptr<CRoutine> routine, SteadyTime not_before)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A hand-over's placement: held until `until` (an instant still to come,
  // measured before the lock) or, without it, queued at once.
  struct Placement {
    std::optional<SteadyTime> until;
    SteadyTime measured;  // when `until` was compared with the clock
  };
  static Placement PlacementFor(std::optional<SteadyTime> not_before);
  // Queues or holds `routine` per `placement`.
  void PlaceLocked(std::shared_ptr<CRoutine> routine, const Placement& placement)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After `placed` routines were placed: counts what was held and returns
  // whom they need woken (HoldWakesLocked or WakesLocked).
  Wakes PlacedWakesLocked(const Placement& placement, size_t placed,
                          bool pinned) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues the held routines whose instant `now` has reached; returns whom
  // they need woken, besides a caller about to take one itself.
  Wakes ReleaseDueLocked(SteadyTime now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // When the waiter should wake: the earliest held instant, else the
  // announced next timer work if it is still to come, else never.
  std::optional<SteadyTime> WaitUntilLocked(SteadyTime now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The waiter's turn: sleeps on waiter_cv_ until `until` (or a signal).
  void WaitAsWaiterLocked(SteadyTime until) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits on work_ (until `until`, if given), counted as asleep. False if
  // it timed out.
  bool SleepLocked(const SteadyTime* until) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ProcessorGroupConfig config_;
  const ReturnedFn returned_;
  const Anticipation anticipation_;
  // mu_ protects the following state.
  mutable Mutex mu_;
  CondVar work_;         // sleeping processors wait here
  CondVar waiter_cv_;    // the waiter waits here, with a timeout
  std::unique_ptr<SchedulingPolicy> policy_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // Routines handed over ahead of their instant, earliest first. Keeps its
  // capacity: holding allocates nothing once it has grown.
  std::vector<Held> held_ ABSL_GUARDED_BY(mu_);
  bool waiter_ ABSL_GUARDED_BY(mu_) = false;  // a processor is the waiter
  SteadyTime waiter_until_ ABSL_GUARDED_BY(mu_);  // ... sleeping until then
  bool waiter_woken_ ABSL_GUARDED_BY(mu_) = false;  // a signal on its way
  int sleeping_ ABSL_GUARDED_BY(mu_) = 0;       // processors in SleepLocked
  int pending_wakes_ ABSL_GUARDED_BY(mu_) = 0;  // signals not yet consumed
  int next_manual_processor_ ABSL_GUARDED_BY(mu_) = 0;  // RunOne's turn
  std::atomic<uint64_t> switches_{0};
  std::atomic<uint64_t> held_count_{0};
  std::atomic<uint64_t> held_ns_{0};
  std::atomic<uint64_t> timed_wakes_{0};
  std::atomic<uint64_t> idle_wakes_{0};
  std::vector<std::thread> threads_;
};

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_PROCESSOR_GROUP_H_
