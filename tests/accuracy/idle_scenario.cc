#include "tests/accuracy/idle_scenario.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/accuracy/cpu_usage.h"
#include "tests/accuracy/wakeup_sampler.h"

namespace cyber {
namespace accuracy {

ScenarioResult RunIdleScenario(const ScenarioContext& context, std::string id,
                               std::string title, absl::Duration run_for) {
  SteadyClock* const clock = context.clock;
  ScenarioResult r;
  r.id = std::move(id);
  r.title = std::move(title);
  r.kind = ScenarioKind::kIdle;
  const size_t armed = context.driver->wheel().size();
  if (armed != 0) {
    r.error = absl::StrCat(armed, " timers armed at the start");
  }
  WakeupSampler sampler(clock, context.driver, context.wakeup_interval);
  context.driver->AwaitIdle();  // asleep, on a plan made before we start
  const Instant planned = context.driver->PlannedWake();
  const CpuSample cpu_before = SampleCpu(clock);
  r.zero = clock->Now();
  if (!planned.IsInfiniteFuture()) r.planned_wake_at_start = planned - r.zero;
  sampler.Start();
  clock->SleepUntil(r.zero + run_for);
  r.wakeups = sampler.Stop();
  r.elapsed = clock->Now() - r.zero;
  r.cpu = CpuBetween(cpu_before, SampleCpu(clock), context.cpu_threads);
  return r;
}

}  // namespace accuracy
}  // namespace cyber
