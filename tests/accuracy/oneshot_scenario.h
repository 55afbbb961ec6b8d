// The oneshot scenario: many oneshot Timers at random delays, launched at
// random gaps (about a dozen in flight), next to a floor thread sleeping to
// the same deadlines.
//
// Plan: a fixed-seed list of (launch offset, delay); a fixed delay when
// min_delay == max_delay. The scenario's thread sleeps to zero + launch and
// calls Schedule(); the timer's deadline is then "now + delay". With
// TimerPrecision::kTick (the default) the wheel serves it on the next 2 ms
// tick (so a oneshot's lateness includes up to one tick of rounding;
// Fire::tick lets the report take it out); with kExact at the deadline
// itself. Launch gaps are not aligned to the tick grid, so the deadlines
// are spread over a whole tick.
//
// A Schedule() the timer system refuses (a delay it does not support) ends
// the launches: the result is `refused`, with the status as its error.
//
// Floor, concurrent: one thread sleeps to every planned deadline
// zero + launch + delay, in time order, during the same seconds. The timer's
// actual deadline is later than the planned one by how late the launching
// thread woke (tens of microseconds), and the timer fires on the tick after
// it, so the two rarely wake at the same instant.
//
// Runs on the calling thread; returns when every oneshot has fired (or the
// straggler limit passed) and every helper thread is joined.

#ifndef TESTS_ACCURACY_ONESHOT_SCENARIO_H_
#define TESTS_ACCURACY_ONESHOT_SCENARIO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tests/accuracy/scenario_result.h"
#include "timer/timer_options.h"

namespace cyber {
namespace accuracy {

struct OneshotSpec {
  std::string id;
  std::string title;
  int count = 0;
  uint64_t seed = 1;
  absl::Duration min_delay;  // delays uniform in [min_delay, max_delay]
  absl::Duration max_delay;
  absl::Duration min_gap;  // launch gaps uniform in [min_gap, max_gap]
  absl::Duration max_gap;
  // Where each call lands: on the tick after its deadline (kTick, the
  // default) or at the deadline (kExact).
  timer::TimerPrecision precision = timer::TimerPrecision::kTick;
};

// One oneshot of the plan: launched `launch` after the scenario's zero, due
// `delay` after its launch.
struct OneshotLaunch {
  absl::Duration launch;
  absl::Duration delay;
};

// The plan for `spec`, in launch order (deterministic for a seed).
std::vector<OneshotLaunch> MakeOneshotPlan(const OneshotSpec& spec);

ScenarioResult RunOneshotScenario(const ScenarioContext& context,
                                  const OneshotSpec& spec);

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_ONESHOT_SCENARIO_H_
