// WriteRawData: the accuracy run's raw data, for the report script and for
// anyone who wants to plot it differently:
//
//   fires.csv     one row per timer call and per floor wake-up:
//                 scenario,source,index,expected_us,actual_us,lateness_us,
//                 past_tick_us,missed_before
//                 (source "timer" or "floor"; times are offsets from the
//                 scenario's zero, which for a periodic scenario is the
//                 schedule's origin; past_tick_us is empty for the floor)
//   wakeups.csv   one row per sampling interval of the tick thread:
//                 scenario,start_s,length_s,wakeups,per_s
//   summary.json  see summary_json.h
//
// Thread-compatible.

#ifndef TESTS_ACCURACY_RAW_DATA_WRITER_H_
#define TESTS_ACCURACY_RAW_DATA_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tests/accuracy/run_info.h"
#include "tests/accuracy/scenario_result.h"

namespace cyber {
namespace accuracy {

// Creates `dir` if needed and writes the three files into it.
// Errors: the path that could not be created or written, with errno's text.
absl::Status WriteRawData(const std::string& dir, const RunInfo& run,
                          const std::vector<ScenarioResult>& results);

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_RAW_DATA_WRITER_H_
