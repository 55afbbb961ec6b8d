#include "tests/accuracy/oneshot_scenario.h"

#include <algorithm>
#include <memory>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/accuracy/cpu_usage.h"
#include "tests/accuracy/fire_log.h"
#include "tests/accuracy/floor_sleeper.h"
#include "tests/accuracy/wakeup_sampler.h"
#include "timer/timer.h"

namespace cyber {
namespace accuracy {
namespace {

// Time between taking the scenario's zero and its first launch: the floor
// and sampler threads start in it, so neither starts late.
constexpr absl::Duration kLead = absl::Milliseconds(20);
// A oneshot not fired this long after the last deadline counts as lost.
constexpr absl::Duration kStragglerLimit = absl::Seconds(5);

absl::Duration UniformIn(std::mt19937_64* rng, absl::Duration lo,
                         absl::Duration hi) {
  std::uniform_int_distribution<int64_t> ns(absl::ToInt64Nanoseconds(lo),
                                            absl::ToInt64Nanoseconds(hi));
  return absl::Nanoseconds(ns(*rng));
}

}  // namespace

std::vector<OneshotLaunch> MakeOneshotPlan(const OneshotSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  std::vector<OneshotLaunch> plan;
  plan.reserve(static_cast<size_t>(std::max(0, spec.count)));
  absl::Duration launch;
  for (int i = 0; i < spec.count; ++i) {
    const absl::Duration delay = UniformIn(&rng, spec.min_delay, spec.max_delay);
    plan.push_back({launch, delay});
    launch += UniformIn(&rng, spec.min_gap, spec.max_gap);
  }
  return plan;
}

ScenarioResult RunOneshotScenario(const ScenarioContext& context,
                                  const OneshotSpec& spec) {
  SteadyClock* const clock = context.clock;
  const timer::TimingWheel* const wheel = &context.driver->wheel();
  ScenarioResult r;
  r.id = spec.id;
  r.title = spec.title;
  r.kind = ScenarioKind::kOneshot;
  r.planned_calls = spec.count;
  r.precision = spec.precision;
  const std::vector<OneshotLaunch> plan = MakeOneshotPlan(spec);

  FireLog log;
  FloorSleeper floor(clock);
  WakeupSampler sampler(clock, context.driver, context.wakeup_interval);
  std::vector<std::unique_ptr<timer::Timer>> timers;  // destroyed first
  timers.reserve(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    timer::TimerOptions options;
    options.name = absl::StrCat(spec.id, "-", i);
    options.period = plan[i].delay;
    options.oneshot = true;
    options.precision = spec.precision;
    const int64_t index = static_cast<int64_t>(i);
    options.event_callback = [&log, wheel, index](const timer::TimerEvent& e) {
      Fire fire;
      fire.index = index;
      fire.expected = e.expected_time;
      fire.actual = e.actual_time;
      fire.tick = wheel->TickToInstant(wheel->DeadlineToTick(e.expected_time));
      log.Add(fire);
    };
    timers.push_back(
        std::make_unique<timer::Timer>(std::move(options), context.driver));
  }

  const CpuSample cpu_before = SampleCpu(clock);
  const Instant begin = clock->Now();
  r.zero = begin + kLead;
  std::vector<Deadline> deadlines;
  deadlines.reserve(plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    deadlines.push_back({static_cast<int64_t>(i),
                         r.zero + plan[i].launch + plan[i].delay});
  }
  std::sort(deadlines.begin(), deadlines.end(),
            [](const Deadline& a, const Deadline& b) { return a.at < b.at; });
  sampler.Start();
  floor.Start(std::move(deadlines));

  size_t scheduled = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    clock->SleepUntil(r.zero + plan[i].launch);
    const absl::Status status = timers[i]->Schedule();
    if (!status.ok()) {
      r.error = std::string(status.message());
      r.refused = true;
      break;
    }
    ++scheduled;
  }
  const Instant limit = clock->Now() + spec.max_delay + kStragglerLimit;
  if (!log.WaitForCount(scheduled, limit) && r.error.empty()) {
    r.error = absl::StrCat("only ", log.size(), " of ", scheduled,
                           " oneshots fired within ",
                           absl::FormatDuration(kStragglerLimit),
                           " of the last deadline");
  }
  r.floor = floor.Join();
  for (const auto& t : timers) {
    t->Stop();
    r.counters.Add(t->GetStatistics());
  }
  r.wakeups = sampler.Stop();
  r.elapsed = clock->Now() - begin;
  r.cpu = CpuBetween(cpu_before, SampleCpu(clock), context.cpu_threads);
  r.cpu.floor = floor.cpu();
  timers.clear();
  r.timer = log.Take();
  std::sort(r.timer.begin(), r.timer.end(),
            [](const Fire& a, const Fire& b) { return a.index < b.index; });
  return r;
}

}  // namespace accuracy
}  // namespace cyber
