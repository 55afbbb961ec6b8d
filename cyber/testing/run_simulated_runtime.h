// RunSimulatedRuntimeUntil: drives a thread-free Runtime (Options::
// run_threads false) on a SimulatedClock, the way a test of one runtime's
// timers, routines and services moves time: step the wheel, run what is
// ready, and jump to the next planned event, until the clock reads `t` and
// nothing is left to run at it.
//
// Why a helper: tests of a runtime below the graph harness (SimulatedGraph
// drives whole graphs) each need exactly this loop, and its exit condition
// is easy to get subtly wrong (stopping while a routine is still ready at
// `t`, or before the clock reaches it).

#ifndef CYBER_TESTING_RUN_SIMULATED_RUNTIME_H_
#define CYBER_TESTING_RUN_SIMULATED_RUNTIME_H_

#include "cyber/runtime/runtime.h"
#include "cyber/time/instant.h"
#include "cyber/time/simulated_clock.h"

namespace cyber {
namespace test {

// REQUIRES: `clock` is `runtime`'s clock; the caller's thread drives it.
inline void RunSimulatedRuntimeUntil(Runtime* runtime, SimulatedClock* clock,
                                     Instant t) {
  while (true) {
    runtime->timers()->Step(clock->Now());
    runtime->scheduler()->RunReady();
    Instant next = runtime->timers()->Step(clock->Now());
    if (runtime->scheduler()->HasReady()) continue;
    if (next > t) next = t;
    if (next <= clock->Now()) {
      if (clock->Now() >= t) return;
      next = t;
    }
    clock->AdvanceTo(next);
  }
}

}  // namespace test
}  // namespace cyber

#endif  // CYBER_TESTING_RUN_SIMULATED_RUNTIME_H_
