// The transition table of a timer's state (timer_state.h), pair by pair:
// every state x event lands where the documented table says, and every
// pair the table leaves out is invalid.

#include "timer/timer_state.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace timer {
namespace {

using S = TimerState;
using E = TimerStateEvent;

std::vector<S> AllStates() {
  std::vector<S> all;
  for (int i = 0; i < kTimerStateCount; ++i) all.push_back(static_cast<S>(i));
  return all;
}

std::vector<E> AllEvents() {
  std::vector<E> all;
  for (int i = 0; i < kTimerStateEventCount; ++i) {
    all.push_back(static_cast<E>(i));
  }
  return all;
}

// The documented table (timer_state.h), written out again as the list of
// allowed transitions; every pair not listed is invalid.
const std::map<std::pair<S, E>, S>& Documented() {
  static const auto* const table = new std::map<std::pair<S, E>, S>{
      // Configure(): any schedule ends; a running call finishes.
      {{S::kUnconfigured, E::kConfigure}, S::kIdle},
      {{S::kIdle, E::kConfigure}, S::kIdle},
      {{S::kArmed, E::kConfigure}, S::kIdle},
      {{S::kQueued, E::kConfigure}, S::kIdle},
      {{S::kRunning, E::kConfigure}, S::kFinishing},
      {{S::kRunningRestartPending, E::kConfigure}, S::kFinishing},
      {{S::kFinishing, E::kConfigure}, S::kFinishing},
      {{S::kRetiring, E::kConfigure}, S::kRetiring},
      {{S::kRetired, E::kConfigure}, S::kRetired},
      // Stop(): from every state.
      {{S::kUnconfigured, E::kStop}, S::kUnconfigured},
      {{S::kIdle, E::kStop}, S::kIdle},
      {{S::kArmed, E::kStop}, S::kIdle},
      {{S::kQueued, E::kStop}, S::kIdle},
      {{S::kRunning, E::kStop}, S::kFinishing},
      {{S::kRunningRestartPending, E::kStop}, S::kFinishing},
      {{S::kFinishing, E::kStop}, S::kFinishing},
      {{S::kRetiring, E::kStop}, S::kRetiring},
      {{S::kRetired, E::kStop}, S::kRetired},
      // Retire(): from every state.
      {{S::kUnconfigured, E::kRetire}, S::kRetired},
      {{S::kIdle, E::kRetire}, S::kRetired},
      {{S::kArmed, E::kRetire}, S::kRetired},
      {{S::kQueued, E::kRetire}, S::kRetired},
      {{S::kRunning, E::kRetire}, S::kRetiring},
      {{S::kRunningRestartPending, E::kRetire}, S::kRetiring},
      {{S::kFinishing, E::kRetire}, S::kRetiring},
      {{S::kRetiring, E::kRetire}, S::kRetiring},
      {{S::kRetired, E::kRetire}, S::kRetired},
      // Reset(), first half: the countdown in flight is dropped.
      {{S::kIdle, E::kDropCountdown}, S::kIdle},
      {{S::kArmed, E::kDropCountdown}, S::kIdle},
      {{S::kQueued, E::kDropCountdown}, S::kIdle},
      {{S::kRunning, E::kDropCountdown}, S::kRunning},
      {{S::kRunningRestartPending, E::kDropCountdown},
       S::kRunningRestartPending},
      {{S::kFinishing, E::kDropCountdown}, S::kFinishing},
      // A schedule from now (Start() of a timer not on; Reset()).
      {{S::kIdle, E::kNewSchedule}, S::kArmed},
      {{S::kRunning, E::kNewSchedule}, S::kRunningRestartPending},
      {{S::kRunningRestartPending, E::kNewSchedule},
       S::kRunningRestartPending},
      {{S::kFinishing, E::kNewSchedule}, S::kRunningRestartPending},
      // The wheel entry came due.
      {{S::kArmed, E::kExpire}, S::kQueued},
      {{S::kQueued, E::kExpire}, S::kQueued},    // starved
      {{S::kRunning, E::kExpire}, S::kRunning},  // overrun
      {{S::kQueued, E::kDispatchRefused}, S::kArmed},
      {{S::kQueued, E::kCallBegins}, S::kRunning},
      {{S::kQueued, E::kOneshotCallBegins}, S::kFinishing},
      {{S::kRunning, E::kCallEndsKeepOn}, S::kArmed},
      {{S::kRunningRestartPending, E::kCallEndsKeepOn}, S::kArmed},
      {{S::kRunning, E::kCallEndsStop}, S::kIdle},
      {{S::kRunningRestartPending, E::kCallEndsStop}, S::kIdle},
      {{S::kFinishing, E::kCallEndsStop}, S::kIdle},
      {{S::kRetiring, E::kCallEndsStop}, S::kRetired},
      {{S::kArmed, E::kArmFailed}, S::kIdle},
      {{S::kQueued, E::kArmFailed}, S::kIdle},
      {{S::kArmed, E::kSystemShutDown}, S::kIdle},
      {{S::kQueued, E::kSystemShutDown}, S::kIdle},
  };
  return *table;
}

std::string PairName(S s, E e) {
  return std::string(TimerStateEventName(e)) + " in " + TimerStateName(s);
}

TEST(TimerStateTest, EveryPairIsAsDocumented) {
  int allowed = 0;
  for (S s : AllStates()) {
    for (E e : AllEvents()) {
      const std::optional<S> next = TimerStateAfter(s, e);
      const auto it = Documented().find({s, e});
      if (it == Documented().end()) {
        EXPECT_FALSE(next.has_value())
            << PairName(s, e) << " should be invalid, goes to "
            << TimerStateName(*next);
      } else {
        ++allowed;
        ASSERT_TRUE(next.has_value()) << PairName(s, e) << " should be valid";
        EXPECT_EQ(*next, it->second)
            << PairName(s, e) << ": " << TimerStateName(*next) << ", expected "
            << TimerStateName(it->second);
      }
    }
  }
  EXPECT_EQ(allowed, static_cast<int>(Documented().size()));
}

TEST(TimerStateTest, NamesAreDistinct) {
  std::set<std::string> states;
  for (S s : AllStates()) states.insert(TimerStateName(s));
  EXPECT_EQ(states.size(), static_cast<size_t>(kTimerStateCount));
  EXPECT_EQ(states.count("unknown"), 0u);
  std::set<std::string> events;
  for (E e : AllEvents()) events.insert(TimerStateEventName(e));
  EXPECT_EQ(events.size(), static_cast<size_t>(kTimerStateEventCount));
  EXPECT_EQ(events.count("unknown"), 0u);
}

// Properties the timer's guarantees rest on, checked over the whole table.
TEST(TimerStateTest, Invariants) {
  for (S s : AllStates()) {
    for (E e : AllEvents()) {
      const std::optional<S> next = TimerStateAfter(s, e);
      if (!next.has_value()) continue;
      const std::string pair = PairName(s, e);
      // Only a new core is unconfigured.
      if (s != S::kUnconfigured) {
        EXPECT_NE(*next, S::kUnconfigured) << pair;
      }
      // Retirement is for good.
      if (Retired(s)) {
        EXPECT_TRUE(Retired(*next)) << pair;
      }
      // Stop and Retire leave no schedule on (Stop() never fires after it
      // returns), only a call in flight to wait for.
      if (e == E::kStop || e == E::kRetire) {
        EXPECT_FALSE(ScheduleOn(*next)) << pair;
        EXPECT_EQ(CallInFlight(*next), CallInFlight(s)) << pair;
      }
      // A call in flight ends only at its end: no event but the call's end
      // takes a state with a call in flight to one without (the callback
      // never runs beside itself), and only a call's begin starts one.
      if (CallInFlight(s) && e != E::kCallEndsKeepOn &&
          e != E::kCallEndsStop) {
        EXPECT_TRUE(CallInFlight(*next)) << pair;
      }
      if (!CallInFlight(s) && CallInFlight(*next)) {
        EXPECT_TRUE(e == E::kCallBegins || e == E::kOneshotCallBegins) << pair;
      }
      if (e == E::kCallEndsKeepOn || e == E::kCallEndsStop) {
        EXPECT_TRUE(CallInFlight(s)) << pair;
        EXPECT_FALSE(CallInFlight(*next)) << pair;
      }
      // Nothing is armed beside a running call: a new schedule for a timer
      // whose call runs waits for its end.
      if (CallInFlight(s) && e != E::kCallEndsKeepOn) {
        EXPECT_FALSE(AwaitingCall(*next)) << pair;
      }
    }
  }
}

// Start() and Reset() as the core raises them: each state they do not
// refuse ends with a schedule on.
TEST(TimerStateTest, StartAndResetTurnTheScheduleOn) {
  for (S s : AllStates()) {
    if (s == S::kUnconfigured || Retired(s)) continue;  // refused
    // Start(): nothing if already on, else a new schedule.
    const std::optional<S> started =
        ScheduleOn(s) ? std::optional<S>(s)
                      : TimerStateAfter(s, E::kNewSchedule);
    ASSERT_TRUE(started.has_value()) << TimerStateName(s);
    EXPECT_TRUE(ScheduleOn(*started)) << TimerStateName(s);
    // Reset(): the countdown dropped, then a new schedule.
    const std::optional<S> dropped = TimerStateAfter(s, E::kDropCountdown);
    ASSERT_TRUE(dropped.has_value()) << TimerStateName(s);
    EXPECT_FALSE(AwaitingCall(*dropped)) << TimerStateName(s);
    const std::optional<S> reset = TimerStateAfter(*dropped, E::kNewSchedule);
    ASSERT_TRUE(reset.has_value()) << TimerStateName(s);
    EXPECT_TRUE(ScheduleOn(*reset)) << TimerStateName(s);
    // A reset of a timer whose call runs arms when that call ends.
    EXPECT_EQ(*reset, CallInFlight(s) ? S::kRunningRestartPending : S::kArmed)
        << TimerStateName(s);
  }
}

// Every state the core can reach from a new core is reached by the table
// (no state is dead), following only valid transitions.
TEST(TimerStateTest, EveryStateIsReachable) {
  std::set<S> seen = {S::kUnconfigured};
  std::vector<S> todo = {S::kUnconfigured};
  while (!todo.empty()) {
    const S s = todo.back();
    todo.pop_back();
    for (E e : AllEvents()) {
      const std::optional<S> next = TimerStateAfter(s, e);
      if (next.has_value() && seen.insert(*next).second) todo.push_back(*next);
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kTimerStateCount));
}

}  // namespace
}  // namespace timer
}  // namespace cyber
