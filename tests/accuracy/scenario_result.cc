#include "tests/accuracy/scenario_result.h"

namespace cyber {
namespace accuracy {

const char* ScenarioKindName(ScenarioKind kind) {
  switch (kind) {
    case ScenarioKind::kOneshot:
      return "oneshot";
    case ScenarioKind::kPeriodic:
      return "periodic";
    case ScenarioKind::kIdle:
      return "idle";
  }
  return "unknown";
}

void TimerCounters::Add(const timer::TimerStatistics& s) {
  fires += s.fires;
  overruns += s.overruns;
  missed_periods += s.missed_periods;
  exceptions += s.exceptions;
  dispatch_refusals += s.dispatch_refusals;
  early_fires += s.early_fires;
}

uint64_t TotalWakeups(const ScenarioResult& r) {
  uint64_t total = 0;
  for (const WakeupSample& s : r.wakeups) total += s.wakeups;
  return total;
}

double WakeupsPerSecond(const ScenarioResult& r) {
  absl::Duration length;
  for (const WakeupSample& s : r.wakeups) length += s.length;
  if (length <= absl::ZeroDuration()) return 0;
  return static_cast<double>(TotalWakeups(r)) / absl::ToDoubleSeconds(length);
}

}  // namespace accuracy
}  // namespace cyber
