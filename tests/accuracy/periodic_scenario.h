// The periodic scenario: one periodic Timer for a while, optionally with one
// call that overruns, next to a floor thread on the same schedule.
//
// Floor, concurrent and shifted: the floor thread sleeps to the timer's own
// schedule origin + k * period, shifted by half a period, during the same
// seconds as the timer. Concurrent, so both see the same machine (load from
// other processes, frequency, interrupts); shifted, so that on a 2-core
// machine the floor thread, the tick thread and the callback's processor are
// never woken at the same instant and do not queue behind each other. The
// origin is only known from the timer's first call (a TimerEvent has the
// expected time, not k; see PeriodicProbe), so the floor starts one period
// after it and records as many deadlines as the timer records calls.
//
// Overrun: with `overrun` > 0, the first call at or after the middle of the
// run blocks its thread (clock_nanosleep, so it burns no CPU the floor could
// use) for that long past its start. The timer's overrun policy then decides
// what happens to the periods it covers; the fires show the skipped indices
// (Fire::missed_before) and the phase the timer keeps afterwards. The floor
// does not overrun: it stays the machine's wake-up floor.
//
// Runs on the calling thread; returns when the timer is stopped and every
// helper thread joined.

#ifndef TESTS_ACCURACY_PERIODIC_SCENARIO_H_
#define TESTS_ACCURACY_PERIODIC_SCENARIO_H_

#include <string>

#include "absl/time/time.h"
#include "tests/accuracy/scenario_result.h"
#include "timer/timer_options.h"

namespace cyber {
namespace accuracy {

struct PeriodicSpec {
  std::string id;
  std::string title;
  absl::Duration period;
  absl::Duration run_for;  // records run_for / period calls (at least 1)
  absl::Duration overrun;  // zero: no overrun
  // kSkip or kBurst. (kDelay re-bases the schedule after an overrun, so its
  // calls are no longer origin + k * period, which the probe indexes by.)
  timer::OverrunPolicy policy = timer::OverrunPolicy::kSkip;
};

ScenarioResult RunPeriodicScenario(const ScenarioContext& context,
                                   const PeriodicSpec& spec);

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_PERIODIC_SCENARIO_H_
