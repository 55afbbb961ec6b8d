// Scheduler: a pool of processor threads running stackful coroutines
// (CRoutine). Timer callbacks, cyber::Async work and long-lived tasks run
// here.
//
// Why coroutines on a few threads: a robot process has dozens of components
// and hundreds of timers; a thread each would mean thousands of context
// switches and stacks. Here a due timer callback becomes a routine, a
// processor picks it by priority (SchedulingPolicy) and runs it; a routine
// that sleeps (SleepFor) or waits for data parks without holding a thread,
// woken by the timing wheel or by NotifyTask.
//
// Entry points:
//   Dispatch(fn)        one routine running fn once (the timer's Dispatcher);
//   Async(f, args...)   the same, with a std::future for the result or the
//                       exception;
//   CreateTask(name, fn, priority[, processor])
//                       a named long-lived routine (it may loop with
//                       WaitForData / SleepFor); NotifyTask(name) wakes its
//                       WaitForData; RemoveTask(name) cancels it.
// Nothing is dropped silently: at most `max_routines` routines are live
// (queued, parked or running); beyond that Dispatch() refuses (counted and
// logged) and the timer layer re-arms periodic timers.
//
// Shutdown() is ordered and never hangs on well-behaved routines: it refuses
// new work, cancels every live routine (a parked one is woken; each throws
// RoutineCancelled at its next suspension point and unwinds), waits until
// none is left — queued routines that never started are dropped, an Async
// future then reports std::future_error (broken promise) — and joins every
// processor. A routine that never reaches a suspension point is logged by
// name every few seconds while Shutdown() waits for it.
//
// Threads: every method is thread-safe, also from inside routines, except
// Shutdown() and the destructor (not from a routine of this scheduler).

#ifndef SCHEDULER_SCHEDULER_H_
#define SCHEDULER_SCHEDULER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/common/mutex.h"
#include "scheduler/block_pool.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/processor_group.h"
#include "scheduler/execution_context.h"
#include "scheduler/routine_stack.h"
#include "timer/dispatcher.h"
#include "timer/timer_system.h"

namespace cyber {
namespace scheduler {

class Scheduler final : public timer::Dispatcher, public CRoutine::Host {
 public:
  struct Options {
    std::string name = "sched";
    // Processor groups; empty: one group of hardware_concurrency processors.
    SchedulerConfig config;
    size_t stack_size = kDefaultStackSize;
    size_t max_routines = size_t{1} << 16;
    // false: no processor threads. The owner runs queued routines on its
    // own thread with RunReady()/RunOneReady(), one at a time, in the
    // policy's order: what a simulated graph does for a run that is the
    // same every time (cyber/simulation/simulated_graph.h).
    bool run_threads = true;
    // Early hand-over of timer work (processor_group.h, "Work held until
    // its instant"; timer::Dispatcher::HandOverLead): a timer system on
    // the steady clock that dispatches here processes each event
    // `timer_handoff_lead` before it (at most a quarter tick) and hands its
    // callbacks over then; a processor sleeps on its own timer until the
    // event and runs them, never before it. No spinning: the cost is one
    // timed wake-up of a processor per event (Stats::handoff_wakeups).
    // false: the tick thread processes each event when it comes and wakes
    // a processor then (two wake-ups in series). Only with processor
    // threads. No processor spins for the hand-off.
    bool anticipate_timer_work = true;
    absl::Duration timer_handoff_lead = absl::Microseconds(400);
  };
  struct Stats {
    uint64_t dispatched = 0;  // routines created by Dispatch/Async
    uint64_t refused = 0;     // Dispatch() calls refused
    uint64_t finished = 0;    // routines that ran to their end
    uint64_t switches = 0;    // resumes, all processors
    size_t live = 0;          // routines queued, parked or running now
    int processors = 0;
    // Early hand-over (Options::anticipate_timer_work): routines handed
    // over ahead of their instant and held until it, and how far ahead
    // they came, summed; the waiting processor's wake-ups by its own
    // timer, and of those the ones that found nothing to run (an
    // announced event that brought no work for it, or a late tick thread).
    uint64_t handoffs_early = 0;
    absl::Duration handoff_held;
    uint64_t handoff_wakeups = 0;
    uint64_t handoff_idle_wakeups = 0;
  };

  explicit Scheduler(Options options);
  ~Scheduler() override;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // The timing wheel that SleepFor arms (its shared system, which the
  // scheduler then holds, so a routine can always cancel its sleep). Set
  // before routines sleep; setting another keeps the earlier ones alive.
  void SetTimerSystem(timer::TimerSystem* driver);

  using timer::Dispatcher::Dispatch;
  // One routine at `priority` in the first processor group (on a route:
  // at route.priority in group route.group, an index RouteFor gave out; a
  // group this scheduler does not have is the first). With `owner`
  // (held until the task has run or been dropped) and a task that fits in
  // std::function's inline buffer, this allocates nothing in the steady
  // state, and builds no routine: a finished one-off routine is kept and
  // given the next task (kRecycledRoutines below; beyond it, the routine's
  // memory comes from a pool, BlockPool), the live set is an intrusive
  // list and the run queues are rings.
  bool Dispatch(std::function<void()> task, int priority) override;
  bool Dispatch(std::function<void()> task, int priority,
                std::shared_ptr<const void> owner) override;
  bool Dispatch(std::function<void()> task, timer::Route route,
                std::shared_ptr<const void> owner) override;
  // Batched hand-over (timer::Dispatcher): routines this thread dispatches
  // or wakes between the two are queued at EndBatch(), with one lock per
  // processor group and at most one wake-up per processor. REQUIRES: no
  // suspension point between them (a routine must not move threads with
  // a batch open); the tick thread's pass has none.
  void BeginBatch() override;
  void EndBatch() override;
  // What the timer system announces (timer::Dispatcher): stored, for the
  // anticipating processors. One atomic store; any thread.
  void ExpectWork(
      std::optional<std::chrono::steady_clock::time_point> when) override;
  // Options::timer_handoff_lead while anticipating with processor threads,
  // else zero (timer::Dispatcher). Work handed over in an early batch
  // (timer::DispatchBatch::NotBefore() on the handing thread) is held until
  // its instant, also a sleeping routine woken by another scheduler's
  // timer system.
  std::chrono::nanoseconds HandOverLead() const override;
  // The conf's `tasks { name prio }` for `name` (in its group), else 0.
  int PriorityFor(const std::string& name) const override;
  // The conf entry's priority and group for `name` ({0, 0}, the first
  // group, if no group lists it): what timers, reader deliveries and tasks
  // named so run on. A lookup in the conf's maps: resolve once, not per
  // dispatch.
  timer::Route RouteFor(const std::string& name) const override;
  // The route of the routine running on this thread, if it is one of this
  // scheduler's; else {0, 0}. Async() runs its work on it, so a task that a
  // component's callback starts keeps the component's priority and group.
  timer::Route CurrentRoute() const;

  // Errors: AlreadyExists for a duplicate name, InvalidArgument for an empty
  // name or body or a processor index outside the task's group,
  // FailedPrecondition after Shutdown(), ResourceExhausted when full.
  // `priority` < 0: the conf's priority for this name, else 0.
  absl::Status CreateTask(const std::string& name, std::function<void()> body,
                          int priority = -1, int processor = -1);
  // Errors: NotFound for an unknown (or finished) task.
  absl::Status NotifyTask(const std::string& name);
  absl::Status RemoveTask(const std::string& name);

  template <typename F, typename... Args>
  auto Async(F&& f, Args&&... args)
      -> std::future<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>>;

  // --- Without processor threads (Options::run_threads false) ----------
  // Runs queued routines on the calling thread until none is queued, or
  // `max_resumes` resumes have run (a routine that yields is queued again,
  // so one that loops on Yield() would keep this going). Returns the number
  // of resumes. REQUIRES: one caller at a time, not from a routine.
  size_t RunReady(size_t max_resumes = SIZE_MAX);
  // Runs one queued routine, waiting up to `wait` of real time for one to be
  // queued (from another thread); false if none came.
  bool RunOneReady(absl::Duration wait);
  // Whether a routine is queued (not parked, not running), and how many.
  bool HasReady() const;
  size_t queued() const;

  // Without processor threads, Shutdown() runs the cancelled routines'
  // unwinding on the calling thread.
  void Shutdown();
  // Sizes the routine pools for `routines` in flight at once: that many
  // routine blocks and coroutine contexts (with their stacks) are made now
  // and kept, so a burst of up to that many dispatched callbacks, Async
  // tasks or woken sleepers allocates nothing, even while the routines of
  // the previous burst are still being returned by processor threads.
  // For a deployment that wants no allocation after start-up, and for
  // tests that count allocations. Capped by the pools' caches (4096
  // routine blocks, 64 contexts): beyond them, OutOfRange naming the
  // scheduler, the count and what was kept (the caps are reserved).
  absl::Status ReserveRoutines(size_t routines);
  Stats stats() const;
  const std::string& name() const { return options_.name; }
  StackPool::Stats stack_stats() const { return contexts_.stack_stats(); }

  // CRoutine::Host
  // (timer_system() and stopping() are the Host's.)
  void MakeReady(std::shared_ptr<CRoutine> routine) override;
  ContextPool* context_pool() override { return &contexts_; }

 private:
  absl::Status Admit(const std::shared_ptr<CRoutine>& routine)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes a finished routine out of the live list.
  void ForgetLocked(CRoutine* routine) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues a ready routine in its group, or holds it for this thread's
  // open batch.
  void Queue(std::shared_ptr<CRoutine> routine);
  void OnReturned(std::shared_ptr<CRoutine> routine, CRoutine::State state);
  // The named task (NotFound otherwise), optionally forgetting it.
  absl::StatusOr<std::shared_ptr<CRoutine>> FindTask(const std::string& name,
                                                     bool remove);
  int GroupForTask(const std::string& task) const;
  // When timer work is next expected, as last announced (ExpectWork); the
  // processors' Anticipation::next_work.
  std::optional<std::chrono::steady_clock::time_point> ExpectedTimerWork()
      const;

  const Options options_;
  ContextPool contexts_;
  Mutex systems_mu_;
  std::vector<std::shared_ptr<timer::TimerSystemCore>> systems_
      ABSL_GUARDED_BY(systems_mu_);  // keeps every system set alive
  std::vector<std::unique_ptr<ProcessorGroup>> groups_;
  // Recycled memory for dispatched routines (see block_pool.h).
  const std::shared_ptr<BlockPool> routine_memory_;
  // Finished one-off routines (Dispatch, Async) kept for the next
  // dispatches (recycled_, with mu_): a dispatch takes one and gives it its
  // body instead of building a routine (CRoutine::Recycle), under the lock
  // it takes anyway to admit the routine. At most this many are kept: a
  // burst of that many callbacks in flight at once builds none when it
  // comes again. What is kept was in use at once before: ~420 bytes each.
  static constexpr size_t kRecycledRoutines = 16384;
  // The last ExpectWork(): steady_clock nanoseconds since its epoch, or
  // kNothingExpected.
  static constexpr int64_t kNothingExpected = INT64_MIN;
  std::atomic<int64_t> expected_work_ns_{kNothingExpected};

  mutable Mutex mu_;
  CondVar all_finished_;
  // Live routines (queued, parked or running): an intrusive list through
  // CRoutine::live_link(), whose `self` keeps each one alive.
  CRoutine* live_head_ ABSL_GUARDED_BY(mu_) = nullptr;
  size_t live_count_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::shared_ptr<CRoutine>> tasks_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<CRoutine>> recycled_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

// --- implementation of the template ---------------------------------------

template <typename F, typename... Args>
auto Scheduler::Async(F&& f, Args&&... args)
    -> std::future<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>> {
  using R = std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>;
  auto promise = std::make_shared<std::promise<R>>();
  std::future<R> future = promise->get_future();
  auto call = [fn = std::forward<F>(f),
               bound = std::make_tuple(std::forward<Args>(args)...)]() mutable {
    return std::apply(std::move(fn), std::move(bound));
  };
  const bool accepted = Dispatch([promise, call = std::move(call)]() mutable {
    try {
      if constexpr (std::is_void_v<R>) {
        call();
        promise->set_value();
      } else {
        promise->set_value(call());
      }
    } catch (const RoutineCancelled&) {
      throw;  // the scheduler is stopping: the future reports broken promise
    } catch (const boost::context::detail::forced_unwind&) {
      throw;
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  }, CurrentRoute(), nullptr);
  if (!accepted) {
    promise->set_exception(std::make_exception_ptr(std::runtime_error(
        "scheduler \"" + options_.name +
        "\": Async task refused (shutting down or max_routines reached)")));
  }
  return future;
}

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_SCHEDULER_H_
