// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// TimerState: the one state of a timer's core (timer_core.h), and the one
// table of its transitions. A pure function of (state, event): no lock, no
// thread, no clock, so the table is tested on its own (timer_state_test.cc)
// and TimerCore changes its state only through it.
//
// Why one enum. The lifecycle used to be an enum plus flags (configured,
// retired, restart pending), and which combinations could occur was spread
// over the code. Here each combination that can occur is a state, and each
// pair the code never produces is explicitly invalid, so a new event or a
// new caller has to say where every state goes.
//
// States (the schedule's current call is k):
//
//   kUnconfigured           never configured: Start() is refused
//   kIdle                   configured; no schedule, no call in flight
//   kArmed                  schedule on; the wheel entry is armed for call k
//   kQueued                 schedule on; call k handed to the dispatcher,
//                           not begun
//   kRunning                schedule on; the callback of call k runs
//   kRunningRestartPending  the callback of a call runs, and a new schedule
//                           (Start() after Stop(), or Reset()) waits for it
//                           to end: armed then, never beside it
//   kFinishing              schedule off; a callback still runs (stopped
//                           while running, or a oneshot, whose schedule ends
//                           when its call begins)
//   kRetiring               retired (its handle is gone; Start() refused);
//                           its last callback still runs
//   kRetired                retired; nothing runs or will
//
// The table (TimerStateAfter). Rows are events, columns the state before
// (Uncf kUnconfigured, Qued kQueued, Run kRunning, RunRP
// kRunningRestartPending, Fin kFinishing, Rtng kRetiring, Retd kRetired);
// an entry is the state after, "=" no change (allowed), "." invalid: the
// core never raises that event in that state (it checks first; a DCHECK in
// the core says so).
//
//                      Uncf  Idle  Armed Qued  Run   RunRP Fin   Rtng  Retd
//   kConfigure         Idle  Idle  Idle  Idle  Fin   Fin   =     =     =
//   kStop              =     =     Idle  Idle  Fin   Fin   =     =     =
//   kRetire            Retd  Retd  Retd  Retd  Rtng  Rtng  Rtng  =     =
//   kDropCountdown     .     =     Idle  Idle  =     =     =     .     .
//   kNewSchedule       .     Armed .     .     RunRP RunRP RunRP .     .
//   kExpire            .     .     Qued  =     =     .     .     .     .
//   kDispatchRefused   .     .     .     Armed .     .     .     .     .
//   kCallBegins        .     .     .     Run   .     .     .     .     .
//   kOneshotCallBegins .     .     .     Fin   .     .     .     .     .
//   kCallEndsKeepOn    .     .     .     .     Armed Armed .     .     .
//   kCallEndsStop      .     .     .     .     Idle  Idle  Idle  Retd  .
//   kArmFailed         .     .     Idle  Idle  .     .     .     .     .
//   kSystemShutDown    .     .     Idle  Idle  .     .     .     .     .
//
// What the events are, and how the core's operations raise them:
//
//   kConfigure        Configure(): the options are replaced; any schedule
//                     ends (a call still running finishes unmeasured)
//   kStop, kRetire    Stop(), Retire() (the handle's destructor): the wheel
//                     entry is cancelled, a queued call dropped; afterwards
//                     a call in flight (kFinishing, kRetiring) is waited for,
//                     unless Stop() is called by that call itself
//   kDropCountdown    Reset(): the countdown in flight is dropped (an armed
//                     entry cancelled, a queued call dropped); a running
//                     call's next arming is cancelled
//   kNewSchedule      a schedule from now: Start() of a timer not on
//                     (kIdle, kFinishing), and Reset() after kDropCountdown.
//                     Start() of a timer on (kArmed, kQueued, kRunning,
//                     kRunningRestartPending) changes nothing and raises
//                     nothing; Start()/Reset() of kUnconfigured, kRetiring
//                     or kRetired is refused (FailedPrecondition) and raises
//                     nothing
//   kExpire           the wheel entry came due: kArmed dispatches call k;
//                     kQueued is starved (the provisional arming for k+1
//                     came due before call k began: counted missed, the
//                     queued call stands for the next); kRunning overran
//                     (resolved when the call ends)
//   kDispatchRefused  the dispatcher refused the queued call: re-armed (a
//                     periodic timer for its next period, a oneshot with a
//                     backoff)
//   kCallBegins       the queued call begins (periodic; a oneshot raises
//   kOneshotCallBegins  kOneshotCallBegins: its schedule ends there)
//   kCallEndsKeepOn   the call ends and the schedule goes on: the next call
//                     (kRunning) or the pending new schedule's first call
//                     (kRunningRestartPending) is armed
//   kCallEndsStop     the call ends and nothing follows: a Stop() waits, it
//                     was stopped or retired meanwhile, its system shut
//                     down, or the dispatcher cancelled the call
//   kArmFailed        the wheel refused an arming (its system closed, the
//                     pending-timer cap): the schedule is over, logged
//   kSystemShutDown   a schedule found its timer system shut down (at a
//                     Start() or when its queued call begins)
//
// Not lifecycle state, and so kept as fields of the core: whether the
// resolved route is valid for (configuration, timer system) (a cache); which
// call the wheel entry is armed for (wheel-entry bookkeeping); the number of
// waiting Stop()s and of refusals in a row (counters). See timer_core.h.
//
// Threads: pure functions; any thread.

#ifndef TIMER_TIMER_STATE_H_
#define TIMER_TIMER_STATE_H_

#include <cstdint>
#include <optional>

namespace cyber {
namespace timer {

enum class TimerState : uint8_t {
  kUnconfigured,
  kIdle,
  kArmed,
  kQueued,
  kRunning,
  kRunningRestartPending,
  kFinishing,
  kRetiring,
  kRetired,
};
inline constexpr int kTimerStateCount = 9;

enum class TimerStateEvent : uint8_t {
  kConfigure,
  kStop,
  kRetire,
  kDropCountdown,
  kNewSchedule,
  kExpire,
  kDispatchRefused,
  kCallBegins,
  kOneshotCallBegins,
  kCallEndsKeepOn,
  kCallEndsStop,
  kArmFailed,
  kSystemShutDown,
};
inline constexpr int kTimerStateEventCount = 13;

// The state after `event` in `state`: the state itself when the event
// changes nothing, nullopt when the pair is invalid (see the table above).
std::optional<TimerState> TimerStateAfter(TimerState state,
                                          TimerStateEvent event);

const char* TimerStateName(TimerState state);
const char* TimerStateEventName(TimerStateEvent event);

// A callback of the timer runs (from its call's begin to its end).
constexpr bool CallInFlight(TimerState s) {
  return s == TimerState::kRunning ||
         s == TimerState::kRunningRestartPending ||
         s == TimerState::kFinishing || s == TimerState::kRetiring;
}

// A schedule is on: Start() changes nothing, IsRunning() is true (unless
// its system shut down).
constexpr bool ScheduleOn(TimerState s) {
  return s == TimerState::kArmed || s == TimerState::kQueued ||
         s == TimerState::kRunning || s == TimerState::kRunningRestartPending;
}

// The schedule waits for its next call (armed, or queued in a dispatcher).
constexpr bool AwaitingCall(TimerState s) {
  return s == TimerState::kArmed || s == TimerState::kQueued;
}

// The handle is gone: Start() is refused for good.
constexpr bool Retired(TimerState s) {
  return s == TimerState::kRetiring || s == TimerState::kRetired;
}

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_STATE_H_
