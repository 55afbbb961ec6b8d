// SummaryJson: the run's figures as one JSON document (summary.json), the
// input of tools/accuracy_report.py's tables and sentences.
//
// Per scenario: exact lateness percentiles of the timer, of the timer past
// its tick (without the by-design rounding up to a tick) and of the floor;
// early calls; the timer's own counters; tick-thread wake-ups; for periodic
// scenarios the phase error at the start and the end of the run (drift);
// for the overrun scenario the calls around the overrun; the CPU time of the
// tick thread, the processors, the floor thread and the process over the
// scenario (object "cpu", each as _s and as _pct of one core); the
// oneshots' "precision" ("kTick", "kExact"; null for the others), whether
// the timer system "refused" the scenario's timer, and the issue-24
// "target" (accuracy_target.h: basis, rule, p50_over_floor_us,
// p99_over_floor_ratio, verdict, why). Times are in microseconds (suffix
// _us) or seconds (_s).
//
// A pure function of its inputs; thread-compatible.

#ifndef TESTS_ACCURACY_SUMMARY_JSON_H_
#define TESTS_ACCURACY_SUMMARY_JSON_H_

#include <string>
#include <vector>

#include "tests/accuracy/run_info.h"
#include "tests/accuracy/scenario_result.h"

namespace cyber {
namespace accuracy {

std::string SummaryJson(const RunInfo& run,
                        const std::vector<ScenarioResult>& results);

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_SUMMARY_JSON_H_
