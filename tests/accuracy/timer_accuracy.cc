// timer_accuracy: how close to their deadlines Timers fire on the real clock,
// how often the tick thread wakes, and what this machine can do at best.
//
// A measurement tool, not a test: its figures depend on the machine and its
// load, so it asserts only what must hold everywhere. A callback that runs
// before its expected time is a correctness violation; the exit status is
// then 1 (and 1 if a oneshot never fired). Everything else is reported.
//
// What it runs, one scenario after another (never two at once, so they do not
// compete for the cores), each timer scenario on a fresh TickDriver over
// SteadyClock with one shared 2-thread CallbackExecutor:
//
//   * oneshots: --oneshots timers launched 1-7 ms apart (about a dozen in
//     flight), delays uniform in [2 ms, 100 ms];
//   * periodic timers at 10 ms (--periodic_seconds), 2 ms and 100 ms; the
//     100 ms one is also the "one timer armed" wake-up measurement;
//   * the tick thread with no timer armed (--idle_seconds);
//   * the floor: a bare thread sleeping with SteadyClock::SleepUntil
//     (clock_nanosleep, TIMER_ABSTIME) to the very same oneshot deadlines, and
//     a bare 10 ms loop on absolute deadlines.
//
// Lateness is TimerEvent::actual_time - expected_time. A timer's deadline
// rounds up to a whole 2 ms tick by design, so its lateness includes up to one
// tick of rounding; "past tick" removes that (actual time minus the tick
// instant the deadline rounds up to) and is the figure to hold against the
// floor. Percentiles come from LatencyHistogram, so p50/p99 are bucket upper
// bounds (at most 12.5% high); max is exact.
//
// Rounding: a oneshot counts from Schedule() and its deadline rounds up to a
// tick, so on average it loses half a tick; a periodic schedule starts on the
// first tick boundary at or after Schedule() (timer.h), so whole-tick periods
// (all of them here) land on ticks and lose nothing to rounding.
//
// Drift: a periodic schedule is phase-locked (origin + k * period), so the
// error of the N-th call should equal that of the first, not grow with N. The
// origin is taken from the first call (its expected time minus its period)
// and shown relative to the instant measured just before Schedule(); N counts
// the calls received plus the periods reported missed, independently of the
// timer's own index; the tool prints expected vs actual elapsed time over the
// N periods.
//
// Never reads the wall clock: every instant comes from SteadyClock.
//
//   bazel run --config=opt //tests/accuracy:timer_accuracy
//   bazel run --config=opt //tests/accuracy:timer_accuracy -- --oneshots=5000
//
// (--periodic_seconds=60 and the other flags below scale the runs up.)

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cyber/common/log.h"
#include "cyber/time/instant.h"
#include "cyber/time/steady_clock.h"
#include "gflags/gflags.h"
#include "timer/callback_executor.h"
#include "timer/latency_histogram.h"
#include "timer/tick_driver.h"
#include "timer/timer.h"
#include "timer/timer_options.h"

DEFINE_int32(oneshots, 500,
             "number of oneshot timers (and of floor sleeps to the same "
             "deadlines)");
DEFINE_double(periodic_seconds, 5.0,
              "how long the 10 ms periodic timer and the bare 10 ms loop run");
DEFINE_double(fast_periodic_seconds, 2.0,
              "how long the 2 ms periodic timer runs");
DEFINE_double(slow_periodic_seconds, 3.0,
              "how long the 100 ms periodic timer runs (its row is also the "
              "one-timer wake-up rate)");
DEFINE_double(idle_seconds, 2.0,
              "how long the tick thread is watched with no timer armed");
DEFINE_uint64(seed, 1, "seed of the oneshot delays and launch gaps");

namespace {

using cyber::Instant;
using cyber::SteadyClock;
using cyber::timer::CallbackExecutor;
using cyber::timer::LatencyHistogram;
using cyber::timer::TickDriver;
using cyber::timer::Timer;
using cyber::timer::TimerEvent;
using cyber::timer::TimerOptions;
using cyber::timer::TimingWheel;

// Oneshot delays, uniform in [kMinDelay, kMaxDelay].
constexpr absl::Duration kMinDelay = absl::Milliseconds(2);
constexpr absl::Duration kMaxDelay = absl::Milliseconds(100);
// Gap between oneshot launches, uniform: a mean delay of 51 ms over a mean gap
// of 4 ms keeps about a dozen timers in flight, launched on no fixed phase to
// the tick grid.
constexpr absl::Duration kMinLaunchGap = absl::Milliseconds(1);
constexpr absl::Duration kMaxLaunchGap = absl::Milliseconds(7);
// A oneshot not fired this long after the last deadline counts as lost.
constexpr absl::Duration kStragglerLimit = absl::Seconds(5);

constexpr int kExecutorThreads = 2;
constexpr absl::Duration kFastPeriod = absl::Milliseconds(2);
constexpr absl::Duration kPeriod = absl::Milliseconds(10);
constexpr absl::Duration kSlowPeriod = absl::Milliseconds(100);

// One oneshot of the plan: launched `launch` after the scenario starts, due
// `delay` after its launch.
struct OneshotPlan {
  absl::Duration launch;
  absl::Duration delay;
};

std::vector<OneshotPlan> MakeOneshotPlan(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> delay_ns(
      absl::ToInt64Nanoseconds(kMinDelay), absl::ToInt64Nanoseconds(kMaxDelay));
  std::uniform_int_distribution<int64_t> gap_ns(
      absl::ToInt64Nanoseconds(kMinLaunchGap),
      absl::ToInt64Nanoseconds(kMaxLaunchGap));
  std::vector<OneshotPlan> plan;
  plan.reserve(static_cast<size_t>(count));
  absl::Duration launch = absl::ZeroDuration();
  for (int i = 0; i < count; ++i) {
    plan.push_back({launch, absl::Nanoseconds(delay_ns(rng))});
    launch += absl::Nanoseconds(gap_ns(rng));
  }
  return plan;
}

// Lateness of one scenario's calls or wake-ups. Not thread-safe.
class LatenessSamples {
 public:
  // `wheel`, if not null, is the timing wheel the deadline was armed on: the
  // tick it rounds up to gives the "past tick" figure.
  void Record(Instant expected, Instant actual, const TimingWheel* wheel) {
    const absl::Duration late = actual - expected;
    if (late < absl::ZeroDuration()) ++early_;
    lateness_.Record(late);
    if (wheel != nullptr) {
      const Instant tick_instant =
          wheel->TickToInstant(wheel->DeadlineToTick(expected));
      past_tick_.Record(actual - tick_instant);
    }
    ++count_;
  }

  uint64_t count() const { return count_; }
  uint64_t early() const { return early_; }
  const LatencyHistogram& lateness() const { return lateness_; }
  const LatencyHistogram& past_tick() const { return past_tick_; }

 private:
  uint64_t count_ = 0;
  uint64_t early_ = 0;  // actual < expected
  LatencyHistogram lateness_;
  LatencyHistogram past_tick_;
};

// The first and last calls of a periodic run, for its drift.
struct PeriodicTrace {
  int64_t calls = 0;
  int64_t missed = 0;  // periods skipped, as the timer reported them
  TimerEvent first;
  TimerEvent last;

  void Add(const TimerEvent& event) {
    if (calls == 0) first = event;
    last = event;
    ++calls;
    missed += event.missed_periods;
  }
};

// Collects TimerEvents from callbacks running on the executor's threads.
class EventRecorder {
 public:
  explicit EventRecorder(const TimingWheel* wheel) : wheel_(wheel) {}

  void OnEvent(const TimerEvent& event) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      samples_.Record(event.expected_time, event.actual_time, wheel_);
      trace_.Add(event);
    }
    recorded_.notify_all();
  }

  // Waits until `count` events are recorded or `limit` passes; false if the
  // latter.
  bool WaitForCount(uint64_t count, Instant limit) {
    std::unique_lock<std::mutex> lock(mu_);
    return recorded_.wait_until(lock, SteadyClock::ToTimePoint(limit),
                                [&] { return samples_.count() >= count; });
  }

  LatenessSamples samples() const {
    std::lock_guard<std::mutex> lock(mu_);
    return samples_;
  }
  PeriodicTrace trace() const {
    std::lock_guard<std::mutex> lock(mu_);
    return trace_;
  }

 private:
  const TimingWheel* const wheel_;
  mutable std::mutex mu_;
  std::condition_variable recorded_;
  // mu_ protects the following state.
  LatenessSamples samples_;
  PeriodicTrace trace_;
};

// One line of the table.
struct Row {
  std::string scenario;
  bool has_samples = true;
  LatenessSamples samples;
  bool timer = false;         // early calls are violations; has "past tick"
  double wakeups_per_s = -1;  // negative: not measured
};

// Expected vs actual elapsed time over a periodic run's N periods.
struct DriftLine {
  std::string what;
  absl::Duration period;
  Instant start;   // measured just before the schedule began
  Instant origin;  // the schedule's k = 0: call k is due at origin + k * period
  PeriodicTrace trace;  // calls + missed = N, the index of the last call
};

double PerSecond(uint64_t count, absl::Duration over) {
  return static_cast<double>(count) / absl::ToDoubleSeconds(over);
}

TimerOptions EventTimerOptions(std::string name, absl::Duration period,
                               bool oneshot, EventRecorder* recorder) {
  TimerOptions options;
  options.name = std::move(name);
  options.period = period;
  options.oneshot = oneshot;
  options.event_callback = [recorder](const TimerEvent& event) {
    recorder->OnEvent(event);
  };
  return options;
}

// Oneshot timers on `driver`, launched per `plan`. False if a Schedule()
// failed or a oneshot did not fire in time (logged).
bool RunOneshotTimers(TickDriver* driver, const std::vector<OneshotPlan>& plan,
                      Row* row) {
  SteadyClock* const clock = SteadyClock::Get();
  EventRecorder recorder(&driver->wheel());
  std::vector<std::unique_ptr<Timer>> timers;  // destroyed before `recorder`
  timers.reserve(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    timers.push_back(std::make_unique<Timer>(
        EventTimerOptions(absl::StrFormat("oneshot-%d", i), plan[i].delay,
                          /*oneshot=*/true, &recorder),
        driver));
  }
  const uint64_t wakeups_before = driver->stats().wakeups;
  const Instant start = clock->Now();
  for (size_t i = 0; i < plan.size(); ++i) {
    clock->SleepUntil(start + plan[i].launch);
    const absl::Status status = timers[i]->Schedule();
    if (!status.ok()) {
      AERROR << "timer_accuracy: oneshots: " << status;
      return false;
    }
  }
  const Instant limit =
      clock->Now() + kMaxDelay + kStragglerLimit;  // after the last launch
  const bool all_fired = recorder.WaitForCount(plan.size(), limit);
  const absl::Duration elapsed = clock->Now() - start;
  row->samples = recorder.samples();
  row->wakeups_per_s =
      PerSecond(driver->stats().wakeups - wakeups_before, elapsed);
  if (!all_fired) {
    AERROR << "timer_accuracy: oneshots: only " << row->samples.count()
           << " of " << plan.size() << " fired within "
           << absl::FormatDuration(kStragglerLimit) << " of the last deadline";
  }
  return all_fired;
}

// One periodic timer on `driver` for `run_for`. False if Schedule() failed.
bool RunPeriodicTimer(TickDriver* driver, absl::Duration period,
                      absl::Duration run_for, Row* row, DriftLine* drift) {
  SteadyClock* const clock = SteadyClock::Get();
  EventRecorder recorder(&driver->wheel());
  Timer timer(
      EventTimerOptions(absl::StrCat("periodic-", absl::FormatDuration(period)),
                        period, /*oneshot=*/false, &recorder),
      driver);
  const uint64_t wakeups_before = driver->stats().wakeups;
  const Instant start = clock->Now();
  const absl::Status status = timer.Schedule();
  if (!status.ok()) {
    AERROR << "timer_accuracy: periodic: " << status;
    return false;
  }
  clock->SleepUntil(start + run_for);
  const uint64_t wakeups = driver->stats().wakeups - wakeups_before;
  const absl::Duration elapsed = clock->Now() - start;
  timer.Stop();  // synchronous: no call after this
  row->samples = recorder.samples();
  row->wakeups_per_s = PerSecond(wakeups, elapsed);
  drift->period = period;
  drift->start = start;
  drift->trace = recorder.trace();
  // The first call is for period 1 + the periods skipped before it.
  drift->origin = drift->trace.first.expected_time -
                  period * (1 + drift->trace.first.missed_periods);
  return true;
}

// The tick thread of `driver` with nothing armed, watched for `run_for`.
void RunIdle(TickDriver* driver, absl::Duration run_for, Row* row) {
  SteadyClock* const clock = SteadyClock::Get();
  const uint64_t wakeups_before = driver->stats().wakeups;
  const Instant start = clock->Now();
  clock->SleepUntil(start + run_for);
  const uint64_t wakeups = driver->stats().wakeups - wakeups_before;
  row->has_samples = false;
  row->wakeups_per_s = PerSecond(wakeups, clock->Now() - start);
}

// The floor for oneshots: one bare thread sleeping to the plan's deadlines
// (launch + delay), in order, with SleepUntil.
void RunOneshotFloor(const std::vector<OneshotPlan>& plan, Row* row) {
  std::vector<absl::Duration> deadlines;
  deadlines.reserve(plan.size());
  for (const OneshotPlan& p : plan) deadlines.push_back(p.launch + p.delay);
  std::sort(deadlines.begin(), deadlines.end());
  LatenessSamples samples;
  std::thread sleeper([&deadlines, &samples] {
    SteadyClock* const clock = SteadyClock::Get();
    const Instant start = clock->Now();
    for (absl::Duration d : deadlines) {
      const Instant deadline = start + d;
      clock->SleepUntil(deadline);
      samples.Record(deadline, clock->Now(), nullptr);
    }
  });
  sleeper.join();
  row->samples = samples;
}

// The floor for periodic calls: a bare loop sleeping to start + k * period.
void RunPeriodicFloor(absl::Duration period, absl::Duration run_for, Row* row,
                      DriftLine* drift) {
  LatenessSamples samples;
  PeriodicTrace trace;
  Instant start;
  std::thread sleeper([&] {
    SteadyClock* const clock = SteadyClock::Get();
    start = clock->Now();
    for (int64_t k = 1; period * k <= run_for; ++k) {
      TimerEvent call;
      call.expected_time = start + period * k;
      clock->SleepUntil(call.expected_time);
      call.actual_time = clock->Now();
      samples.Record(call.expected_time, call.actual_time, nullptr);
      trace.Add(call);
    }
  });
  sleeper.join();
  row->samples = samples;
  drift->period = period;
  drift->start = start;
  drift->origin = start;
  drift->trace = trace;
}

std::string Micros(absl::Duration d) {
  return absl::StrFormat("%.1f us", absl::ToDoubleMicroseconds(d));
}

void PrintTable(const std::vector<Row>& rows) {
  std::printf(
      "| scenario | samples | p50 | p99 | max | early | p99 past tick | "
      "wakeups/s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const std::string wakeups =
        r.wakeups_per_s < 0 ? "-" : absl::StrFormat("%.1f", r.wakeups_per_s);
    if (!r.has_samples) {
      std::printf("| %s | - | - | - | - | - | - | %s |\n", r.scenario.c_str(),
                  wakeups.c_str());
      continue;
    }
    const LatencyHistogram& h = r.samples.lateness();
    std::printf(
        "| %s | %llu | %s | %s | %s | %llu | %s | %s |\n", r.scenario.c_str(),
        static_cast<unsigned long long>(r.samples.count()),
        Micros(h.Percentile(0.50)).c_str(), Micros(h.Percentile(0.99)).c_str(),
        Micros(h.max()).c_str(),
        static_cast<unsigned long long>(r.samples.early()),
        r.timer ? Micros(r.samples.past_tick().Percentile(0.99)).c_str() : "-",
        wakeups.c_str());
  }
}

void PrintDrift(const DriftLine& d) {
  const PeriodicTrace& t = d.trace;
  if (t.calls == 0) {
    std::printf("%s: no calls\n", d.what.c_str());
    return;
  }
  const int64_t periods = t.calls + t.missed;
  const absl::Duration expected = d.period * periods;
  const absl::Duration actual = t.last.actual_time - d.origin;
  const absl::Duration first_error =
      t.first.actual_time -
      (d.origin + d.period * (1 + t.first.missed_periods));
  std::printf(
      "%s: origin = start %+.1f us; %lld periods: expected elapsed %.3f ms, "
      "actual %.3f ms, drift %+.1f us (first call %+.1f us; missed periods "
      "%lld)\n",
      d.what.c_str(), absl::ToDoubleMicroseconds(d.origin - d.start),
      static_cast<long long>(periods), absl::ToDoubleMilliseconds(expected),
      absl::ToDoubleMilliseconds(actual),
      absl::ToDoubleMicroseconds(actual - expected),
      absl::ToDoubleMicroseconds(first_error),
      static_cast<long long>(t.missed));
}

bool ValidateFlags() {
  bool ok = true;
  auto positive = [&ok](const char* name, double seconds) {
    if (!(seconds > 0)) {
      AERROR << "timer_accuracy: flag --" << name << ": " << seconds
             << " must be positive";
      ok = false;
    }
  };
  if (FLAGS_oneshots < 1) {
    AERROR << "timer_accuracy: flag --oneshots: " << FLAGS_oneshots
           << " must be at least 1";
    ok = false;
  }
  positive("periodic_seconds", FLAGS_periodic_seconds);
  positive("fast_periodic_seconds", FLAGS_fast_periodic_seconds);
  positive("slow_periodic_seconds", FLAGS_slow_periodic_seconds);
  positive("idle_seconds", FLAGS_idle_seconds);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "measures timer lateness, drift and tick-thread wake-ups on the real "
      "clock, next to a bare clock_nanosleep floor");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (!ValidateFlags()) return 2;

  SteadyClock* const clock = SteadyClock::Get();
  CallbackExecutor::Options executor_options;
  executor_options.threads = kExecutorThreads;
  CallbackExecutor executor(executor_options);
  const std::vector<OneshotPlan> plan =
      MakeOneshotPlan(FLAGS_oneshots, FLAGS_seed);
  const absl::Duration periodic_for = absl::Seconds(FLAGS_periodic_seconds);

  std::vector<Row> rows;
  std::vector<DriftLine> drifts;
  bool complete = true;

  // Each timer scenario gets a fresh driver. Its timers are gone when the
  // scenario returns; WaitIdle() then lets go of any dropped call still
  // queued (it holds the timer's core, which cancels on the driver when
  // released) before the driver is destroyed.
  auto timer_row = [](std::string scenario) {
    Row r;
    r.scenario = std::move(scenario);
    r.timer = true;
    return r;
  };
  {
    TickDriver driver(clock, &executor);
    Row row = timer_row(absl::StrFormat("timer oneshot, delay uniform [%s, %s]",
                                        absl::FormatDuration(kMinDelay),
                                        absl::FormatDuration(kMaxDelay)));
    complete &= RunOneshotTimers(&driver, plan, &row);
    executor.WaitIdle();
    rows.push_back(std::move(row));
  }
  {
    Row row;
    row.scenario = "floor: SleepUntil, same oneshot deadlines";
    RunOneshotFloor(plan, &row);
    rows.push_back(std::move(row));
  }
  const struct {
    absl::Duration period;
    double seconds;
  } periodic_runs[] = {
      {kPeriod, FLAGS_periodic_seconds},
      {kFastPeriod, FLAGS_fast_periodic_seconds},
      {kSlowPeriod, FLAGS_slow_periodic_seconds},
  };
  for (const auto& run : periodic_runs) {
    TickDriver driver(clock, &executor);
    Row row = timer_row(absl::StrCat(
        "timer periodic ", absl::FormatDuration(run.period),
        run.period == kSlowPeriod ? " (1 timer: target <= 11 wakeups/s)" : ""));
    DriftLine drift;
    drift.what =
        absl::StrCat("drift, timer ", absl::FormatDuration(run.period));
    complete &= RunPeriodicTimer(&driver, run.period,
                                 absl::Seconds(run.seconds), &row, &drift);
    executor.WaitIdle();
    rows.push_back(std::move(row));
    drifts.push_back(std::move(drift));
    if (run.period == kPeriod) {
      Row floor;
      floor.scenario = absl::StrCat("floor: SleepUntil loop ",
                                    absl::FormatDuration(kPeriod));
      DriftLine floor_drift;
      floor_drift.what =
          absl::StrCat("drift, floor ", absl::FormatDuration(kPeriod));
      RunPeriodicFloor(kPeriod, periodic_for, &floor, &floor_drift);
      rows.push_back(std::move(floor));
      drifts.push_back(std::move(floor_drift));
    }
  }
  {
    TickDriver driver(clock, &executor);
    Row row = timer_row("tick thread, 0 timers armed (target 0 wakeups/s)");
    RunIdle(&driver, absl::Seconds(FLAGS_idle_seconds), &row);
    rows.push_back(std::move(row));
  }

  std::printf(
      "\nmachine: nproc %u (std::thread::hardware_concurrency); clock "
      "CLOCK_MONOTONIC; tick %s; callback executor %d threads\n\n",
      std::thread::hardware_concurrency(),
      absl::FormatDuration(cyber::timer::kTimerResolution).c_str(),
      kExecutorThreads);
  PrintTable(rows);
  std::printf("\n");
  for (const DriftLine& d : drifts) PrintDrift(d);
  std::printf(
      "\nlateness = actual - expected; p50/p99 are histogram bucket upper "
      "bounds (<= 12.5%% high), max is exact.\n"
      "p99 past tick = actual - the tick the deadline rounds up to (timer "
      "lateness minus the by-design rounding of up to one tick).\n"
      "drift = actual - expected elapsed from the schedule's origin to the "
      "last call; phase-locked if it stays near the first call's error.\n");

  uint64_t early = 0;
  for (const Row& r : rows) {
    if (r.timer) early += r.samples.early();
  }
  if (early > 0) {
    std::printf("FAIL: %llu timer callbacks ran before their expected time\n",
                static_cast<unsigned long long>(early));
    return 1;
  }
  if (!complete) {
    std::printf("FAIL: a scenario did not complete (see the log above)\n");
    return 1;
  }
  return 0;
}
