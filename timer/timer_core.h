// TimerCore: one timer's schedule and its one state machine, behind the
// Timer handle (timer.h). Internal to timer/; documented here because this
// is where the timing and stop guarantees are enforced.
//
// One core per Timer, for the Timer's whole life: Configure() replaces the
// options inside it, never the core, so "a call is running" is a fact about
// the timer, not about a configuration. The core is shared (std::shared_ptr)
// between the handle, the wheel entry in flight and a run queued in a
// dispatcher; whatever it points to it holds (the TimerSystemCore by
// shared_ptr), so it can outlive its handle and its TimerSystem safely.
//
// The configuration lives inside the core, not in an options object of its
// own: the schedule's rules (ScheduleRules), the precision and the
// callback are read by every arming and call, and a separate allocation
// cost every timer ~200 bytes and every expiry a cache miss. Only the
// name and on_cancel, which no call reads, are out of line (ColdOptions,
// allocated only when one is set). A running call keeps its callback alive
// by moving it out of the core for the call and back afterwards (Run()),
// so a Configure() from the callback itself cannot destroy the function
// that is running.
//
// The lock. Each core's state is guarded by a lock shared with other cores
// (its TimerStripe, timer_stripes.h), and a waiting Stop() waits on the
// stripe's list: a pointer per timer instead of a mutex and a wait list.
//
// States and transitions: one TimerState (timer_state.h), state_, under
// the stripe's lock; it changes only through the transition table there
// (TransitionLocked), never by assignment. k_ is the schedule's current
// call, schedule_.call(). In brief:
//
//   kUnconfigured  never configured: Start() refused
//   kIdle          no schedule, no call in flight
//   kArmed         schedule on; the wheel entry is armed for call k_
//   kQueued        schedule on; call k_ handed to the dispatcher, not begun
//   kRunning       schedule on; the callback of call k_ runs
//   kRunningRestartPending  a callback runs and a new schedule (a restart
//                  from kFinishing, or Reset()) is armed when it ends
//   kFinishing     schedule off; a callback still runs (stopped while
//                  running, or a oneshot, whose schedule ends when its call
//                  begins)
//   kRetiring      retired (the handle is gone: Start() refused); its last
//                  callback still runs
//   kRetired       retired; nothing runs or will
//
// Where each operation raises which event of the table (timer_state.h has
// the whole table, with every invalid pair):
//
//   Configure()  Stop(), then kConfigure: kUnconfigured/kArmed/kQueued ->
//                kIdle, kRunning(RestartPending) -> kFinishing; retired
//                stays retired (a Start() that
//                raced in after the Stop() is undone)
//   Start()      refused in kUnconfigured/kRetiring/kRetired; no change in
//                kArmed/kQueued/kRunning(RestartPending) (already on);
//                kNewSchedule: kIdle -> kArmed (new schedule from now),
//                kFinishing -> kRunningRestartPending (restart while its
//                call runs; armed when the call ends)
//   Reset()      as Start(), but kDropCountdown first: kArmed/kQueued ->
//                kIdle (entry cancelled or queued run dropped), kRunning:
//                its next arming cancelled; then kNewSchedule (kIdle ->
//                kArmed; kRunning/kFinishing -> kRunningRestartPending)
//   Stop()       kStop: kArmed/kQueued -> kIdle (wheel entry cancelled; a
//                queued run is dropped); kRunning(RestartPending) ->
//                kFinishing; then, in kFinishing or kRetiring, waits for
//                the call to end (unless called by that call itself)
//   Retire()     kRetire, as Stop() but to kRetired/kRetiring, in the same
//                hold of the lock: no Start() gets in between
//   expiry       kExpire: kArmed -> kQueued (dispatched; a periodic timer
//                is provisionally armed for k_+1 so the tick thread plans
//                its sleep with it (armed_for_next_); under kSkip a call
//                dispatched when later periods are due too stands for the
//                latest, also when it begins late)
//                kQueued: the provisional arming came due before the call
//                began (starved): that period is counted missed and the
//                queued call stands for the next one
//                kRunning: an overrun; resolved when the call ends
//   dispatch refused  kDispatchRefused: kQueued -> kArmed (periodic: next
//                period, the refused one counted missed; oneshot: retried
//                with a backoff of 1, 2, 4 ... ticks up to 1 s, never
//                busily)
//   call begins  kCallBegins: kQueued -> kRunning (periodic);
//                kOneshotCallBegins: kQueued -> kFinishing (oneshot)
//   call ends    kCallEndsKeepOn: kRunning -> kArmed (next call per the
//                overrun policy, decided in ticks), kRunningRestartPending
//                -> kArmed (the new schedule's first call)
//                kCallEndsStop, if a Stop() waits, it was stopped or
//                retired, its system shut down or the dispatcher cancelled
//                the call: kRunning(RestartPending)/kFinishing -> kIdle,
//                kRetiring -> kRetired
//   arm refused by the wheel  kArmFailed: kArmed/kQueued -> kIdle (logged;
//                Start() returns the error). A failed provisional arming
//                at an expiry only ends the next period: kQueued stays
//   system shut down (seen at a Start() or when a queued call begins):
//                kSystemShutDown: kArmed/kQueued -> kIdle,
//                FailedPrecondition
//
// Outcomes and queries (Timer::phase(), Cancel(), TimeUntilNextCall(),
// TimerSystem::PendingTimers/CancelAll). How the last schedule ended is a
// field of its own, outcome_, set in TransitionLocked from the event and
// whether the schedule was on before it: kOneshotCallBegins -> fired; an
// event that ends a schedule that was on (kStop, kRetire, kConfigure,
// kDropCountdown, kArmFailed, kSystemShutDown, kCallEndsStop from
// kRunning) -> cancelled; kNewSchedule -> none (not started). phase()
// reads it only when no schedule is on and no call is in flight. Cancel()
// is Stop() returning whether the schedule was on when it took effect
// (decided under the lock, where a queued call decides to begin): of a
// Cancel() and the call it races with, exactly one wins.
//
// Pending timers. Every core whose schedule is on is counted in its
// system (TimerSystemCore::pending_timers, one relaxed atomic add) by
// SyncPendingLocked, which TransitionLocked calls whenever the state
// enters or leaves ScheduleOn; counted_ says whether this core is. The
// cap is checked where a schedule turns on, in BeginLocked before
// kNewSchedule (ReservePendingLocked): the only event that enters
// ScheduleOn. A Reset() of a pending timer keeps its slot through
// kDropCountdown (it is not a new pending timer, and must not lose its
// slot to another timer for the instant between). Every core is listed in
// its stripe (TimerStripe::cores) from construction to destruction;
// CancelAllOn walks the stripes one lock at a time, takes a reference to
// each listed core of the system whose schedule is on, and cancels them
// with no lock held.
//
// Stop() waits for a call of another execution (thread or coroutine; see
// cyber/time/wait_list.h) on a WaitList: a thread blocks, a coroutine
// parks off its processor (it never yield-spins, whatever its priority).
// While a Stop() waits, the call's end never re-arms, even if the callback
// started its own timer again meanwhile: when Stop() returns, no call runs
// and none begins, unless somebody starts the timer after that.
//
// A Stop() that waits is listed in the stop registry (timer_stop_registry.h)
// while it waits, which warns when it waits too long; it is listed under
// the stripe's lock and taken off after releasing it.
//
// Lock order: stripe -> wheel lock (Arm/Cancel) -> the tick thread's
// wake-up event; stripe -> a waiting coroutine's lock -> its processor queue
// (WakeAll); stripe -> the stop registry's lock. Never two stripes at once.
// User code and Dispatch() run with no lock held.
//
// Threads: every method from any thread or coroutine, including the timer's
// own callback.

#ifndef TIMER_TIMER_CORE_H_
#define TIMER_TIMER_CORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "timer/latency_histogram.h"
#include "timer/periodic_schedule.h"
#include "timer/timer_options.h"
#include "timer/timer_state.h"
#include "timer/timer_stripes.h"
#include "timer/timer_system_core.h"

namespace cyber {
namespace timer {

namespace timer_internal {
class StopWaitRecord;  // timer_stop_registry.h
}  // namespace timer_internal

class TimerCore final : public ExpiryTargetOf<TimerCore> {
 public:
  using State = TimerState;
  using Event = TimerStateEvent;

  // `system` null: bound at each Start() (the process default).
  explicit TimerCore(std::shared_ptr<TimerSystemCore> system);
  ~TimerCore();

  // Stops (as Stop()) and replaces the options; `status` is what validating
  // them gave (Start() returns it while not OK). An empty options.name
  // means the automatic name, "timer#<id>".
  void Configure(TimerOptions options, absl::Status status);
  // Start (reset false): starts the schedule from now; OK if already
  // running. Reset (reset true): the same, but a running schedule starts
  // again from now (a new countdown) instead of continuing; never waits for
  // a running call.
  // Errors: the configuration's; FailedPrecondition if never configured,
  // retired, or the timer system is shut down.
  //
  // StartFixed: on the core's own system (REQUIRES:
  // has_fixed_system()). StartDefault: on the current runtime's
  // (CurrentRuntime(), cyber/common/runtime_scope.h); no lookup and no
  // reference count when the timer restarts on the system it last ran on.
  absl::Status StartFixed(bool reset);
  absl::Status StartDefault(bool reset);
  void Stop();
  // Stop(), returning whether it prevented a call: the schedule was on
  // (ScheduleOn) when it took effect.
  bool Cancel();
  // Stop(), and refuse any later Start() (the handle is going away).
  void Retire();

  // See Timer::phase(), TimeUntilNextCall(), clock(), IsSteady().
  TimerPhase phase() const;
  absl::Duration TimeUntilNextCall() const;
  // See Timer::IsReady().
  bool IsReady() const;
  Clock* clock() const;
  bool IsSteady() const;
  // Cancels (as Cancel()) every timer whose schedule is on on `system`,
  // also on a system that shut down (the sweep of
  // TimerSystem::ShutdownAndCancelAll); returns how many calls that
  // prevented and appends the names of those timers to `cancelled` (if
  // not null). What TimerSystemCore::CancelAllTimers() runs (installed at
  // binding).
  static size_t CancelAllOn(TimerSystemCore* system,
                            std::vector<std::string>* cancelled);

  bool IsRunning() const;
  TimerStatistics Statistics() const;
  std::string name() const;
  // The name given in the options; empty for an automatic name.
  std::string given_name() const;
  bool has_fixed_system() const { return fixed_; }
  // The fixed system (REQUIRES: has_fixed_system()); set at
  // construction and never changed, so read without the lock.
  TimerSystemCore* fixed_system() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return system_.get();
  }

  void OnExpired(uint32_t arm_seq);

 private:
  // `system` is the system to start on (null: shut down); `system_ref` owns
  // it when the core may have to bind to it (null when system is system_).
  absl::Status Begin(TimerSystemCore* system,
                     std::shared_ptr<TimerSystemCore> system_ref, bool reset);
  absl::Status BeginLocked(TimerSystemCore* system,
                           std::shared_ptr<TimerSystemCore> system_ref, bool reset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  void Run(uint32_t token);
  // Stop() (event kStop) or Retire() (kRetire), then on_cancel if it
  // prevented a call; returns whether it did. A schedule its system's
  // shutdown ended prevents nothing, except to the system's own sweep
  // (`system_sweep`, CancelAllOn).
  bool StopWith(Event event, bool system_sweep = false);
  // StopWith's wait for the call in flight (of another execution), listed
  // in the stop registry through `waiting` (which the caller destroys
  // after releasing the lock).
  void AwaitCallEndLocked(
      std::unique_ptr<timer_internal::StopWaitRecord>* waiting)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // The configuration no call reads: held by a snapshot where on_cancel is
  // called after the lock is released (a Configure() may replace it).
  struct ColdOptions {
    std::string name;
    std::function<void()> on_cancel;
  };
  // Calls cold.on_cancel (no lock held), catching and logging what it
  // throws.
  void CallOnCancel(const ColdOptions& cold) const;
  // The one way state_ changes: to TimerStateAfter(state_, event); also
  // records the outcome (outcome_) and keeps the pending count and list in
  // step (SyncPendingLocked), unless keep_pending_slot (Reset()'s
  // kDropCountdown: the caller syncs when it is done).
  // REQUIRES: the pair is valid (DCHECKed; left unchanged otherwise).
  // Inline: defined in timer_core.cc, its only user, and inlined into
  // every transition there (it is on every path of a timer).
  inline void TransitionLocked(Event event, bool keep_pending_slot = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // TransitionLocked's part for a transition that turned the schedule on
  // or off, or began a new schedule or a oneshot's call (out of the fast
  // path of a periodic timer's calls).
  void NoteScheduleChangeLocked(Event event, bool was_on,
                                bool keep_pending_slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // Counts the core in system_'s pending timers iff its schedule is on
  // (counted_ follows ScheduleOn(state_)), without the cap.
  void SyncPendingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // Before kNewSchedule: takes a pending slot on system_ within its cap
  // (nothing when counted_ already). ResourceExhausted naming the timer,
  // the system and the cap when full.
  absl::Status ReservePendingLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // Gives the slot back (REQUIRES: counted_).
  void ReleasePendingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // Into and out of the stripe's list of cores (constructor, destructor).
  void LinkIntoStripeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  void UnlinkFromStripeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  std::string NameLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  Instant ExpectedLocked(int64_t k) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // Arms for call k_ (or the instant `deadline`), recording the arming; on
  // failure logs, raises kArmFailed (-> kIdle) and returns the error.
  // REQUIRES: kArmed or kQueued.
  absl::Status ArmLocked(Instant deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // ArmLocked without the state change: on failure logs and returns the
  // error, the state as it was.
  absl::Status TryArmLocked(Instant deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // The "never" arming (see armed_never_): a previous arming cancelled,
  // nothing in the wheel; OK.
  absl::Status ArmNeverLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // TryArmLocked for call k_ + 1 (the provisional arming at an expiry),
  // remembering that it is (armed_for_next_).
  absl::Status ArmNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  void CancelLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // After a call that ended at `end`: picks the next k per the overrun
  // policy (schedule_.AfterRun), counts what it skipped, arms it.
  void ScheduleNextLocked(Instant end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // kSkip: if periods after k_ are due by `due_by` (a tick instant), call
  // k_ stands for the latest of them; the others are counted missed. A
  // stall or a late start then ends in one late call, never a stale call
  // followed by the late one.
  void SkipToLatestDueLocked(Instant due_by)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  // Binds to `system` (kIdle, or `system` is system_), validating the options
  // for its wheel and resolving the route of the calls (its dispatcher's
  // RouteFor: the conf entry named like the timer; an explicit priority
  // replaces the entry's). Nothing to do when the core is bound there for
  // this configuration.
  absl::Status BindLocked(TimerSystemCore* system,
                          std::shared_ptr<TimerSystemCore> system_ref)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);
  void HandleRefusal(uint32_t token);
  void RecordCallLocked(const TimerEvent& event, absl::Duration run_time)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu);

  // The lock and the stop waiters, shared with other timers (see
  // timer_stripes.h): one pointer instead of a mutex per timer.
  TimerStripe* const stripe_;

  // The whole lifecycle (configured, retired, restart pending included):
  // changed only by TransitionLocked.
  State state_ ABSL_GUARDED_BY(stripe_->mu) = State::kUnconfigured;
  const bool fixed_;  // system_ was given at construction and never changes
  // Not lifecycle state, so fields beside state_, each for its reason:
  //
  // bound_: a cache's validity: priority_/group_ were resolved, and the
  // options validated, for (this configuration, system_). Configure()
  // invalidates it; it says nothing about what the timer does, and is
  // true or false in every state. A bit-field: the byte also holds the
  // queries' flags below (the layout has no spare byte; bit-fields are
  // initialized in the constructor).
  bool bound_ : 1 ABSL_GUARDED_BY(stripe_->mu);
  // outcome_: how the last schedule ended, an Outcome (see the header
  // comment); counted_: the core is counted in system_'s pending timers
  // (SyncPendingLocked); has_on_cancel_: cold_->on_cancel is set, known
  // without reading cold_ (a cold cache line on the cancel path).
  enum Outcome : uint8_t { kNoOutcome, kFiredOutcome, kCancelledOutcome };
  uint8_t outcome_ : 2 ABSL_GUARDED_BY(stripe_->mu);
  uint8_t counted_ : 1 ABSL_GUARDED_BY(stripe_->mu);
  uint8_t has_on_cancel_ : 1 ABSL_GUARDED_BY(stripe_->mu);
  // armed_for_next_: wheel-entry bookkeeping, which call the entry is
  // armed for: k_ + 1 (by ArmNextLocked; meaningful while armed_seq_ != 0),
  // so the end of call k_ has nothing to re-arm. It pairs with armed_seq_,
  // which the wheel's expiry, a skip (SkipToLatestDueLocked) and every
  // arming change independently of the lifecycle; folding it in would
  // double kQueued and kRunning without making a transition clearer.
  bool armed_for_next_ ABSL_GUARDED_BY(stripe_->mu) = false;
  // armed_never_: the arming is "never" (an infinite delay or period, or
  // one beyond the wheel's range): the schedule is on (kArmed) and
  // cancellable, and nothing is in the wheel (armed_seq_ == 0).
  bool armed_never_ ABSL_GUARDED_BY(stripe_->mu) = false;
  // Counters: dispatch refusals in a row (a oneshot's retry backoff), and
  // the Stop()s waiting for the call in flight (while any waits, the call's
  // end never re-arms: kCallEndsStop).
  uint8_t refusals_in_a_row_ ABSL_GUARDED_BY(stripe_->mu) = 0;
  uint16_t stop_waiters_ ABSL_GUARDED_BY(stripe_->mu) = 0;
  // The route of its calls (Route: priority_, group_), resolved at binding
  // and again at the first Start() after a Configure(), even one from the
  // running call: never per call. Two fields, not a Route, so each fills a
  // gap the layout already had.
  int32_t priority_ ABSL_GUARDED_BY(stripe_->mu) = 0;
  const uint32_t id_;  // the automatic name is "timer#<id_>"
  uint32_t config_epoch_ ABSL_GUARDED_BY(stripe_->mu) = 0;  // per Configure
  uint32_t armed_seq_ ABSL_GUARDED_BY(stripe_->mu) = 0;  // 0: not armed
  uint32_t calls_ended_ ABSL_GUARDED_BY(stripe_->mu) = 0;
  int32_t group_ ABSL_GUARDED_BY(stripe_->mu) = 0;  // see priority_
  // The kQueued run's token: a queued run whose token differs was dropped.
  // 32 bits: a stale run would have to wait out 2^32 re-queues of its
  // timer to be mistaken for the current one.
  uint32_t queued_token_ ABSL_GUARDED_BY(stripe_->mu) = 0;
  // Where the current (or last) schedule runs; fixed for the core's life
  // when given at construction.
  std::shared_ptr<TimerSystemCore> system_ ABSL_GUARDED_BY(stripe_->mu);
  // The configuration (see the header comment). rules_.period is the
  // period or a oneshot's delay.
  ScheduleRules rules_ ABSL_GUARDED_BY(stripe_->mu);
  TimerPrecision precision_ ABSL_GUARDED_BY(stripe_->mu) = TimerPrecision::kTick;
  bool latency_percentiles_ ABSL_GUARDED_BY(stripe_->mu) = false;
  int32_t given_priority_ ABSL_GUARDED_BY(stripe_->mu) = kPriorityFromConf;
  absl::Status config_status_ ABSL_GUARDED_BY(stripe_->mu);
  // Schedule: call k is expected at origin + k * period; k_ below is its
  // current call (periodic_schedule.h).
  PeriodicSchedule schedule_ ABSL_GUARDED_BY(stripe_->mu);
  int64_t missed_since_last_ ABSL_GUARDED_BY(stripe_->mu) = 0;
  // Above: what Start/Stop/Cancel/an expiry read, together at the front
  // (with the wheel entry) so that an operation on one of many timers
  // touches few cache lines. Below: what only a call or a rare path reads.
  // The callback: TimerOptions::event_callback if set, else ::callback.
  // One slot for either (40 bytes, not two functions' 64). Empty while a
  // call has moved it out (Run()).
  using Callback = std::variant<std::function<void()>,
                                std::function<void(const TimerEvent&)>>;
  Callback callback_ ABSL_GUARDED_BY(stripe_->mu);
  // Null unless a name or on_cancel was given.
  std::shared_ptr<const ColdOptions> cold_ ABSL_GUARDED_BY(stripe_->mu);
  // The call in flight (kRunning/kFinishing).
  const void* runner_ ABSL_GUARDED_BY(stripe_->mu) = nullptr;
  // What the calls of this configuration recorded: the statistics and the
  // last run time. Out of line and made at the first thing recorded
  // (RecordLocked): most timeouts are cancelled without ever firing, and a
  // block of 64 bytes of counters in each would be memory and a cache line
  // for nothing. Configure() drops it (statistics describe one
  // configuration).
  struct Counters {
    uint64_t fires = 0;
    uint64_t overruns = 0;
    uint64_t missed_periods = 0;
    uint64_t exceptions = 0;
    uint64_t dispatch_refusals = 0;
    uint64_t early_fires = 0;
    int64_t lateness_max_ns = 0;
    int64_t run_time_max_ns = 0;
  };
  // Percentile histograms (2.3 KiB), only for timers whose options ask for
  // them (TimerOptions::latency_percentiles), allocated at the first call.
  struct Histograms {
    LatencyHistogram lateness;
    LatencyHistogram run_time;
  };
  struct CallRecord {
    Counters counters;
    int64_t last_run_ns = 0;
    std::unique_ptr<Histograms> histograms;
  };
  std::unique_ptr<CallRecord> record_ ABSL_GUARDED_BY(stripe_->mu);
  CallRecord& RecordLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe_->mu) {
    if (record_ == nullptr) record_ = std::make_unique<CallRecord>();
    return *record_;
  }
  // The stripe's list of its cores, this one's whole life: the next one,
  // and the pointer that points here (the stripe's head or the previous
  // core's stripe_next_). Every core of the list shares this stripe,
  // hence this lock.
  TimerCore* stripe_next_ ABSL_GUARDED_BY(stripe_->mu) = nullptr;
  TimerCore** stripe_pprev_ ABSL_GUARDED_BY(stripe_->mu) = nullptr;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_CORE_H_
