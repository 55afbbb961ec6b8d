#include "tests/accuracy/summary_json.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tests/accuracy/accuracy_target.h"
#include "tests/accuracy/cpu_usage.h"
#include "tests/accuracy/json_writer.h"

namespace cyber {
namespace accuracy {
namespace {

// Calls at each end of a periodic run whose mean phase error is compared
// for drift: this fraction of the recorded calls (at least one).
constexpr double kDriftWindow = 0.1;
// Calls listed after the overrunning one.
constexpr size_t kCallsAfterOverrun = 3;

double Us(absl::Duration d) { return absl::ToDoubleMicroseconds(d); }

void WriteLateness(JsonWriter* w, const char* key, const Lateness& s) {
  w->BeginObject(key);
  w->Integer("count", s.count);
  w->Integer("early", s.early);
  w->Number("min_us", Us(s.min));
  w->Number("p50_us", Us(s.p50));
  w->Number("p90_us", Us(s.p90));
  w->Number("p99_us", Us(s.p99));
  w->Number("p999_us", Us(s.p999));
  w->Number("max_us", Us(s.max));
  w->Number("mean_us", Us(s.mean));
  w->EndObject();
}

void WriteLoad(JsonWriter* w, const char* key,
               const std::optional<LoadAverage>& load) {
  if (!load.has_value()) {
    w->Null(key);
    return;
  }
  w->BeginObject(key);
  w->Number("one", load->one);
  w->Number("five", load->five);
  w->Number("fifteen", load->fifteen);
  w->String("runnable", load->runnable);
  w->EndObject();
}

absl::Duration Median(std::vector<absl::Duration> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

// Phase error at the two ends of a periodic run: the first and last calls,
// and the medians of the first and last kDriftWindow of the calls. Medians
// of the error past the tick (for timers whose calls all waited for their
// tick; the floor has no tick): a stall of the machine near one end does not
// move a median, and a period that is not a whole number of ticks, served
// on the tick, makes the raw error alternate between two values, whose
// median flips with the window's parity. A timer with a call before its
// tick is not tick-rounded (exact calls, issue 24): its error past the tick
// would alternate instead, so its basis is the lateness.
void WriteDrift(JsonWriter* w, const char* key, const std::vector<Fire>& f,
                Instant zero) {
  if (f.empty()) {
    w->Null(key);
    return;
  }
  const size_t n = std::max<size_t>(
      1, static_cast<size_t>(kDriftWindow * static_cast<double>(f.size())));
  const bool past_tick =
      std::all_of(f.begin(), f.end(), [](const Fire& x) {
        return x.tick.has_value() && x.actual >= *x.tick;
      });
  auto error = [past_tick](const Fire& x) {
    return past_tick ? x.actual - *x.tick : x.lateness();
  };
  std::vector<absl::Duration> head;
  std::vector<absl::Duration> tail;
  for (size_t i = 0; i < n; ++i) {
    head.push_back(error(f[i]));
    tail.push_back(error(f[f.size() - 1 - i]));
  }
  w->BeginObject(key);
  w->String("basis", past_tick ? "past_tick" : "lateness");
  w->Integer("window_calls", static_cast<int64_t>(n));
  w->Integer("first_index", f.front().index);
  w->Integer("last_index", f.back().index);
  w->Number("first_us", Us(f.front().lateness()));
  w->Number("last_us", Us(f.back().lateness()));
  w->Number("head_median_us", Us(Median(head)));
  w->Number("tail_median_us", Us(Median(tail)));
  w->Number("span_s", absl::ToDoubleSeconds(f.back().expected -
                                            f.front().expected));
  w->Number("first_expected_s", absl::ToDoubleSeconds(f.front().expected - zero));
  w->EndObject();
}

// CPU time as seconds and as a percentage of one core over the window.
void WriteCpuTime(JsonWriter* w, const std::string& key, absl::Duration cpu,
                  absl::Duration window) {
  w->Number(key + "_s", absl::ToDoubleSeconds(cpu));
  w->Number(key + "_pct", PercentOfCore(cpu, window));
}

void WriteCpu(JsonWriter* w, const CpuUsage& cpu) {
  w->BeginObject("cpu");
  w->Number("window_s", absl::ToDoubleSeconds(cpu.window));
  WriteCpuTime(w, "tick", cpu.tick, cpu.window);
  w->Integer("tick_threads", cpu.tick_threads);
  WriteCpuTime(w, "processors", cpu.processors, cpu.window);
  w->Integer("processor_threads", cpu.processor_threads);
  WriteCpuTime(w, "process", cpu.process, cpu.window);
  if (cpu.floor.has_value()) {
    WriteCpuTime(w, "floor", *cpu.floor, cpu.window);
  } else {
    w->Null("floor_s");
    w->Null("floor_pct");
  }
  w->EndObject();
}

void WriteFire(JsonWriter* w, const Fire& f, Instant zero) {
  w->BeginObject("");
  w->Integer("index", f.index);
  w->Number("expected_s", absl::ToDoubleSeconds(f.expected - zero));
  w->Number("lateness_us", Us(f.lateness()));
  if (f.tick.has_value()) w->Number("past_tick_us", Us(f.actual - *f.tick));
  w->Integer("missed_before", f.missed_before);
  w->EndObject();
}

void WriteOverrun(JsonWriter* w, const ScenarioResult& r) {
  w->BeginObject("overrun");
  w->Number("planned_us", Us(r.overrun));
  if (r.overrun_index.has_value()) {
    w->Integer("index", *r.overrun_index);
  } else {
    w->Null("index");
  }
  w->BeginArray("calls");  // the overrunning call and the ones after it
  const auto it = std::find_if(r.timer.begin(), r.timer.end(), [&](const Fire& f) {
    return r.overrun_index.has_value() && f.index == *r.overrun_index;
  });
  for (auto c = it; c != r.timer.end() &&
                    static_cast<size_t>(c - it) <= kCallsAfterOverrun;
       ++c) {
    WriteFire(w, *c, r.zero);
  }
  w->EndArray();
  w->EndObject();
}

// The issue-24 target of the scenario and its verdict (accuracy_target.h).
void WriteTarget(JsonWriter* w, const ScenarioResult& r) {
  const TargetCheck c = CheckTarget(r);
  w->BeginObject("target");
  w->String("basis", TargetBasisName(c.basis));
  if (c.rule.empty()) {
    w->Null("rule");
  } else {
    w->String("rule", c.rule);
  }
  const bool measured = c.verdict != TargetVerdict::kRefused &&
                        c.verdict != TargetVerdict::kFailed &&
                        r.kind != ScenarioKind::kIdle;
  if (measured) {
    w->Number("p50_over_floor_us", Us(c.p50_over_floor));
    w->Number("p99_over_floor_ratio", c.p99_ratio);  // NaN: null
  } else {
    w->Null("p50_over_floor_us");
    w->Null("p99_over_floor_ratio");
  }
  w->String("verdict", TargetVerdictName(c.verdict));
  w->String("why", c.why);
  w->EndObject();
}

void WriteScenario(JsonWriter* w, const ScenarioResult& r) {
  w->BeginObject("");
  w->String("id", r.id);
  w->String("title", r.title);
  w->String("kind", ScenarioKindName(r.kind));
  w->String("error", r.error);
  w->Bool("refused", r.refused);
  if (r.precision.has_value()) {
    w->String("precision", timer::TimerPrecisionName(*r.precision));
  } else {
    w->Null("precision");
  }
  w->Number("period_us", Us(r.period));
  w->Number("floor_shift_us", Us(r.floor_shift));
  w->Integer("planned_calls", r.planned_calls);
  w->Number("elapsed_s", absl::ToDoubleSeconds(r.elapsed));
  WriteLoad(w, "load_before", r.load_before);
  WriteLoad(w, "load_after", r.load_after);
  if (r.kind != ScenarioKind::kIdle) {
    WriteLateness(w, "timer", Summarize(LatenessOf(r.timer)));
    WriteLateness(w, "timer_past_tick", Summarize(PastTickOf(r.timer)));
    WriteLateness(w, "floor", Summarize(LatenessOf(r.floor)));
    w->BeginObject("counters");
    w->Integer("fires", static_cast<int64_t>(r.counters.fires));
    w->Integer("overruns", static_cast<int64_t>(r.counters.overruns));
    w->Integer("missed_periods",
               static_cast<int64_t>(r.counters.missed_periods));
    w->Integer("exceptions", static_cast<int64_t>(r.counters.exceptions));
    w->Integer("dispatch_refusals",
               static_cast<int64_t>(r.counters.dispatch_refusals));
    w->Integer("early_fires", static_cast<int64_t>(r.counters.early_fires));
    w->EndObject();
  }
  if (r.kind == ScenarioKind::kPeriodic) {
    w->String("overrun_policy", timer::OverrunPolicyName(r.policy));
    WriteDrift(w, "timer_drift", r.timer, r.zero);
    WriteDrift(w, "floor_drift", r.floor, r.zero);
  }
  if (r.overrun > absl::ZeroDuration()) WriteOverrun(w, r);
  if (r.kind == ScenarioKind::kIdle) {
    if (r.planned_wake_at_start.has_value()) {
      w->Number("planned_wake_at_start_s",
                absl::ToDoubleSeconds(*r.planned_wake_at_start));
    } else {
      w->Null("planned_wake_at_start_s");
    }
  }
  absl::Duration sampled;
  for (const WakeupSample& s : r.wakeups) sampled += s.length;
  w->BeginObject("wakeups");
  w->Integer("total", static_cast<int64_t>(TotalWakeups(r)));
  w->Number("seconds", absl::ToDoubleSeconds(sampled));
  w->Number("per_s", WakeupsPerSecond(r));
  w->EndObject();
  WriteCpu(w, r.cpu);
  WriteTarget(w, r);
  w->EndObject();
}

}  // namespace

std::string SummaryJson(const RunInfo& run,
                        const std::vector<ScenarioResult>& results) {
  JsonWriter w;
  w.String("tool", "timer_accuracy");
  w.String("date_utc", run.machine.date_utc);
  w.String("command_line", run.command_line);
  w.Number("elapsed_s", absl::ToDoubleSeconds(run.elapsed));
  w.BeginObject("machine");
  w.Integer("online_cpus", run.machine.online_cpus);
  w.String("cpu_model", run.machine.cpu_model);
  w.String("kernel", run.machine.kernel);
  w.String("clocksource", run.machine.clocksource);
  if (run.machine.timer_slack.has_value()) {
    w.Number("timer_slack_us", Us(*run.machine.timer_slack));
  } else {
    w.Null("timer_slack_us");
  }
  w.EndObject();
  w.BeginObject("config");
  w.Number("tick_us", Us(run.tick));
  w.String("dispatcher", run.dispatcher);
  w.Integer("dispatcher_threads", run.dispatcher_threads);
  w.Number("duration_s", absl::ToDoubleSeconds(run.duration));
  w.Integer("oneshots", run.oneshots);
  w.Integer("short_oneshots", run.short_oneshots);
  w.Integer("seed", static_cast<int64_t>(run.seed));
  w.Number("wakeup_interval_s", absl::ToDoubleSeconds(run.wakeup_interval));
  w.String("floor", run.floor_method);
  w.BeginObject("cpu");
  w.String("tick_thread", run.cpu_threads.tick);
  w.BeginArray("processor_prefixes");
  for (const std::string& prefix : run.cpu_threads.processor_prefixes) {
    w.String("", prefix);
  }
  w.EndArray();
  w.Number("thread_resolution_s",
           absl::ToDoubleSeconds(run.thread_cpu_resolution));
  w.EndObject();
  w.EndObject();
  bool complete = true;
  int64_t early = 0;
  for (const ScenarioResult& r : results) {
    complete &= r.error.empty();
    for (const Fire& f : r.timer) early += f.lateness() < absl::ZeroDuration();
  }
  w.Bool("complete", complete);
  w.Number("target_p50_over_floor_us", Us(kTargetP50OverFloor));
  w.Number("target_p99_over_floor_ratio", kTargetP99Ratio);
  w.Integer("timer_early_calls", early);
  w.BeginArray("scenarios");
  for (const ScenarioResult& r : results) WriteScenario(&w, r);
  w.EndArray();
  return w.Finish();
}

}  // namespace accuracy
}  // namespace cyber
