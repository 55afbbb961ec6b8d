// Contract pinned (the design contract, "Lifetimes and process wiring"): Stop() means
// the same from every caller, including a scheduler routine of any priority:
// it waits until the callback in progress has finished, and it waits by
// parking, not by yield-spinning. Here, on a scheduler with ONE processor,
// the timer's callback (dispatched at priority 0) is suspended in
// CRoutine::SleepFor(200 ms) when a routine calls Stop():
//   * from a HIGHER priority (5): a yield-spinning Stop() is picked again at
//     once, forever, and the callback never gets the processor back;
//   * from the SAME priority (0).
// Must: Stop() returns once the callback finished (bound: 10 s), and the
// scheduler's switch count stays small (< 10,000) meanwhile.
//
// Simulated clock: the callback stays asleep exactly until the test advances
// time, so Stop() is guaranteed to be waiting for a suspended callback. The
// one real-time pause is the 200 ms observation window in which a parked
// Stop() makes (almost) no switches while a spinning one makes millions.
// A Stop() that never returns cannot be recovered from (it holds the only
// processor), so the test then ends the process with a message; each test
// runs in its own process (see BUILD).

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "cyber/common/test_waits.h"
#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace {

using scheduler::CRoutine;
using scheduler::Scheduler;
using test::Eventually;
using timer::TimerSystem;

constexpr uint64_t kMaxSwitches = 10000;
constexpr std::chrono::seconds kStopBound{10};
constexpr std::chrono::milliseconds kObservation{200};

Scheduler::Options OneProcessor() {
  Scheduler::Options o;
  o.name = "stopper";
  o.config = scheduler::DefaultSchedulerConfig(1);
  return o;
}

bool WaitFor(const std::atomic<bool>& flag, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void StopFromRoutineWhileCallbackSleeps(int stopper_priority) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  Scheduler sched(OneProcessor());
  TimerSystem driver(&clock, &sched);
  sched.SetTimerSystem(&driver);

  std::atomic<int> entered{0};
  std::atomic<int> finished{0};
  TimerOptions o;
  o.name = "sleepy";
  o.period = absl::Milliseconds(10);
  o.callback = [&] {
    ++entered;
    CRoutine::SleepFor(absl::Milliseconds(200));
    ++finished;
  };
  Timer timer(o, &driver);
  ASSERT_TRUE(timer.Schedule().ok());
  clock.Advance(absl::Milliseconds(10));  // the first call begins, and sleeps
  ASSERT_TRUE(Eventually([&] { return entered.load() == 1; }));

  std::atomic<bool> stopper_started{false};
  std::atomic<bool> stop_returned{false};
  std::atomic<int> finished_when_returned{-1};
  const uint64_t switches_before = sched.stats().switches;
  ASSERT_TRUE(sched
                  .CreateTask(
                      "stopper",
                      [&] {
                        stopper_started = true;
                        timer.Stop();
                        finished_when_returned = finished.load();
                        stop_returned = true;
                      },
                      stopper_priority)
                  .ok());
  ASSERT_TRUE(WaitFor(stopper_started, kStopBound));

  // Observation window: Stop() waits for a callback that sleeps until the
  // clock moves. A parked waiter costs nothing meanwhile.
  std::this_thread::sleep_for(kObservation);
  const uint64_t switches_while_waiting = sched.stats().switches - switches_before;
  EXPECT_FALSE(stop_returned.load()) << "Stop() returned while its callback slept";
  EXPECT_LT(switches_while_waiting, kMaxSwitches)
      << "Stop() from a priority-" << stopper_priority
      << " routine yield-spins: " << switches_while_waiting << " switches in "
      << kObservation.count() << " ms while waiting for the sleeping callback";

  clock.Advance(absl::Milliseconds(200));  // the callback's SleepFor ends
  if (!WaitFor(stop_returned, kStopBound)) {
    std::fprintf(stderr,
                 "FAILED (hang): Stop() from a priority-%d routine did not return "
                 "within %d s after the callback's sleep ended (callback finished: "
                 "%d; scheduler switches meanwhile: %llu). The processor is held by "
                 "the stopper; ending the process.\n",
                 stopper_priority, static_cast<int>(kStopBound.count()),
                 finished.load(),
                 static_cast<unsigned long long>(sched.stats().switches -
                                                 switches_before));
    std::fflush(stderr);
    std::_Exit(1);
  }
  const uint64_t switches_total = sched.stats().switches - switches_before;
  EXPECT_EQ(finished_when_returned.load(), 1)
      << "Stop() returned before the callback in progress finished";
  EXPECT_EQ(finished.load(), 1);
  EXPECT_LT(switches_total, kMaxSwitches)
      << switches_total << " switches between Stop() and its return";
  EXPECT_FALSE(timer.IsRunning());
  sched.Shutdown();  // before the driver it sleeps on goes away
}

TEST(StopFromRoutine, HigherPriorityRoutineStopReturnsWhenCallbackFinishes) {
  StopFromRoutineWhileCallbackSleeps(5);
}

TEST(StopFromRoutine, EqualPriorityRoutineStopReturnsWhenCallbackFinishes) {
  StopFromRoutineWhileCallbackSleeps(0);
}

}  // namespace
}  // namespace cyber
