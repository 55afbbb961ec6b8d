#include "tests/scale/periodic_load.h"

#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "tests/scale/thread_roles.h"
#include "cyber/runtime/process_runtime.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace scale {

namespace {

// Calls due this close to Stop() may legitimately still be queued (as late
// as the latest call of the run was), or their skip not yet reported (kSkip
// reports skipped periods with the next call, which can be up to 1.5 periods
// away): the lost-call check leaves out the calls due within kSettle + the
// run's maximum lateness + kSettlePeriods periods before Stop().
constexpr absl::Duration kSettle = absl::Seconds(1);
constexpr int64_t kSettlePeriods = 2;

// The starter sleeps at most this long at a time, to notice Stop().
constexpr absl::Duration kStarterPoll = absl::Milliseconds(100);

}  // namespace

struct PeriodicLoad::Periodic {
  std::unique_ptr<Timer> timer;
  absl::Duration period;
  absl::Duration start_offset;
  // Written by the starter around Schedule(); read by the callbacks (ordered
  // by the timer's locks) and, after the starter is joined, by Stop().
  Instant schedule_begin;
  Instant schedule_end;
  bool started = false;
  // Written only by this timer's callback, which never runs concurrently
  // with itself (consecutive calls are ordered by the timer's lock); read
  // after the timer's synchronous Stop().
  uint64_t calls = 0;
  uint64_t missed = 0;
  Instant origin;  // derived from the first call
  Instant last_expected;
};

PeriodicLoad::PeriodicLoad(const PeriodicLoadOptions& options, Clock* clock,
                           const MeasurementWindow* window)
    : options_(options), clock_(clock), window_(window) {}

PeriodicLoad::~PeriodicLoad() {
  Stop();
  if (timers_ != nullptr) {
    for (int64_t i = 0; i < options_.timers; ++i) timers_[i].timer.reset();
    timers_.reset();
  }
}

absl::Status PeriodicLoad::CreateTimers() {
  timers_.reset(new Periodic[static_cast<size_t>(options_.timers)]);
  std::mt19937_64 rng(options_.seed * 104729 + 17);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double lo = absl::ToDoubleSeconds(options_.min_period);
  const double hi = absl::ToDoubleSeconds(options_.max_period);
  calls_per_second_ = 0;
  for (int64_t i = 0; i < options_.timers; ++i) {
    Periodic& p = timers_[i];
    const double u = unit(rng);
    const double seconds = options_.spread == PeriodSpread::kUniform
                               ? lo + u * (hi - lo)
                               : lo * std::pow(hi / lo, u);
    // Nearest multiple of the granularity, never below the minimum.
    p.period = std::max(
        absl::Floor(absl::Seconds(seconds) + options_.granularity / 2,
                    options_.granularity),
        options_.min_period);
    p.start_offset = p.period * unit(rng);
    calls_per_second_ += 1.0 / absl::ToDoubleSeconds(p.period);
    TimerOptions o;
    o.name = absl::StrCat("periodic-", i);
    o.period = p.period;
    o.oneshot = false;
    const uint32_t index = static_cast<uint32_t>(i);
    o.event_callback = [this, index](const TimerEvent& e) { OnCall(index, e); };
    p.timer = std::make_unique<Timer>();
    absl::Status status = p.timer->Configure(std::move(o));
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

void PeriodicLoad::Start() {
  starter_ = std::thread([this] {
    pthread_setname_np(pthread_self(), kStarterThreadName);
    StartLoop();
  });
}

void PeriodicLoad::StartLoop() {
  std::vector<std::pair<absl::Duration, uint32_t>> order;
  order.reserve(static_cast<size_t>(options_.timers));
  for (int64_t i = 0; i < options_.timers; ++i) {
    order.emplace_back(timers_[i].start_offset, static_cast<uint32_t>(i));
  }
  std::sort(order.begin(), order.end());
  const Instant base = clock_->Now();
  for (const auto& [offset, index] : order) {
    const Instant at = base + offset;
    while (clock_->Now() < at) {
      if (stopping_.load(std::memory_order_relaxed)) return;
      clock_->SleepUntil(std::min(at, clock_->Now() + kStarterPoll));
    }
    if (stopping_.load(std::memory_order_relaxed)) return;
    Periodic& p = timers_[index];
    p.schedule_begin = clock_->Now();
    const absl::Status status = p.timer->Schedule();
    p.schedule_end = clock_->Now();
    if (!status.ok()) {
      AERROR_EVERY(1000) << "timer_scale_run: " << status;
      continue;
    }
    p.started = true;
    started_.fetch_add(1, std::memory_order_relaxed);
  }
}

void PeriodicLoad::OnCall(uint32_t index, const TimerEvent& event) {
  Periodic& p = timers_[index];
  const timer::TimingWheel& wheel = ProcessRuntime()->timers()->wheel();
  if (event.actual_time < event.expected_time) {
    early_.fetch_add(1, std::memory_order_relaxed);
    AERROR_EVERY(1000) << "timer_scale_run: periodic-" << index
                       << " called early: at " << event.actual_time
                       << ", expected " << event.expected_time;
  }
  if (p.calls == 0) {
    p.origin = event.expected_time - p.period * (1 + event.missed_periods);
    const Instant latest =
        wheel.TickToInstant(wheel.DeadlineToTick(p.schedule_end));
    const bool on_tick =
        wheel.TickToInstant(wheel.DeadlineToTick(p.origin)) == p.origin;
    if (!on_tick || p.origin < p.schedule_begin || p.origin > latest) {
      phase_errors_.fetch_add(1, std::memory_order_relaxed);
      AERROR_EVERY(1000) << "timer_scale_run: periodic-" << index
                         << ": schedule origin " << p.origin
                         << " is not the first tick after Schedule() ["
                         << p.schedule_begin << ", " << p.schedule_end << "]";
    }
  } else if (event.expected_time - p.last_expected !=
             p.period * (1 + event.missed_periods)) {
    phase_errors_.fetch_add(1, std::memory_order_relaxed);
    AERROR_EVERY(1000) << "timer_scale_run: periodic-" << index
                       << ": expected " << event.expected_time
                       << " after " << p.last_expected << " with "
                       << event.missed_periods << " missed, period "
                       << absl::FormatDuration(p.period);
  }
  const int64_t late_ns =
      absl::ToInt64Nanoseconds(event.actual_time - event.expected_time);
  int64_t seen = max_late_ns_.load(std::memory_order_relaxed);
  while (late_ns > seen && !max_late_ns_.compare_exchange_weak(
                               seen, late_ns, std::memory_order_relaxed)) {
  }
  p.last_expected = event.expected_time;
  ++p.calls;
  p.missed += static_cast<uint64_t>(event.missed_periods);
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (window_->Contains(event.actual_time)) {
    window_calls_.fetch_add(1, std::memory_order_relaxed);
    window_missed_.fetch_add(static_cast<uint64_t>(event.missed_periods),
                             std::memory_order_relaxed);
    const absl::Duration late = event.actual_time - event.expected_time;
    lateness_.Record(late);
    if (late >= kLateCall) {
      late_by_phase_.Add(CascadePhaseBin(wheel, event.expected_time));
    }
    const Instant tick_instant =
        wheel.TickToInstant(wheel.DeadlineToTick(event.expected_time));
    past_tick_.Record(event.actual_time - tick_instant);
  }
}

void PeriodicLoad::Stop() {
  if (stopped_ || timers_ == nullptr) return;
  stopped_ = true;
  stopping_.store(true);
  if (starter_.joinable()) starter_.join();
  uint64_t lost_timers = 0;
  uint64_t lost_periods = 0;
  uint64_t missed = 0;
  uint64_t overruns = 0;
  uint64_t refusals = 0;
  uint64_t timer_early = 0;
  for (int64_t i = 0; i < options_.timers; ++i) {
    Periodic& p = timers_[i];
    if (p.timer == nullptr) break;  // CreateTimers() failed here
    const absl::Duration max_late =
        absl::Nanoseconds(max_late_ns_.load(std::memory_order_relaxed));
    if (!p.started) continue;
    const Instant stop_at = clock_->Now();
    p.timer->Stop();  // synchronous: p's fields are final now
    const timer::TimingWheel& wheel = ProcessRuntime()->timers()->wheel();
    const Instant origin =
        p.calls > 0 ? p.origin
                    : wheel.TickToInstant(wheel.DeadlineToTick(p.schedule_end));
    const Instant settled =
        stop_at - kSettle - max_late - p.period * kSettlePeriods;
    const uint64_t due =
        settled > origin
            ? static_cast<uint64_t>((settled - origin) / p.period)
            : 0;
    if (p.calls + p.missed < due) {
      ++lost_timers;
      lost_periods += due - (p.calls + p.missed);
      AERROR_EVERY(1000) << "timer_scale_run: periodic-" << i << " (period "
                         << absl::FormatDuration(p.period) << "): " << p.calls
                         << " calls + " << p.missed
                         << " missed periods, but " << due
                         << " periods were due by " << settled;
    }
    const TimerStatistics st = p.timer->GetStatistics();
    missed += st.missed_periods;
    overruns += st.overruns;
    refusals += st.dispatch_refusals;
    timer_early += st.early_fires;
  }
  lost_timers_.store(lost_timers);
  lost_periods_.store(lost_periods);
  missed_periods_.store(missed);
  overruns_.store(overruns);
  dispatch_refusals_.store(refusals);
  timer_early_fires_.store(timer_early);
}

double PeriodicLoad::ExpectedCalls(Instant begin, Instant end) const {
  double expected = 0;
  for (int64_t i = 0; i < options_.timers; ++i) {
    const Periodic& p = timers_[i];
    if (!p.started || p.schedule_end > begin) continue;
    expected += absl::FDivDuration(end - begin, p.period);
  }
  return expected;
}

PeriodicCounters PeriodicLoad::counters() const {
  PeriodicCounters c;
  c.calls = calls_.load();
  c.window_calls = window_calls_.load();
  c.window_missed = window_missed_.load();
  c.started = started_.load();
  c.early = early_.load();
  c.phase_errors = phase_errors_.load();
  c.lost_timers = lost_timers_.load();
  c.lost_periods = lost_periods_.load();
  c.missed_periods = missed_periods_.load();
  c.overruns = overruns_.load();
  c.dispatch_refusals = dispatch_refusals_.load();
  c.timer_early_fires = timer_early_fires_.load();
  return c;
}

}  // namespace scale
}  // namespace cyber
