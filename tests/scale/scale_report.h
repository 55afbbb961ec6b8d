// The scale run's results, the verdict against the targets, and the
// two ways they are written: a markdown summary (printed, and optionally
// saved with --markdown_out) and flat JSON (--json_out) for report scripts.
//
// Why a separate file: gathering the figures (timer_scale_run.cc) and
// presenting them change for different reasons; keeping every figure in one
// struct also keeps the summary and the JSON from drifting apart.
//
// Targets (the wording; neither is relaxed here):
//   * periodic lateness p99 <= one tick (2 ms) + the floor's p99, both from
//     the same window;
//   * tick thread under 5% of one core over the window.
// Percentiles are LatencyHistogram bucket upper bounds (at most 12.5% high),
// on both sides of the comparison.
//
// Threads: plain functions and values.

#ifndef TESTS_SCALE_SCALE_REPORT_H_
#define TESTS_SCALE_SCALE_REPORT_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "absl/time/time.h"
#include "tests/scale/cascade_phase.h"
#include "tests/scale/number_format.h"
#include "tests/scale/periodic_load.h"
#include "tests/scale/thread_roles.h"
#include "tests/scale/timeout_load.h"
#include "timer/latency_histogram.h"

namespace cyber {
namespace scale {

inline constexpr double kTickCpuTargetPercent = 5.0;

struct ScaleResults {
  // What ran.
  TimeoutLoadOptions timeout_options;
  PeriodicLoadOptions periodic_options;
  std::string period_spread;        // the flag's spelling
  double periodic_calls_per_s = 0;  // expected, once all run
  absl::Duration warmup;
  absl::Duration window;
  bool interrupted = false;
  unsigned cpus = 0;
  double load_average_start = -1;
  double load_average_end = -1;
  int scheduler_processors = 0;
  absl::Duration tick;

  // Lateness, in the window.
  timer::LatencyHistogram periodic_lateness;
  timer::LatencyHistogram periodic_past_tick;
  timer::LatencyHistogram floor;
  uint64_t floor_skipped = 0;
  timer::LatencyHistogram oneshot_lateness;
  timer::LatencyHistogram request_lag;
  timer::LatencyHistogram wheel_lock_wait;
  // The probes during which the probe thread was not preempted, and the
  // waits >= 1 ms with and without it (wheel_lock_probe.h).
  timer::LatencyHistogram wheel_lock_wait_unpreempted;
  uint64_t long_lock_waits = 0;
  uint64_t long_lock_waits_preempted = 0;
  // The tick thread's longest single hold of the wheel lock, wall
  // time, whole run (TimingWheel::CascadeStats::max_hold_ns).
  absl::Duration wheel_max_hold;
  std::array<uint64_t, kCascadePhaseBins> late_calls_by_phase{};
  std::array<uint64_t, kCascadePhaseBins> long_lock_waits_by_phase{};

  // CPU, over the window.
  std::map<ThreadRole, RoleCpu> cpu;
  absl::Duration process_cpu;
  uint64_t tick_wakeups = 0;
  uint64_t tick_expiries = 0;
  uint64_t scheduler_dispatched = 0;
  uint64_t scheduler_refused = 0;

  // Memory.
  int64_t setup_rss_bytes = -1;  // after making every Timer, none armed yet
  int64_t peak_rss_bytes = -1;
  int64_t window_rss_min_bytes = -1;
  int64_t window_rss_max_bytes = -1;
  double bytes_per_oneshot = 0;
  double bytes_per_periodic = 0;
  size_t sizeof_timer = 0;
  int64_t live_timeouts_min = -1;
  int64_t live_timeouts_max = -1;
  int64_t wheel_entries_min = -1;
  int64_t wheel_entries_max = -1;

  // Counters: `timeouts_in_window` holds the window's differences of the
  // running counters; `timeouts` and `periodic` the totals after Stop().
  TimeoutCounters timeouts_in_window;
  TimeoutCounters timeouts;
  PeriodicCounters periodic;
  double expected_window_calls = 0;
};

struct Verdict {
  absl::Duration lateness_bound;  // tick + floor p99
  // False without periodic calls or floor samples: no verdict on lateness.
  bool lateness_measured = false;
  bool lateness_pass = false;
  double tick_cpu_percent = 0;
  bool tick_cpu_pass = false;
  uint64_t violations = 0;  // correctness invariants broken (exit status 1)
};

Verdict Judge(const ScaleResults& r);

std::string SummaryMarkdown(const ScaleResults& r, const Verdict& v);
std::string ResultsJson(const ScaleResults& r, const Verdict& v);

// Formatting shared with the progress lines (Commas: number_format.h).
std::string GiB(int64_t bytes);
std::string Rate(double per_second);
double Percent(absl::Duration part, absl::Duration whole);

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_SCALE_REPORT_H_
