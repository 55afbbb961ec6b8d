// The idle scenario: the tick thread with no timer armed, watched for a
// while. A tickless driver blocks until something is armed, so its wake-ups
// per second must be about zero (a ticking 2 ms wheel would wake 500 times a
// second). There is no floor to compare with: a thread with no deadline does
// not wake either.
//
// The tick thread does not re-plan its sleep when a timer is cancelled, so
// one wake-up may still be due from the previous scenario's last timer; the
// result records that planned wake (ScenarioResult::planned_wake_at_start)
// rather than waiting it out, so the report shows it.
//
// Runs on the calling thread. The result's error says so if the wheel was
// not empty at the start (a timer of an earlier scenario still armed).

#ifndef TESTS_ACCURACY_IDLE_SCENARIO_H_
#define TESTS_ACCURACY_IDLE_SCENARIO_H_

#include <string>

#include "absl/time/time.h"
#include "tests/accuracy/scenario_result.h"

namespace cyber {
namespace accuracy {

ScenarioResult RunIdleScenario(const ScenarioContext& context, std::string id,
                               std::string title, absl::Duration run_for);

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_IDLE_SCENARIO_H_
