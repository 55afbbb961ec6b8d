// Options, events and statistics of a Timer (see timer.h), plus the
// Cyber-RT-compatible TimerOption.

#ifndef TIMER_TIMER_OPTIONS_H_
#define TIMER_TIMER_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cyber/time/instant.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace timer {

// Cyber RT's name for the resolution, in milliseconds.
inline constexpr uint32_t TIMER_RESOLUTION_MS = 2;
static_assert(absl::Milliseconds(TIMER_RESOLUTION_MS) == kTimerResolution,
              "TIMER_RESOLUTION_MS must match kTimerResolution");

// TimerOptions::priority: take it from the dispatcher (see there).
inline constexpr int kPriorityFromConf = -1;

// What a periodic timer does when a run ends after the next expected time
// (an overrun), or when it is dispatched that late.
enum class OverrunPolicy {
  // One late call as soon as the wheel can make it (at once when the missed
  // tick was never processed, else the next tick) for the latest missed
  // period, then back on the original phase; the other missed periods are
  // skipped and counted. If the next on-phase time is less than half a
  // period after that late call, the late call is dropped too, so the timer
  // never schedules two calls closer than half a period. (Dispatch latency
  // is not the timer's to control: a call that started late, e.g. on a busy
  // processor, can be followed by the next on-phase call sooner.) A call
  // whose tick has passed counts as missed even if the run itself was short
  // (late dispatch). A call dispatched late, when later periods are due as
  // well (the process was stalled), stands for the latest of them; the
  // others are skipped and counted: a stall ends in one late call.
  kSkip,
  // Re-base the schedule: the next call is one period after the run ended.
  kDelay,
  // Catch up: call back to back for the missed periods, at most `max_burst`
  // of them (older ones are skipped and counted), then back on phase.
  kBurst,
};

const char* OverrunPolicyName(OverrunPolicy policy);

// Where a oneshot's call lands relative to its deadline. (A periodic timer
// needs no choice: each call k is armed for start + k * period exactly,
// whatever the period.)
enum class TimerPrecision {
  // On the first tick boundary at or after the deadline: never early, at
  // most one tick late, and the tick thread wakes once for every timer due
  // on that tick (few wake-ups with many timeouts). The default.
  kTick,
  // At the deadline itself: the tick thread wakes for it (wake-up latency
  // only). One more wake-up per call when the deadline is between ticks.
  kExact,
};

const char* TimerPrecisionName(TimerPrecision precision);

// What a timer is doing, or how its last schedule ended (Timer::phase()).
enum class TimerPhase {
  kNotStarted,  // configured (or never), not started since
  kScheduled,   // a call is armed or queued (a periodic timer between calls)
  kRunning,     // its callback is running now
  kFired,       // a oneshot whose call ran (or runs no more): done
  kCancelled,   // stopped (Stop, Cancel, CancelAll) while a call was pending
};

const char* TimerPhaseName(TimerPhase phase);

// Passed to callbacks that want to know about their timing.
struct TimerEvent {
  Instant expected_time;  // start + k * period (or start + delay)
  Instant actual_time;    // when the callback started, on the timer's clock
  int64_t missed_periods = 0;  // periods skipped since the previous call
  absl::Duration last_run_duration;  // the previous call's run time
};

// Per-timer counters, read with Timer::GetStatistics().
struct TimerStatistics {
  uint64_t fires = 0;              // callbacks started
  uint64_t overruns = 0;  // runs that ended after the next expected time,
                          // whether the run was slow or started late
  uint64_t missed_periods = 0;  // periods skipped (see OverrunPolicy), also
                                // while a due call waited to begin (starved
                                // by higher-priority work) or was refused
  uint64_t exceptions = 0;         // callbacks that threw
  uint64_t dispatch_refusals = 0;  // due calls the dispatcher refused
  uint64_t early_fires = 0;        // calls before their expected time: always 0
                                   // (kept as evidence; nonzero is a bug)
  absl::Duration lateness_max;  // actual - expected, the largest so far
  absl::Duration run_time_max;
  // Percentiles: only for a timer whose options set latency_percentiles
  // (then `percentiles` is true); zero otherwise. Upper bounds within 12.5%.
  bool percentiles = false;
  absl::Duration lateness_p50;
  absl::Duration lateness_p99;
  absl::Duration run_time_p99;
};

// Configuration of a Timer (the modern surface).
struct TimerOptions {
  std::string name;  // shown in logs, errors and statistics; "timer#N" if empty
  // Periodic: the period, > 0, any length (below the tick: served
  // exactly; beyond the wheel's ~99 days, or InfiniteDuration: never).
  // Oneshot: the delay from Schedule(), any value: <= 0 runs at once
  // (counted late), beyond the wheel's range or infinite is "never".
  absl::Duration period = absl::ZeroDuration();
  bool oneshot = false;
  // Oneshots only: the delay is the default timeout of the timer system the
  // timer runs on (TimerSystem::set_default_timeout; folly's
  // HHWheelTimer::setDefaultTimeout and scheduleTimeout(callback)), read
  // at each Schedule()/Reset(); `period` is then ignored. A Schedule() on
  // a system with no default timeout fails with FailedPrecondition naming
  // the timer and the system.
  bool use_default_timeout = false;
  // Exactly one of the two callbacks is used: `event_callback` if set.
  std::function<void()> callback;
  std::function<void(const TimerEvent&)> event_callback;
  OverrunPolicy overrun_policy = OverrunPolicy::kSkip;
  int max_burst = 3;  // kBurst only: most catch-up calls after an overrun
  // Priority of the callback where the dispatcher orders by priority (the
  // scheduler: higher runs first). kPriorityFromConf: the dispatcher's
  // priority for a task named like the timer (the scheduler conf's
  // `tasks { name prio }`; a TimerComponent's timer is named like the
  // component), else 0. Resolved when the timer binds to a timer system:
  // its first Start() after construction or Configure(), or on another
  // system (a restart on the same one reuses it).
  int priority = kPriorityFromConf;
  // Keep lateness and run-time histograms for percentiles in the
  // statistics (2.3 KiB per timer from its first call). Off by default: a
  // process may hold hundreds of thousands of timeouts, and the counters
  // and maxima every timer keeps cost nothing extra. TimerComponent turns
  // it on for its timer.
  bool latency_percentiles = false;
  // Oneshots: kTick (the default) fires on the first tick at or after the
  // deadline; kExact at the deadline itself.
  // Periodic timers: every call is armed for its instant exactly; the
  // precision chooses the origin. kTick: call k at s + k * period, s the
  // first tick boundary at or after Schedule() (timers of whole-tick
  // periods started in one tick share every wake-up); kExact: s is the
  // instant of Schedule() itself.
  TimerPrecision precision = TimerPrecision::kTick;
  // Called when a cancel prevented a pending call (Stop(), Cancel(),
  // Configure(), the destructor, TimerSystem::CancelAll()), once per cancel,
  // on the cancelling thread, with no lock held. Optional.
  std::function<void()> on_cancel;
};

// Checks `options`: a callback, a positive period for a periodic timer (the
// rule every layer shares, timer/period_rules.h; a oneshot's delay may be
// anything), max_burst and priority. The error names the timer, the field
// and the value. Nothing depends on the wheel: any tick serves any period.
absl::Status ValidateTimerOptions(const TimerOptions& options);
// The same, naming the timer `name` in the error (a Timer's automatic name
// when options.name is empty).
absl::Status ValidateTimerOptions(const TimerOptions& options,
                                  absl::string_view name);

// Cyber RT's TimerOption: period in milliseconds.
struct TimerOption {
  TimerOption(uint32_t period, std::function<void()> callback, bool oneshot)
      : period(period), callback(std::move(callback)), oneshot(oneshot) {}
  TimerOption() : period(), callback(), oneshot() {}

  uint32_t period = 0;  // ms
  std::function<void()> callback;
  bool oneshot = false;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_OPTIONS_H_
