#include "tests/accuracy/console_table.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tests/accuracy/accuracy_target.h"
#include "tests/accuracy/cpu_usage.h"

namespace cyber {
namespace accuracy {
namespace {

std::string Micros(absl::Duration d) {
  return absl::StrFormat("%.0f us", absl::ToDoubleMicroseconds(d));
}

std::string Percent(absl::Duration cpu, absl::Duration window) {
  return absl::StrFormat("%.2f%%", PercentOfCore(cpu, window));
}

// The CPU columns: tick, processors, floor, process. A timer's row has the
// timer system's and the process's, its floor's row the floor thread's.
std::string TimerCpu(const CpuUsage& cpu) {
  return absl::StrFormat("%s | %s | - | %s", Percent(cpu.tick, cpu.window),
                         Percent(cpu.processors, cpu.window),
                         Percent(cpu.process, cpu.window));
}

std::string FloorCpu(const CpuUsage& cpu) {
  return absl::StrFormat(
      "- | - | %s | -",
      cpu.floor.has_value() ? Percent(*cpu.floor, cpu.window) : "-");
}

std::string PrecisionCell(const ScenarioResult& r) {
  return r.precision.has_value() ? timer::TimerPrecisionName(*r.precision)
                                 : "-";
}

// The target columns of a timer's row: p50 over floor | p99 / floor p99 |
// target. Figures past the tick carry a "(past tick)" mark.
std::string TargetCells(const TargetCheck& c) {
  const bool judged = c.verdict == TargetVerdict::kMeets ||
                      c.verdict == TargetVerdict::kMisses ||
                      c.verdict == TargetVerdict::kNoTarget;
  const char* mark = c.basis == TargetBasis::kPastTick ? " (past tick)" : "";
  std::string p50 = "-";
  std::string p99 = "-";
  if (judged && !std::isnan(c.p99_ratio)) {
    p50 = absl::StrFormat("%+.1f us%s",
                          absl::ToDoubleMicroseconds(c.p50_over_floor), mark);
    p99 = absl::StrFormat("%.2fx%s", c.p99_ratio, mark);
  }
  std::string verdict = TargetVerdictName(c.verdict);
  if (!c.why.empty()) absl::StrAppend(&verdict, " (", c.why, ")");
  return absl::StrFormat("%s | %s | %s", p50, p99, verdict);
}

void PrintRow(const std::string& name, const std::string& precision,
              const std::vector<Fire>& fires, bool timer,
              const std::string& target, const std::string& wakeups,
              const std::string& cpu) {
  const Lateness s = Summarize(LatenessOf(fires));
  const std::string past_tick =
      timer ? Micros(Summarize(PastTickOf(fires)).p99) : "-";
  std::printf("| %s | %s | %lld | %s | %s | %s | %lld | %s | %s | %s | %s |\n",
              name.c_str(), precision.c_str(), static_cast<long long>(s.count),
              Micros(s.p50).c_str(), Micros(s.p99).c_str(),
              Micros(s.max).c_str(), static_cast<long long>(s.early),
              past_tick.c_str(), target.c_str(), wakeups.c_str(), cpu.c_str());
}

void PrintDrift(const ScenarioResult& r) {
  if (r.timer.empty()) return;
  const Fire& first = r.timer.front();
  const Fire& last = r.timer.back();
  std::printf(
      "drift, %s: %lld periods from the first recorded call to the last; "
      "phase error %+.1f us -> %+.1f us (%lld calls recorded, %llu periods "
      "skipped by the timer)\n",
      r.title.c_str(), static_cast<long long>(last.index - first.index),
      absl::ToDoubleMicroseconds(first.lateness()),
      absl::ToDoubleMicroseconds(last.lateness()),
      static_cast<long long>(r.timer.size()),
      static_cast<unsigned long long>(r.counters.missed_periods));
}

void PrintOverrun(const ScenarioResult& r) {
  if (!r.overrun_index.has_value()) return;
  std::printf("overrun, %s: call %lld blocked %s; the calls from it on:\n",
              r.title.c_str(), static_cast<long long>(*r.overrun_index),
              absl::FormatDuration(r.overrun).c_str());
  int shown = 0;
  for (const Fire& f : r.timer) {
    if (f.index < *r.overrun_index || shown >= 4) continue;
    std::printf("  call %lld: expected %+.3f s, lateness %+.1f us, periods "
                "skipped before it %lld\n",
                static_cast<long long>(f.index),
                absl::ToDoubleSeconds(f.expected - r.zero),
                absl::ToDoubleMicroseconds(f.lateness()),
                static_cast<long long>(f.missed_before));
    ++shown;
  }
}

}  // namespace

void PrintConsoleTable(const RunInfo& run,
                       const std::vector<ScenarioResult>& results) {
  std::printf(
      "\nmachine: %u CPUs online (%s); clocksource %s; tick %s; callbacks on "
      "the %s (%d threads); floor: %s\n\n",
      run.machine.online_cpus, run.machine.cpu_model.c_str(),
      run.machine.clocksource.c_str(), absl::FormatDuration(run.tick).c_str(),
      run.dispatcher.c_str(), run.dispatcher_threads, run.floor_method.c_str());
  std::printf(
      "| scenario | precision | samples | p50 | p99 | max | early | p99 past "
      "tick | p50 over floor | p99 / floor p99 | target | wakeups/s | tick "
      "CPU | processors CPU | floor CPU | process CPU |\n");
  std::printf(
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"
      "---:|---:|\n");
  int meets = 0;
  int judged = 0;
  std::vector<std::string> not_met;
  for (const ScenarioResult& r : results) {
    const std::string wakeups = absl::StrFormat("%.1f", WakeupsPerSecond(r));
    const TargetCheck check = CheckTarget(r);
    switch (check.verdict) {
      case TargetVerdict::kNoTarget:
        break;
      case TargetVerdict::kMeets:
        ++meets;
        ++judged;
        break;
      default:  // misses, refused, failed
        if (!check.rule.empty()) ++judged;
        not_met.push_back(
            absl::StrCat(r.id, " ", TargetVerdictName(check.verdict)));
        break;
    }
    if (r.kind == ScenarioKind::kIdle) {
      std::printf("| tick thread, %s | - | - | - | - | - | - | - | - | - | "
                  "%s | %s | %s |\n",
                  r.title.c_str(), TargetVerdictName(check.verdict),
                  wakeups.c_str(), TimerCpu(r.cpu).c_str());
      continue;
    }
    // A refused scenario ends at once: its CPU window is too short for a
    // share of a core to mean anything.
    PrintRow("timer " + r.title, PrecisionCell(r), r.timer, /*timer=*/true,
             TargetCells(check), r.refused ? "-" : wakeups,
             r.refused ? "- | - | - | -" : TimerCpu(r.cpu));
    PrintRow("floor " + r.title, "-", r.floor, /*timer=*/false, "- | - | -",
             "-", FloorCpu(r.cpu));
  }
  std::printf("\n");
  std::printf("issue 24 targets: %d of %d scenarios with a target meet it",
              meets, judged);
  if (!not_met.empty()) {
    std::printf("; not met or not measured: %s",
                absl::StrJoin(not_met, ", ").c_str());
  }
  std::printf("\n\n");
  for (const ScenarioResult& r : results) {
    if (r.kind == ScenarioKind::kPeriodic) PrintDrift(r);
  }
  for (const ScenarioResult& r : results) PrintOverrun(r);
  for (const ScenarioResult& r : results) {
    if (r.kind != ScenarioKind::kIdle) continue;
    std::printf("idle: %llu tick-thread wake-ups in %.1f s",
                static_cast<unsigned long long>(TotalWakeups(r)),
                absl::ToDoubleSeconds(r.elapsed));
    if (r.planned_wake_at_start.has_value()) {
      std::printf("; at the start one wake-up was still planned, %.1f ms "
                  "later (an earlier scenario's cancelled timer)",
                  absl::ToDoubleMilliseconds(*r.planned_wake_at_start));
    }
    std::printf("\n");
  }
  for (const ScenarioResult& r : results) {
    if (!r.error.empty()) {
      std::printf("ERROR, %s: %s\n", r.title.c_str(), r.error.c_str());
    }
  }
  std::printf(
      "\nlateness = actual - expected (exact percentiles, nearest rank). "
      "p99 past tick = actual - the tick the deadline rounds up to. "
      "floor = a bare thread sleeping with clock_nanosleep(TIMER_ABSTIME) to "
      "the same deadlines during the same seconds (periodic: shifted by half "
      "a period). drift = phase error of the last recorded call vs the "
      "first.\n");
  std::printf(
      "precision = TimerOptions::precision of a oneshot (kTick: on the tick "
      "after the deadline; kExact: at the deadline); periodic calls are due "
      "at start + k * period whatever it says. p50 over floor = timer p50 - "
      "floor p50, p99 / floor p99 = timer p99 / floor p99, on lateness (kTick "
      "oneshots: past tick). target (issue 24): periodic p50 <= floor + "
      "%.0f us and p99 <= %gx floor; kExact oneshots p50 <= floor + %.0f us; "
      "kTick oneshots, the overrun and idle scenarios have none. refused = "
      "the timer system refused the timer (Schedule() failed).\n",
      absl::ToDoubleMicroseconds(kTargetP50OverFloor), kTargetP99Ratio,
      absl::ToDoubleMicroseconds(kTargetP50OverFloor));
  std::printf(
      "CPU = user + system time during the scenario, %% of one core: tick = "
      "thread \"%s\"; processors = threads \"%s*\" together (a "
      "processor's wake-up for each call it runs shows up here); floor = the floor thread; process "
      "= getrusage, everything including the floor. Per-thread figures "
      "count in %s clock ticks.\n",
      run.cpu_threads.tick.c_str(),
      absl::StrJoin(run.cpu_threads.processor_prefixes, "*\", \"").c_str(),
      absl::FormatDuration(run.thread_cpu_resolution).c_str());
}

}  // namespace accuracy
}  // namespace cyber
