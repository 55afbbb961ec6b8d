// PrintConsoleTable: the run's figures as a Markdown table on stdout (the
// table the README quotes), followed by one drift line per periodic
// scenario and the overrun scenario's calls around its overrun.
//
// Thread-compatible.

#ifndef TESTS_ACCURACY_CONSOLE_TABLE_H_
#define TESTS_ACCURACY_CONSOLE_TABLE_H_

#include <vector>

#include "tests/accuracy/run_info.h"
#include "tests/accuracy/scenario_result.h"

namespace cyber {
namespace accuracy {

void PrintConsoleTable(const RunInfo& run,
                       const std::vector<ScenarioResult>& results);

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_CONSOLE_TABLE_H_
