#include "tests/accuracy/periodic_scenario.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "tests/accuracy/cpu_usage.h"
#include "tests/accuracy/floor_sleeper.h"
#include "tests/accuracy/periodic_probe.h"
#include "tests/accuracy/wakeup_sampler.h"
#include "timer/timer.h"

namespace cyber {
namespace accuracy {
namespace {

// How long past its due time the first call, or the last recorded one, may
// be before the scenario is declared stuck. Generous: a loaded shared
// machine can stall a thread for a second, and a stuck timer is an error the
// report must show, not a long wait.
constexpr absl::Duration kStallLimit = absl::Seconds(5);

}  // namespace

ScenarioResult RunPeriodicScenario(const ScenarioContext& context,
                                   const PeriodicSpec& spec) {
  ACHECK(spec.policy != timer::OverrunPolicy::kDelay)
      << "periodic scenario " << spec.id << ": kDelay is not supported";
  SteadyClock* const clock = context.clock;
  ScenarioResult r;
  r.id = spec.id;
  r.title = spec.title;
  r.kind = ScenarioKind::kPeriodic;
  r.period = spec.period;
  r.policy = spec.policy;
  r.floor_shift = spec.period / 2;
  r.overrun = spec.overrun;
  r.planned_calls = std::max<int64_t>(1, spec.run_for / spec.period);

  PeriodicProbe::Options probe_options;
  probe_options.period = spec.period;
  probe_options.calls = r.planned_calls;
  if (spec.overrun > absl::ZeroDuration()) {
    probe_options.overrun_at = r.planned_calls / 2;
  }
  PeriodicProbe probe(probe_options, &context.driver->wheel());

  timer::TimerOptions options;
  options.name = spec.id;
  options.period = spec.period;
  options.overrun_policy = spec.policy;
  const absl::Duration overrun = spec.overrun;
  options.event_callback = [&probe, clock, overrun](const timer::TimerEvent& e) {
    if (probe.OnCall(e)) clock->SleepUntil(e.actual_time + overrun);
  };

  // Destruction order: the timer (stopped, so no callback touches `probe`)
  // goes before the probe, the floor and the sampler join their threads.
  FloorSleeper floor(clock);
  WakeupSampler sampler(clock, context.driver, context.wakeup_interval);
  timer::Timer timer(std::move(options), context.driver);

  const CpuSample cpu_before = SampleCpu(clock);
  const Instant begin = clock->Now();
  sampler.Start();
  const absl::Status scheduled = timer.Schedule();
  std::optional<PeriodicProbe::Start> start;
  if (!scheduled.ok()) {
    r.error = std::string(scheduled.message());
    r.refused = true;
  } else {
    start = probe.WaitForStart(begin + spec.period + kStallLimit);
    if (!start.has_value()) {
      r.error = absl::StrCat("no first call within ",
                             absl::FormatDuration(kStallLimit),
                             " of its due time");
    }
  }
  r.zero = start.has_value() ? start->origin : begin;

  if (start.has_value()) {
    std::vector<Deadline> deadlines;
    deadlines.reserve(static_cast<size_t>(r.planned_calls));
    for (int64_t i = 0; i < r.planned_calls; ++i) {
      const int64_t k = start->first_index + 1 + i;
      deadlines.push_back({k, start->origin + spec.period * k + r.floor_shift});
    }
    floor.Start(std::move(deadlines));
    const Instant last_due =
        start->origin + spec.period * (start->first_index + r.planned_calls);
    if (!probe.WaitUntilDone(last_due + spec.overrun + kStallLimit)) {
      r.error = absl::StrCat("the last recorded call did not come within ",
                             absl::FormatDuration(kStallLimit),
                             " of its due time");
    }
    r.floor = floor.Join();  // the timer keeps running until the floor ends
  }
  timer.Stop();  // synchronous: no callback runs after this
  r.wakeups = sampler.Stop();
  r.elapsed = clock->Now() - begin;
  r.cpu = CpuBetween(cpu_before, SampleCpu(clock), context.cpu_threads);
  if (start.has_value()) r.cpu.floor = floor.cpu();
  r.timer = probe.TakeFires();
  r.overrun_index = probe.overrun_index();
  r.counters.Add(timer.GetStatistics());
  return r;
}

}  // namespace accuracy
}  // namespace cyber
