// Cyber RT's task helpers, for code ported from Cyber RT unchanged:
//
//   cyber::Async(&Planner::Replan, this, obstacles);   // a routine; a future
//   cyber::Yield();                                    // give others a turn
//   cyber::SleepFor(std::chrono::milliseconds(5));     // or USleep(5000)
//
// Each works from a scheduler routine and from a plain thread, and does
// what Cyber RT documents for that caller: in a routine, Yield() goes to the
// back of its processor's queue and SleepFor()/USleep() park the routine on
// the scheduler's timing wheel (its processor runs other routines; the
// scheduler's clock, simulated in tests, decides when it wakes); on a
// thread they are std::this_thread::yield() and a sleep on the steady clock
// (on the current clock of a simulated graph: cyber/time/current_clock.h).
// In a routine, SleepFor and Yield are cancellation points (a routine being
// removed or shut down unwinds there).
//
// New code can call CRoutine::Yield/SleepFor (scheduler/croutine.h) and
// Scheduler::Async directly; these are thin adapters over them.
//
// Threads: any.

#ifndef CYBER_TASK_TASK_H_
#define CYBER_TASK_TASK_H_

#include <sys/types.h>

#include <chrono>

#include "absl/time/time.h"
#include "scheduler/default_scheduler.h"  // cyber::Async

namespace cyber {

void Yield();
void SleepFor(const std::chrono::microseconds& interval);
// Write it qualified, cyber::SleepFor(absl::Milliseconds(5)): unqualified,
// argument-dependent lookup also finds absl::SleepFor (a thread sleep).
void SleepFor(absl::Duration interval);
void USleep(useconds_t usec);

}  // namespace cyber

#endif  // CYBER_TASK_TASK_H_
