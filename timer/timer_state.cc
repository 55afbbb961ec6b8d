#include "timer/timer_state.h"

namespace cyber {
namespace timer {

namespace {

// One entry of the table: a state (its TimerState value), "no change" or
// "invalid" (the two values after the last state).
using Entry = uint8_t;
constexpr Entry Of(TimerState state) { return static_cast<Entry>(state); }

constexpr Entry I = Of(TimerState::kIdle);
constexpr Entry A = Of(TimerState::kArmed);
constexpr Entry Q = Of(TimerState::kQueued);
constexpr Entry R = Of(TimerState::kRunning);
constexpr Entry P = Of(TimerState::kRunningRestartPending);
constexpr Entry F = Of(TimerState::kFinishing);
constexpr Entry X = Of(TimerState::kRetiring);
constexpr Entry D = Of(TimerState::kRetired);
static_assert(Of(TimerState::kRetired) + 1 == kTimerStateCount,
              "kTimerStateCount counts the states: S and N are no state");
constexpr Entry S = kTimerStateCount;      // "=" in timer_state.h
constexpr Entry N = kTimerStateCount + 1;  // "."

// Rows in TimerStateEvent's order, columns in TimerState's; the same table
// as in timer_state.h. No event leads to kUnconfigured: only a new core is
// unconfigured.
constexpr Entry kTable[kTimerStateEventCount][kTimerStateCount] = {
    //  U  I  A  Q  R  P  F  X  D
    {I, I, I, I, F, F, S, S, S},  // kConfigure
    {S, S, I, I, F, F, S, S, S},  // kStop
    {D, D, D, D, X, X, X, S, S},  // kRetire
    {N, S, I, I, S, S, S, N, N},  // kDropCountdown
    {N, A, N, N, P, P, P, N, N},  // kNewSchedule
    {N, N, Q, S, S, N, N, N, N},  // kExpire
    {N, N, N, A, N, N, N, N, N},  // kDispatchRefused
    {N, N, N, R, N, N, N, N, N},  // kCallBegins
    {N, N, N, F, N, N, N, N, N},  // kOneshotCallBegins
    {N, N, N, N, A, A, N, N, N},  // kCallEndsKeepOn
    {N, N, N, N, I, I, I, D, N},  // kCallEndsStop
    {N, N, I, I, N, N, N, N, N},  // kArmFailed
    {N, N, I, I, N, N, N, N, N},  // kSystemShutDown
};
}  // namespace

std::optional<TimerState> TimerStateAfter(TimerState state,
                                          TimerStateEvent event) {
  const Entry entry =
      kTable[static_cast<int>(event)][static_cast<int>(state)];
  if (entry == N) return std::nullopt;
  if (entry == S) return state;
  return static_cast<TimerState>(entry);
}

const char* TimerStateName(TimerState state) {
  switch (state) {
    case TimerState::kUnconfigured:
      return "unconfigured";
    case TimerState::kIdle:
      return "idle";
    case TimerState::kArmed:
      return "armed";
    case TimerState::kQueued:
      return "queued";
    case TimerState::kRunning:
      return "running";
    case TimerState::kRunningRestartPending:
      return "running, restart pending";
    case TimerState::kFinishing:
      return "finishing";
    case TimerState::kRetiring:
      return "retiring";
    case TimerState::kRetired:
      return "retired";
  }
  return "unknown";
}

const char* TimerStateEventName(TimerStateEvent event) {
  switch (event) {
    case TimerStateEvent::kConfigure:
      return "configure";
    case TimerStateEvent::kStop:
      return "stop";
    case TimerStateEvent::kRetire:
      return "retire";
    case TimerStateEvent::kDropCountdown:
      return "drop countdown";
    case TimerStateEvent::kNewSchedule:
      return "new schedule";
    case TimerStateEvent::kExpire:
      return "expire";
    case TimerStateEvent::kDispatchRefused:
      return "dispatch refused";
    case TimerStateEvent::kCallBegins:
      return "call begins";
    case TimerStateEvent::kOneshotCallBegins:
      return "oneshot call begins";
    case TimerStateEvent::kCallEndsKeepOn:
      return "call ends, keep on";
    case TimerStateEvent::kCallEndsStop:
      return "call ends, stop";
    case TimerStateEvent::kArmFailed:
      return "arm failed";
    case TimerStateEvent::kSystemShutDown:
      return "system shut down";
  }
  return "unknown";
}

}  // namespace timer
}  // namespace cyber
