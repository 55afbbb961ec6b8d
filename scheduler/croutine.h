// CRoutine: a stackful coroutine (boost::context::fiber) that the scheduler's
// processor threads run: timer callbacks, cyber::Async work and long-lived
// tasks.
//
// Why stackful: robot code written as plain blocking functions ("wait for the
// next lidar frame, then ...") can suspend anywhere in a call chain without
// being rewritten as callbacks, and a suspended routine costs a stack, not a
// thread. A resume + yield round trip is a few nanoseconds.
//
// States: kReady (queued or running), kSleep (parked until a timing-wheel
// entry fires: no thread sleeps), kDataWait (parked until what it waits
// for: Notify() for WaitForData, Unpark() for Park(), WakeWait() for a
// PrivateWait), kFinished. A routine runs on one processor at a time but
// may move between processors across suspensions, so routine code must not
// cache thread_local addresses across Yield/SleepFor/WaitForData.
//
// Three wake-ups, kept apart. Notify() is the user's (a CreateTask loop's
// WaitForData, Scheduler::NotifyTask); Unpark() is WaitList's (a
// synchronous stop waiting for a callback); WakeWait() ends one PrivateWait
// (a service call waiting for its outcome). Each ends only its own kind of
// wait and is kept, if it comes early, only for that kind: a notification
// that arrives while the routine waits inside a library call stays pending
// for its next WaitForData, and ends nothing else.
//
// Cancellation: Cancel(), or a stopping scheduler, makes the routine's next
// suspension point (Yield, SleepFor, SleepUntil, WaitForData,
// PrivateWait::Park) throw RoutineCancelled, which unwinds its stack
// (running destructors) up to the routine's entry, where it is caught: the
// routine finishes cleanly. A routine in a loop without suspension points
// cannot be cancelled.
//
// A routine borrows an ExecutionContext (a guard-paged stack with a parked
// fiber; see execution_context.h) at its first resume and returns it when it
// finishes, so queued routines that never started hold no stack, and a stack
// overflow is a SIGSEGV on the guard page.
//
// Threads: Resume()/AfterSwitchOut() by the processor that dequeued the
// routine; the static in-routine functions from the routine itself;
// Notify()/Cancel()/OnExpired() from any thread.

#ifndef SCHEDULER_CROUTINE_H_
#define SCHEDULER_CROUTINE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/wait_list.h"
#include "cyber/time/instant.h"
#include "scheduler/execution_context.h"
#include "cyber/common/runtime_scope.h"
#include "timer/timer_system_core.h"

namespace cyber {
namespace scheduler {

class CRoutine;

namespace croutine_internal {
// The routine running on this thread (CRoutine::Current()). Accessed inline
// only by Resume(), on the processor's own stack; routine code reads it
// through the out-of-line Current().
inline thread_local CRoutine* t_current = nullptr;
}  // namespace croutine_internal

// Thrown at a suspension point of a cancelled routine. Do not swallow it.
// (The timer layer knows it by its base and lets it pass.)
struct RoutineCancelled : timer::ExecutionCancelled {};

class CRoutine final : public timer::ExpiryTargetOf<CRoutine>, public Parkable {
 public:
  enum class State { kReady, kSleep, kDataWait, kFinished };

  // What a routine needs from its scheduler. The two facts read at every
  // resume and suspension point are plain atomics here, not virtual calls:
  // a round trip through a routine costs a few nanoseconds, and each call
  // around a stack switch costs about as much again.
  class Host {
   public:
    explicit Host(std::string runtime_name) : scope_(std::move(runtime_name)) {}
    virtual ~Host() = default;
    // Queues a routine that became ready (woken or yielded).
    virtual void MakeReady(std::shared_ptr<CRoutine> routine) = 0;
    virtual ContextPool* context_pool() = 0;
    // The timing wheel SleepFor arms; null if none (SleepFor then fails).
    // Stays valid while the host lives.
    timer::TimerSystemCore* timer_system() const {
      return scope_.timers.load(std::memory_order_acquire);
    }
    // True once the scheduler shuts down: suspension points then throw.
    bool stopping() const { return stopping_.load(std::memory_order_acquire); }
    // The runtime scope installed around every resume of this host's
    // routines (cyber/common/runtime_scope.h): its scheduler is the host,
    // its timers the wheel SleepFor arms, its clock that wheel's clock.
    RuntimeScope* scope() { return &scope_; }
    const RuntimeScope* scope() const { return &scope_; }

   protected:
    RuntimeScope scope_;
    std::atomic<bool> stopping_{false};
  };

  // `processor`: pin to that processor index of its group, or -1 for any.
  // `owner`: held until the body has run (or the routine ended without
  // running it), so `body` may be a trivially copyable pair of words
  // pointing into it: std::function stores that without allocating.
  CRoutine(std::string name, std::function<void()> body, int priority,
           int processor, Host* host,
           std::shared_ptr<const void> owner = nullptr);
  ~CRoutine();

  // --- Processor side ---------------------------------------------------
  // Runs the routine until it yields, parks or finishes; returns its state.
  // Always inlined (see Yield() and ExecutionContext::Enter()).
  __attribute__((always_inline)) State Resume() {
    // Queued implies kReady (a wake sets it before queueing): nothing to set.
    std::function<void()>* const first_entry =
        context_ ? nullptr : AcquireContext();
    // The routine runs on behalf of its host's runtime: timers it makes
    // without a TimerSystem, Time::Now(), Rate, Async and Node follow that
    // runtime (cyber/common/runtime_scope.h). This runs on the processor's
    // own stack and Enter() returns on the same thread, so the thread's
    // variables are set and restored inline (ScopedRuntime is out of line).
    const RuntimeScope*& scope = runtime_internal::t_scope;
    Parkable*& coroutine = coroutine_internal::t_coroutine;
    CRoutine*& current = croutine_internal::t_current;
    const RuntimeScope* const outer_scope = scope;
    Parkable* const outer_coroutine = coroutine;
    CRoutine* const outer = current;
    scope = host_->scope();
    coroutine = this;
    current = this;
    const bool finished = context_->Enter(first_entry);
    current = outer;
    coroutine = outer_coroutine;
    scope = outer_scope;
    if (finished) ReleaseContext();
    return state_.load();
  }
  // After Resume() returned kSleep/kDataWait: parks the routine, or queues it
  // again if it was woken (or cancelled) while switching out.
  void AfterSwitchOut();

  // --- Inside a routine -------------------------------------------------
  // The routine running on this thread, or null outside routines.
  static CRoutine* Current();
  // Back of the queue; runs again when the policy picks it.
  // Inline: one call level less around the switch (see Enter()); Current()
  // stays out of line, so the routine's thread is looked up afresh.
  static void Yield() {
    CRoutine* self = Current();
    if (self == nullptr) YieldOutsideRoutine();
    // Running means kReady already: switch out without touching any lock;
    // the processor sees kReady and queues the routine again. (A
    // cancellation pending now is seen right after the switch back.)
    self->SwitchOut();
    self->CancellationPoint();
  }
  // Parks the routine; a timing-wheel entry wakes it at `deadline` (never
  // earlier). Throws RoutineCancelled when cancelled. Any length is honoured:
  // a deadline beyond the wheel's maximum delay is slept in legs of at most
  // that delay, and InfiniteFuture (SleepFor(InfiniteDuration())) parks
  // until cancelled. A deadline already due yields. Fails (throws
  // RoutineCancelled, logged) only when the timer system is shut down, which
  // happens only while the process shuts down.
  static void SleepUntil(Instant deadline);
  static void SleepFor(absl::Duration d);
  // Parks until Notify() (returns at once if a notification is pending).
  static void WaitForData();

  // A wait of library code inside a routine, with a wake-up of its own
  // (see the header comment): WakeWait(ticket()) ends it, and nothing else
  // but cancellation does.
  //
  //   CRoutine::PrivateWait wait;                   // in the routine
  //   { lock; waiter = {wait.routine(), wait.ticket()}; }  // published
  //   while (!done()) wait.Park();                  // a cancellation point
  //   ...                                           // the waker, any thread:
  //   waiter.routine->WakeWait(waiter.ticket);
  //
  // A WakeWait() that comes before Park() is kept: Park() then returns at
  // once. One that comes after the PrivateWait is destroyed (or for an
  // older one) is ignored, so nothing is left pending for a later wait.
  // One PrivateWait per routine at a time; it allocates nothing.
  class PrivateWait {
   public:
    // REQUIRES: called in a routine that has no other PrivateWait.
    PrivateWait();
    ~PrivateWait();
    PrivateWait(const PrivateWait&) = delete;
    PrivateWait& operator=(const PrivateWait&) = delete;

    CRoutine* routine() const { return routine_; }
    uint64_t ticket() const { return ticket_; }
    // Parks until WakeWait(ticket()) (returns at once if one came since the
    // last Park() returned). Throws RoutineCancelled when cancelled.
    void Park();

   private:
    CRoutine* const routine_;
    const uint64_t ticket_;
  };
  // Parkable (cyber/time/wait_list.h): Park() is called by the routine
  // itself (CurrentCoroutine() == this) and is not a cancellation point;
  // Unpark() from anywhere. A synchronous stop waiting in a routine parks
  // here instead of blocking or spinning its processor.
  void Park() override;
  void Unpark() override;
  // SleepUntil(deadline) if `clock` is the clock of this routine's timing
  // wheel (Rate::Sleep and cyber::Time sleep through this from a routine).
  bool ParkUntil(Instant deadline, Clock* clock) override;
  std::string DebugName() const override { return name_; }

  // --- Any thread -------------------------------------------------------
  void Notify();
  // Ends the PrivateWait `ticket` names (see PrivateWait), if it is still
  // the routine's current one; otherwise does nothing.
  void WakeWait(uint64_t ticket);
  void Cancel();
  bool cancelled() const { return cancel_.load(std::memory_order_acquire); }

  const std::string& name() const { return name_; }
  Host* host() const { return host_; }
  int priority() const { return priority_; }
  int processor() const { return processor_; }
  // Names the routine object: a recycled routine (Recycle) keeps its id
  // from one dispatch to the next.
  uint64_t id() const { return id_; }
  // The processor group that runs it (set once by the scheduler).
  int group() const { return group_; }
  void set_group(int group) { group_ = group; }
  // A named task of its scheduler (CreateTask), set once before it is
  // queued: only those are looked up by name when they finish.
  bool named_task() const { return named_task_; }
  void set_named_task() { named_task_ = true; }

  // The scheduler's intrusive list of live routines (no node allocated per
  // routine): the links and the reference that keeps a parked routine
  // alive. Only the scheduler reaches it (a friend), under its lock.
  struct LiveLink {
    CRoutine* prev = nullptr;
    CRoutine* next = nullptr;
    std::shared_ptr<CRoutine> self;
  };
  State state() const;

  void OnExpired(uint32_t arm_seq);

  // A finished one-off routine, made ready again for `body` on `priority`
  // and `group`, holding `owner` until the body has run: what a dispatch
  // costs instead of building a routine (the scheduler keeps finished
  // ones, scheduler.h). It keeps its id. REQUIRES: the caller holds the
  // only reference (no other thread can reach it); it finished; it is
  // not a named task and not pinned to a processor.
  void Recycle(std::function<void()> body, int priority, int group,
               std::shared_ptr<const void> owner);

 private:
  friend class Scheduler;  // live_link_
  // armed_system_ in the destructor: the last reference is gone, every
  // write to it happened before (the reference count orders them), and no
  // other thread can reach the routine any more: no lock needed.
  timer::TimerSystemCore* ArmedSystemAtDestruction() const
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return armed_system_;
  }
  enum WakeReason { kTimer, kData, kCancel, kUnpark, kPrivate };
  // What a routine in kDataWait waits for.
  enum class DataWait { kNotify, kUnpark, kPrivate };
  [[noreturn]] static void YieldOutsideRoutine();
  // Resume()'s rare paths: the first resume borrows a context (returns the
  // entry to start), the last returns it.
  std::function<void()>* AcquireContext();
  void ReleaseContext();
  void Wake(WakeReason reason);
  // Whether `reason` ends the routine's current suspension; if so, marks
  // it woken and returns whether the caller must queue it (MakeReady).
  bool WakeLocked(WakeReason reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Switches back to the processor; returns when resumed (possibly on
  // another processor thread).
  void SwitchOut() { context_->SwitchOut(); }
  // Throws RoutineCancelled if cancelled or the scheduler is stopping.
  void CancellationPoint() const {
    if (cancelled() || host_->stopping()) throw RoutineCancelled();
  }
  std::shared_ptr<CRoutine> Self();

  const std::string name_;
  std::function<void()> body_;
  int priority_;  // changed only by Recycle (no other reference then)
  const int processor_;
  Host* const host_;
  const uint64_t id_;
  int group_ = 0;
  bool named_task_ = false;
  // The wheel the routine last armed a sleep on (null: never): only then
  // can its entry be armed when it is destroyed (a timer callback's routine
  // never sleeps in the common case, and its end then takes no wheel lock),
  // and that wheel is the one to cancel on, without asking the host, which
  // may be gone when the last reference is dropped (the tick thread holds
  // one while it expires the routine's sleep).
  timer::TimerSystemCore* armed_system_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::atomic<bool> cancel_{false};
  std::shared_ptr<const void> owner_;  // released with body_
  LiveLink live_link_;  // the scheduler's, under its lock

  // The routine's entry point as its context runs it: body_ plus the
  // catching of everything it may throw.
  std::function<void()> entry_;
  // Held from the first resume until the routine finishes.
  std::unique_ptr<ExecutionContext> context_;

  // Written under mu_ where a waker must agree (parking, waking, finishing);
  // atomic so the processor and Yield() read it without the lock.
  std::atomic<State> state_{State::kReady};
  mutable Mutex mu_;
  bool parked_ ABSL_GUARDED_BY(mu_) = false;        // off-CPU, in no queue
  bool wake_pending_ ABSL_GUARDED_BY(mu_) = false;  // woken while switching out
  bool data_pending_ ABSL_GUARDED_BY(mu_) = false;  // Notify() not yet consumed
  uint32_t sleep_seq_ ABSL_GUARDED_BY(mu_) = 0;     // arming of the current sleep
  DataWait data_wait_ ABSL_GUARDED_BY(mu_) = DataWait::kNotify;  // in kDataWait
  bool unpark_pending_ ABSL_GUARDED_BY(mu_) = false;  // Unpark() not consumed
  // The current PrivateWait (0: none), the last ticket handed out, and
  // whether WakeWait(wait_ticket_) came and was not consumed yet.
  uint64_t wait_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t last_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  bool wait_woken_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_CROUTINE_H_
