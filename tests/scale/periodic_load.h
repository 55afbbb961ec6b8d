// PeriodicLoad: many periodic timers with periods from 10 ms to 10 s on the
// process's default timer system, each call checked against its ideal
// phase-locked time.
//
// Why: a robot process polls sensors and runs housekeeping on periodic
// timers; at scale the question is whether each call still comes within one
// tick (plus the machine's wake-up floor) of start + k * period while a
// million timeouts churn beside it, and what the tick thread pays for it.
//
// Periods. Drawn per timer at `granularity` (1 ms: Cyber RT periods are whole
// milliseconds) from one of:
//   kUniform     uniform in [min_period, max_period]: most timers are slow,
//                as in a real process; at 10 ms..10 s the aggregate is about
//                0.69 calls per second per timer (69,000/s for 10^5 timers);
//   kLogUniform  log-uniform: as many 10-20 ms timers as 5-10 s ones; about
//                14.5 calls per second per timer (1.45 million/s for 10^5),
//                beyond what a 2-core machine can dispatch.
// A period that is not a whole number of 2 ms ticks has expected times
// between ticks: such a call is rounded up to the next tick by design, so up
// to one tick of its lateness is rounding. "Past tick" lateness (actual -
// the tick the expected time rounds up to) separates it out.
//
// Phases. A schedule starts on the first tick at or after Schedule(), so
// timers started together would all fire on the same ticks. A starter thread
// ("scale-start") therefore starts timer i at U[0, period_i) after Start(),
// in time order: random phases, as in a process whose modules came up at
// different times.
//
// Checks on every call (in the callback), counted:
//   early      actual time before the expected time;
//   phase      the first call's schedule origin (expected - (1 + missed) *
//              period) is not a tick boundary within [the instant before
//              Schedule(), the first tick at or after it returned], or a
//              later call's expected time is not exactly the previous one +
//              (1 + missed_periods) * period;
//   lost       at Stop(): calls + reported missed periods fewer than the
//              periods due by (the instant of Stop() - 1 s - the run's
//              largest lateness - 2 periods), i.e. the timer stopped being
//              called well before Stop(). (A period lost between two calls
//              shows as a phase error.)
// Missed periods themselves (OverrunPolicy::kSkip under overload) are
// reported, not violations.
//
// Threads: CreateTimers/Start/Stop/destructor from one owner thread (after
// cyber::Init); the figures from any thread.

#ifndef TESTS_SCALE_PERIODIC_LOAD_H_
#define TESTS_SCALE_PERIODIC_LOAD_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/time/clock.h"
#include "tests/scale/cascade_phase.h"
#include "tests/scale/latency_recorder.h"
#include "timer/timer.h"

namespace cyber {
namespace scale {

enum class PeriodSpread { kUniform, kLogUniform };

struct PeriodicLoadOptions {
  int64_t timers = 100'000;
  absl::Duration min_period = absl::Milliseconds(10);
  absl::Duration max_period = absl::Seconds(10);
  PeriodSpread spread = PeriodSpread::kUniform;
  absl::Duration granularity = absl::Milliseconds(1);
  uint64_t seed = 1;
};

struct PeriodicCounters {
  uint64_t calls = 0;          // all calls so far
  uint64_t window_calls = 0;   // calls whose actual time is in the window
  uint64_t window_missed = 0;  // missed periods reported by those calls
  uint64_t started = 0;        // timers scheduled so far
  // Violations.
  uint64_t early = 0;
  uint64_t phase_errors = 0;
  uint64_t lost_timers = 0;    // known only after Stop()
  uint64_t lost_periods = 0;   // known only after Stop()
  // After Stop(): the timers' own statistics, summed.
  uint64_t missed_periods = 0;
  uint64_t overruns = 0;
  uint64_t dispatch_refusals = 0;
  uint64_t timer_early_fires = 0;
};

class PeriodicLoad {
 public:
  // Calls in the window at least this late are counted by the cascade phase
  // of their expected time (cascade_phase.h).
  static constexpr absl::Duration kLateCall = absl::Milliseconds(5);

  // `clock` must be the clock of the default timer system (SteadyClock).
  PeriodicLoad(const PeriodicLoadOptions& options, Clock* clock,
               const MeasurementWindow* window);
  // Stops (if running) and destroys every Timer.
  ~PeriodicLoad();
  PeriodicLoad(const PeriodicLoad&) = delete;
  PeriodicLoad& operator=(const PeriodicLoad&) = delete;

  // Draws the periods and makes every Timer (not started).
  // Errors: the first Timer configuration error.
  absl::Status CreateTimers();
  // Sum of 1 / period over all timers: calls per second once all run.
  double CallsPerSecond() const { return calls_per_second_; }
  // Starts the starter thread (random phases, see above).
  void Start();
  // Stops the starter and every timer; runs the final checks. Idempotent.
  void Stop();

  PeriodicCounters counters() const;
  // Calls in the window: actual - expected.
  const LatencyRecorder& lateness() const { return lateness_; }
  // Calls in the window: actual - the tick the expected time rounds up to.
  const LatencyRecorder& past_tick() const { return past_tick_; }
  std::array<uint64_t, kCascadePhaseBins> late_calls_by_phase() const {
    return late_by_phase_.Snapshot();
  }
  // Expected calls in [begin, end) of all timers started by `begin` (the sum
  // of (end - begin) / period). REQUIRES: Stop() has returned.
  double ExpectedCalls(Instant begin, Instant end) const;

 private:
  struct Periodic;

  void StartLoop();
  void OnCall(uint32_t index, const TimerEvent& event);

  const PeriodicLoadOptions options_;
  Clock* const clock_;
  const MeasurementWindow* const window_;
  std::unique_ptr<Periodic[]> timers_;
  double calls_per_second_ = 0;
  std::thread starter_;
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;  // owner thread only

  alignas(64) std::atomic<uint64_t> calls_{0};
  std::atomic<uint64_t> window_calls_{0};
  std::atomic<uint64_t> window_missed_{0};
  std::atomic<uint64_t> early_{0};
  std::atomic<uint64_t> phase_errors_{0};
  std::atomic<int64_t> max_late_ns_{0};  // every call of the run
  alignas(64) std::atomic<uint64_t> started_{0};
  // Final checks (written in Stop()).
  std::atomic<uint64_t> lost_timers_{0};
  std::atomic<uint64_t> lost_periods_{0};
  std::atomic<uint64_t> missed_periods_{0};
  std::atomic<uint64_t> overruns_{0};
  std::atomic<uint64_t> dispatch_refusals_{0};
  std::atomic<uint64_t> timer_early_fires_{0};

  LatencyRecorder lateness_;
  LatencyRecorder past_tick_;
  PhaseCounts late_by_phase_;
};

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_PERIODIC_LOAD_H_
