// CpuUsage: what a scenario cost in CPU, and who spent it: the tick thread,
// the dispatcher's threads (the scheduler's processors), the floor thread
// and the whole process, each as a share of one core over the scenario.
//
// Why: lateness can be bought with CPU. A processor that wakes a little
// ahead of a known expiry and spins until it (what the scheduler did
// before issue 25) is faster only at a price; the report shows that price
// next to the lateness it buys, scenario by scenario (spinning, or a
// processor's own timed wake-up per call, shows up in the processors'
// figure).
//
// How: a CpuSample is taken at each end of a scenario and CpuBetween()
// charges the difference. Threads are found by the names they gave
// themselves (/proc/self/task/*/comm, read by tests/scale/proc_stats.h): the
// tick thread by its TimerSystem's name, the processors by the prefix
// "<group name>-" of each of the scheduler's processor groups (ProcessorGroup
// names them after its group, not after the scheduler: "default-0",
// "default-1", ... under DefaultSchedulerConfig).
// Per-thread times are utime + stime of /proc/self/task/<tid>/stat, counted
// in clock ticks (ThreadCpuResolution(), usually 10 ms): a figure is good to
// about one tick per thread, 0.03 percentage points of a 30 s scenario. The
// process's time comes from getrusage(RUSAGE_SELF), in microseconds, and
// includes threads that ended within the window. The floor thread is not
// found here: it lives only inside the window, so it reads its own CPU clock
// (floor_sleeper.h) and the scenario fills in `floor`.
//
// Example:
//   const CpuSample before = SampleCpu(clock);
//   ... run the scenario ...
//   r.cpu = CpuBetween(before, SampleCpu(clock), context.cpu_threads);
//   PercentOfCore(r.cpu.tick, r.cpu.window);  // e.g. 0.4 (%)
//
// Threads: SampleCpu() from any thread (it reads /proc afresh and keeps no
// state); everything else is a pure function.

#ifndef TESTS_ACCURACY_CPU_USAGE_H_
#define TESTS_ACCURACY_CPU_USAGE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cyber/time/clock.h"
#include "cyber/time/instant.h"
#include "tests/scale/proc_stats.h"

namespace cyber {
namespace accuracy {

// Which threads are whose. Linux keeps at most 15 characters of a thread's
// name; names and prefixes are compared after cutting them to that length.
struct CpuThreadNames {
  std::string tick;  // the tick thread, e.g. "timer-tick"
  // The dispatcher's threads, e.g. {"default-"} for default-0, default-1.
  std::vector<std::string> processor_prefixes;
};

// The process's CPU counters at one instant.
struct CpuSample {
  Instant at;
  absl::Duration process = absl::ZeroDuration();
  std::vector<scale::ThreadCpu> threads;
};

CpuSample SampleCpu(Clock* clock);

// CPU time spent between two samples. Threads born in between count from
// zero; threads gone by the second sample are in `process` only.
struct CpuUsage {
  absl::Duration window = absl::ZeroDuration();  // after.at - before.at
  absl::Duration tick = absl::ZeroDuration();
  int tick_threads = 0;  // 1, or 0 if no thread had the name
  absl::Duration processors = absl::ZeroDuration();
  int processor_threads = 0;
  absl::Duration process = absl::ZeroDuration();
  // The floor thread's whole life (inside the window); none in the idle
  // scenario. Part of `process`.
  std::optional<absl::Duration> floor;
};

CpuUsage CpuBetween(const CpuSample& before, const CpuSample& after,
                    const CpuThreadNames& names);

// `cpu` as a percentage of one core over `window`; NaN if `window` is not
// positive.
double PercentOfCore(absl::Duration cpu, absl::Duration window);

// The unit of the per-thread figures: one clock tick (sysconf(_SC_CLK_TCK)).
absl::Duration ThreadCpuResolution();

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_CPU_USAGE_H_
