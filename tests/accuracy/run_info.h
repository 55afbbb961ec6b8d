// RunInfo: how the accuracy tool was run (machine, configuration, command
// line), written next to the scenarios' results so a report never loses
// the conditions its figures were measured under.
//
// Value type; thread-compatible.

#ifndef TESTS_ACCURACY_RUN_INFO_H_
#define TESTS_ACCURACY_RUN_INFO_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "tests/accuracy/cpu_usage.h"
#include "tests/accuracy/machine_info.h"

namespace cyber {
namespace accuracy {

struct RunInfo {
  MachineInfo machine;
  std::string command_line;
  std::string dispatcher;  // "scheduler" or "executor"
  int dispatcher_threads = 0;
  absl::Duration tick;
  absl::Duration duration;  // each periodic and the idle scenario
  int oneshots = 0;        // each random-delay oneshot scenario
  int short_oneshots = 0;  // each fixed short-delay oneshot scenario
  uint64_t seed = 0;
  absl::Duration wakeup_interval;
  std::string floor_method;
  // Whose CPU time the scenarios report, and the unit of the per-thread
  // figures (cpu_usage.h).
  CpuThreadNames cpu_threads;
  absl::Duration thread_cpu_resolution;
  absl::Duration elapsed;  // the whole run
};

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_RUN_INFO_H_
