// ScenarioResult: everything one accuracy scenario measured, in a form the
// console table, the raw-data files and the report are all written from.
//
// A scenario runs timers on one TimerSystem (over SteadyClock) and, at the
// same time, a FloorSleeper to the same kind of deadlines; it samples the
// tick thread's wake-ups per second throughout, and the CPU time the tick
// thread, the processors, the floor thread and the process spent from its
// start to its end (cpu_usage.h). Instants stay absolute on the steady clock
// here; writers turn them into offsets from `zero`.
//
// Value type; thread-compatible.

#ifndef TESTS_ACCURACY_SCENARIO_RESULT_H_
#define TESTS_ACCURACY_SCENARIO_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cyber/time/instant.h"
#include "cyber/time/steady_clock.h"
#include "tests/accuracy/cpu_usage.h"
#include "tests/accuracy/fire_record.h"
#include "tests/accuracy/machine_info.h"
#include "tests/accuracy/wakeup_sampler.h"
#include "timer/timer_system.h"
#include "timer/timer_options.h"

namespace cyber {
namespace accuracy {

// What a scenario needs from the tool: the clock, the driver its timers run
// on (whose dispatcher runs their callbacks), the wake-up sampling interval,
// and the names of the driver's and the dispatcher's threads (whose CPU time
// the scenario reports).
struct ScenarioContext {
  SteadyClock* clock = nullptr;
  timer::TimerSystem* driver = nullptr;
  absl::Duration wakeup_interval = absl::Seconds(1);
  CpuThreadNames cpu_threads;
};

enum class ScenarioKind { kOneshot, kPeriodic, kIdle };
const char* ScenarioKindName(ScenarioKind kind);

// TimerStatistics counters, summed over a scenario's timers.
struct TimerCounters {
  uint64_t fires = 0;
  uint64_t overruns = 0;
  uint64_t missed_periods = 0;
  uint64_t exceptions = 0;
  uint64_t dispatch_refusals = 0;
  uint64_t early_fires = 0;

  void Add(const timer::TimerStatistics& s);
};

struct ScenarioResult {
  std::string id;     // file-name safe, e.g. "periodic_10ms"
  std::string title;  // for people, e.g. "periodic 10ms"
  ScenarioKind kind = ScenarioKind::kIdle;
  absl::Duration period;  // kPeriodic: the timer's period
  timer::OverrunPolicy policy = timer::OverrunPolicy::kSkip;  // kPeriodic
  // kOneshot: TimerOptions::precision of its timers. Empty for the others
  // (a periodic timer's calls are due at start + k * period whatever the
  // option says; timer_options.h).
  std::optional<timer::TimerPrecision> precision;
  // The floor's deadlines are the timer's shifted by this (see the scenario).
  absl::Duration floor_shift;
  Instant zero;            // raw-data offsets count from here
  absl::Duration elapsed;  // from the scenario's start to its end
  int64_t planned_calls = 0;  // calls (and floor wake-ups) asked for
  std::vector<Fire> timer;
  std::vector<Fire> floor;
  std::vector<WakeupSample> wakeups;
  // CPU time from the scenario's start to its end; cpu.window is about
  // `elapsed` (it also spans the two /proc reads).
  CpuUsage cpu;
  TimerCounters counters;
  // kPeriodic with an overrun: how long the one overrunning call blocked
  // beyond its normal run, and its schedule index.
  absl::Duration overrun;
  std::optional<int64_t> overrun_index;
  // kIdle: the instant (offset from zero) the tick thread still planned to
  // wake at when the scenario began, if any: the deadline of a timer an
  // earlier scenario cancelled (a cancel does not re-plan the sleep).
  std::optional<absl::Duration> planned_wake_at_start;
  std::string error;  // empty if the scenario completed
  // The timer system refused the scenario's timer (Schedule() returned an
  // error, which is `error`): e.g. a period or delay the code does not
  // support yet. The scenario then recorded no calls, or fewer than planned.
  bool refused = false;
  // The machine's load just before and after (filled in by the tool).
  std::optional<LoadAverage> load_before;
  std::optional<LoadAverage> load_after;
};

// Wake-ups of the tick thread over the whole scenario, and per second.
uint64_t TotalWakeups(const ScenarioResult& r);
double WakeupsPerSecond(const ScenarioResult& r);

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_SCENARIO_RESULT_H_
