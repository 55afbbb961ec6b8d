// Contract pinned (the design contract, "Lifetimes and process wiring"; timer.h, "What
// a callback may do"): after cyber::Init() timer callbacks run as scheduler
// coroutines, so they may suspend (CRoutine::SleepFor). A Timer merely
// *constructed* before Init() must not change that for the whole process:
// timers made after Init() run in routines, and the early timer itself, once
// started after Init(), runs in a routine too (the dispatcher is bound when
// the timer starts, not when it is constructed).
//
// Process-global (cyber::Init/Shutdown) and dependent on being the first use
// of the default timer system in the process, hence a binary of its own with
// a single test. Real clock: the process-default timer system runs on the
// steady clock by design; only generous upper bounds are asserted.

#include <atomic>
#include <chrono>
#include <thread>

#include "cyber/init/init.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "timer/timer.h"

namespace cyber {
namespace {

using scheduler::CRoutine;

constexpr std::chrono::seconds kBound{10};

// What a callback saw. Calls SleepFor only inside a routine: outside one it
// would abort the process (ACHECK), which would hide the other results.
struct RoutineProbe {
  std::atomic<int> in_routine{0};
  std::atomic<int> outside_routine{0};
  std::atomic<int> slept{0};        // SleepFor(5 ms) returned
  std::atomic<int> slept_short{0};  // ... but less than 5 ms had passed

  void Call() {
    if (CRoutine::Current() == nullptr) {
      ++outside_routine;
      return;
    }
    ++in_routine;
    const Instant before = SteadyClock::Get()->Now();
    CRoutine::SleepFor(absl::Milliseconds(5));
    if (SteadyClock::Get()->Now() - before < absl::Milliseconds(5)) ++slept_short;
    ++slept;
  }
  int calls() const { return in_routine.load() + outside_routine.load(); }
};

bool AwaitCalls(const RoutineProbe& p, int n) {
  const auto limit = std::chrono::steady_clock::now() + kBound;
  while (p.calls() < n) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void ExpectRanInRoutines(const RoutineProbe& p, const char* which) {
  EXPECT_EQ(p.outside_routine.load(), 0)
      << which << ": " << p.outside_routine.load() << " of " << p.calls()
      << " calls ran outside a scheduler routine (CRoutine::Current() == null)";
  EXPECT_GT(p.in_routine.load(), 0) << which;
  EXPECT_EQ(p.slept.load(), p.in_routine.load())
      << which << ": SleepFor inside the callback did not return";
  EXPECT_EQ(p.slept_short.load(), 0) << which << ": SleepFor(5 ms) woke early";
}

TEST(ProcessWiring, TimersRunInSchedulerRoutinesEvenIfOneWasConstructedBeforeInit) {
  RoutineProbe early_probe;
  RoutineProbe late_probe;
  Timer early;  // constructed, not configured, not started: before Init()

  ASSERT_TRUE(Init("scheduler_binding_test"));

  // A timer made after Init().
  Timer late(10, [&late_probe] { late_probe.Call(); }, false);
  late.Start();
  ASSERT_TRUE(late.IsRunning());
  EXPECT_TRUE(AwaitCalls(late_probe, 3))
      << "timer made after Init() fired " << late_probe.calls() << " times";
  late.Stop();  // synchronous: a SleepFor in progress has returned
  ExpectRanInRoutines(late_probe, "timer made after Init()");

  // The early timer, configured and started after Init().
  early.SetTimerOption(TimerOption(10, [&early_probe] { early_probe.Call(); }, false));
  early.Start();
  ASSERT_TRUE(early.IsRunning());
  EXPECT_TRUE(AwaitCalls(early_probe, 3))
      << "timer constructed before Init() fired " << early_probe.calls() << " times";
  early.Stop();
  ExpectRanInRoutines(early_probe, "timer constructed before Init(), started after");

  Shutdown();
}

}  // namespace
}  // namespace cyber
