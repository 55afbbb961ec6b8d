#include "tests/scale/scale_report.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tests/scale/wheel_lock_probe.h"

namespace cyber {
namespace scale {

namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
// A floor p99 above this means other work competed for the CPUs.
constexpr absl::Duration kBusyFloorP99 = absl::Microseconds(500);

struct Violation {
  const char* what;
  const char* key;
  uint64_t count;
};

// Every correctness check of the run; any nonzero count fails it.
std::vector<Violation> Violations(const ScaleResults& r) {
  return {
      {"periodic calls before their expected time", "periodic_early",
       r.periodic.early},
      {"periodic early fires counted by the timers", "periodic_timer_early",
       r.periodic.timer_early_fires},
      {"periodic calls off their phase-locked schedule", "periodic_phase",
       r.periodic.phase_errors},
      {"periodic periods neither called nor reported missed",
       "periodic_lost_periods", r.periodic.lost_periods},
      {"timeouts fired before their deadline", "oneshot_early",
       r.timeouts.early},
      {"timeout early fires counted by the timers", "oneshot_timer_early",
       r.timeouts.timer_early_fires},
      {"timeouts run after their Stop() returned", "oneshot_after_cancel",
       r.timeouts.fired_after_cancel},
      {"timeouts run twice for one arming", "oneshot_duplicate",
       r.timeouts.duplicate},
      {"unanswered timeouts never fired (lost)", "oneshot_lost",
       r.timeouts.lost},
      {"Schedule() calls that failed", "schedule_errors",
       r.timeouts.schedule_errors},
  };
}

RoleCpu CpuOf(const ScaleResults& r, ThreadRole role) {
  const auto it = r.cpu.find(role);
  return it == r.cpu.end() ? RoleCpu() : it->second;
}

std::string Us(absl::Duration d) {
  return absl::StrFormat("%.1f us", absl::ToDoubleMicroseconds(d));
}

std::string Pct(double percent) { return absl::StrFormat("%.2f %%", percent); }

// "p50 / p99 / max" of a histogram.
std::string Spread(const timer::LatencyHistogram& h) {
  if (h.count() == 0) return "no samples";
  return absl::StrCat(Us(h.Percentile(0.50)), " / ", Us(h.Percentile(0.99)),
                      " / ", Us(h.max()));
}

// "[a b c ...] (n in all; bin 0: x%)" of per-phase counts.
std::string PhaseLine(const std::array<uint64_t, kCascadePhaseBins>& counts) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  return absl::StrFormat(
      "[%s] (%s in all; bin 0: %.1f%%)", absl::StrJoin(counts, " "),
      Commas(total),
      total > 0 ? 100.0 * static_cast<double>(counts[0]) /
                      static_cast<double>(total)
                : 0.0);
}

std::string MinMax(int64_t min, int64_t max) {
  if (min < 0) return "no samples";
  return absl::StrCat(Commas(static_cast<uint64_t>(min)), " / ",
                      Commas(static_cast<uint64_t>(max)));
}

double PerSecond(uint64_t count, absl::Duration over) {
  const double s = absl::ToDoubleSeconds(over);
  return s > 0 ? static_cast<double>(count) / s : 0.0;
}

// Ordered key -> JSON value, written as one flat object.
class JsonObject {
 public:
  void Number(const std::string& key, double v) {
    items_.emplace_back(key, absl::StrFormat("%.6g", v));
  }
  void Integer(const std::string& key, int64_t v) {
    items_.emplace_back(key, absl::StrCat(v));
  }
  void Bool(const std::string& key, bool v) {
    items_.emplace_back(key, v ? "true" : "false");
  }
  void String(const std::string& key, const std::string& v) {
    std::string quoted = "\"";
    for (char ch : v) {
      if (ch == '"' || ch == '\\') quoted.push_back('\\');
      quoted.push_back(ch);
    }
    items_.emplace_back(key, quoted + "\"");
  }
  void Latency(const std::string& key, const timer::LatencyHistogram& h) {
    Integer(key + "_samples", static_cast<int64_t>(h.count()));
    Number(key + "_p50_us", absl::ToDoubleMicroseconds(h.Percentile(0.50)));
    Number(key + "_p99_us", absl::ToDoubleMicroseconds(h.Percentile(0.99)));
    Number(key + "_max_us", absl::ToDoubleMicroseconds(h.max()));
  }
  std::string Text() const {
    std::vector<std::string> lines;
    for (const auto& [k, v] : items_) {
      lines.push_back(absl::StrCat("  \"", k, "\": ", v));
    }
    return absl::StrCat("{\n", absl::StrJoin(lines, ",\n"), "\n}\n");
  }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// Conditions that make the figures unrepresentative, said out loud.
std::vector<std::string> Notes(const ScaleResults& r) {
  const TimeoutCounters& w = r.timeouts_in_window;
  std::vector<std::string> notes;
  if (r.floor.count() > 0 && r.floor.Percentile(0.99) > kBusyFloorP99) {
    notes.push_back(absl::StrCat(
        "the machine was busy: the floor's p99 (", Us(r.floor.Percentile(0.99)),
        ") is above ", Us(kBusyFloorP99),
        " (an idle machine shows about 100-200 us); load average ",
        absl::StrFormat("%.2f", r.load_average_start), " at start"));
  }
  if (w.fired_before_answer > w.cancelled / 100) {
    notes.push_back(absl::StrCat(
        "the load generator fell behind (lag p99 ",
        Us(r.request_lag.Percentile(0.99)), "): ",
        Commas(w.fired_before_answer),
        " answered requests timed out first, so more timeouts fired than the "
        "workload specifies"));
  }
  if (r.interrupted) notes.push_back("the window was cut short by a signal");
  return notes;
}

}  // namespace

std::string GiB(int64_t bytes) {
  return absl::StrFormat("%.2f GiB", static_cast<double>(bytes) / kBytesPerGiB);
}

std::string Rate(double per_second) {
  if (per_second >= 1e6) return absl::StrFormat("%.2fM/s", per_second / 1e6);
  if (per_second >= 1e3) return absl::StrFormat("%.1fk/s", per_second / 1e3);
  return absl::StrFormat("%.1f/s", per_second);
}

double Percent(absl::Duration part, absl::Duration whole) {
  return whole > absl::ZeroDuration() ? 100.0 * absl::FDivDuration(part, whole)
                                      : 0.0;
}

Verdict Judge(const ScaleResults& r) {
  Verdict v;
  v.lateness_bound = r.tick + r.floor.Percentile(0.99);
  v.lateness_measured =
      r.periodic_lateness.count() > 0 && r.floor.count() > 0;
  v.lateness_pass = v.lateness_measured &&
                    r.periodic_lateness.Percentile(0.99) <= v.lateness_bound;
  v.tick_cpu_percent = Percent(CpuOf(r, ThreadRole::kTick).cpu, r.window);
  v.tick_cpu_pass = v.tick_cpu_percent < kTickCpuTargetPercent;
  for (const Violation& x : Violations(r)) v.violations += x.count;
  return v;
}

std::string SummaryMarkdown(const ScaleResults& r, const Verdict& v) {
  const TimeoutLoadOptions& to = r.timeout_options;
  const PeriodicLoadOptions& po = r.periodic_options;
  const TimeoutCounters& w = r.timeouts_in_window;
  std::string s;
  absl::StrAppendFormat(
      &s,
      "\n## Timer scale run\n\n"
      "%s oneshot timeout slots, each always armed, so as many timeouts "
      "live at once (request delays uniform [%s, %s], %.1f%% answered after "
      "U[0, %.1f) x delay, %d request thread(s)) + %s "
      "periodic timers (periods %s in [%s, %s], %s steps; %s calls "
      "expected), seed %llu.\n"
      "Window %.1f s after %s warm-up%s. Machine: %u CPUs, load average "
      "%.2f at start, %.2f at end; scheduler processors %d; tick %s.\n\n",
      Commas(static_cast<uint64_t>(to.timeouts)),
      absl::FormatDuration(to.min_delay), absl::FormatDuration(to.max_delay),
      100.0 * to.cancel_fraction, to.max_answer_fraction, to.threads,
      Commas(static_cast<uint64_t>(po.timers)), r.period_spread,
      absl::FormatDuration(po.min_period), absl::FormatDuration(po.max_period),
      absl::FormatDuration(po.granularity), Rate(r.periodic_calls_per_s),
      static_cast<unsigned long long>(po.seed),
      absl::ToDoubleSeconds(r.window), absl::FormatDuration(r.warmup),
      r.interrupted ? " (INTERRUPTED: window cut short)" : "", r.cpus,
      r.load_average_start, r.load_average_end, r.scheduler_processors,
      absl::FormatDuration(r.tick));

  absl::StrAppend(&s, "| figure | value | target |\n|---|---|---|\n");
  auto row = [&s](const std::string& figure, const std::string& value,
                  const std::string& target) {
    absl::StrAppend(&s, "| ", figure, " | ", value, " | ", target, " |\n");
  };
  auto pass = [](bool ok) { return ok ? "**PASS**" : "**FAIL**"; };

  row("periodic lateness p50 / p99 / max",
      absl::StrCat(Spread(r.periodic_lateness), " (",
                   Commas(r.periodic_lateness.count()), " calls)"),
      absl::StrCat("p99 <= ", absl::FormatDuration(r.tick),
                   " tick + floor p99 = ", Us(v.lateness_bound), ": ",
                   v.lateness_measured ? pass(v.lateness_pass)
                                       : "not measured"));
  row("periodic lateness past its tick p50 / p99 / max",
      Spread(r.periodic_past_tick), "(the rounding up to a tick removed)");
  row("floor: clock_nanosleep to 2 ms deadlines, p50 / p99 / max",
      absl::StrCat(Spread(r.floor), " (", Commas(r.floor.count()),
                   " wake-ups, ", Commas(r.floor_skipped), " skipped)"),
      "");
  const RoleCpu tick = CpuOf(r, ThreadRole::kTick);
  row("tick thread CPU", Pct(v.tick_cpu_percent) + " of one core",
      absl::StrCat("< ", kTickCpuTargetPercent, " %: ", pass(v.tick_cpu_pass)));
  row("tick thread wake-ups / expiries",
      absl::StrCat(Rate(PerSecond(r.tick_wakeups, r.window)), " / ",
                   Rate(PerSecond(r.tick_expiries, r.window)),
                   r.tick_expiries > 0
                       ? absl::StrFormat(
                             " (%.0f ns of tick-thread CPU per expiry)",
                             absl::ToDoubleNanoseconds(tick.cpu) /
                                 static_cast<double>(r.tick_expiries))
                       : ""),
      "");
  const RoleCpu sched = CpuOf(r, ThreadRole::kScheduler);
  row("scheduler processors CPU",
      absl::StrFormat("%s (%d threads)", Pct(Percent(sched.cpu, r.window)),
                      sched.threads),
      "");
  row("request threads CPU (load generator)",
      Pct(Percent(CpuOf(r, ThreadRole::kRequests).cpu, r.window)), "");
  absl::Duration measuring;
  for (ThreadRole role : {ThreadRole::kStarter, ThreadRole::kFloor,
                          ThreadRole::kProbe, ThreadRole::kSampler,
                          ThreadRole::kMain, ThreadRole::kOther}) {
    measuring += CpuOf(r, role).cpu;
  }
  row("floor + probe + sampler + starter + main CPU",
      Pct(Percent(measuring, r.window)), "");
  row("process CPU (getrusage)", Pct(Percent(r.process_cpu, r.window)), "");
  row("scheduler dispatches / refusals",
      absl::StrCat(Rate(PerSecond(r.scheduler_dispatched, r.window)), " / ",
                   Commas(r.scheduler_refused)),
      "");
  row("RSS after making the timers (none armed or fired yet)",
      GiB(r.setup_rss_bytes), "");
  row("peak RSS (VmHWM)", GiB(r.peak_rss_bytes), "");
  row("RSS in window, min / max (1 s samples)",
      r.window_rss_min_bytes < 0
          ? "no samples"
          : absl::StrCat(GiB(r.window_rss_min_bytes), " / ",
                         GiB(r.window_rss_max_bytes)),
      "");
  row("memory per oneshot Timer, never fired (RSS growth while made / timers)",
      absl::StrFormat("%.0f B (sizeof(Timer) %zu B)", r.bytes_per_oneshot,
                      r.sizeof_timer),
      "");
  row("memory per periodic Timer, never fired (RSS growth while made / timers)",
      absl::StrFormat("%.0f B", r.bytes_per_periodic), "");
  row("live timeouts in window, min / max (1 s samples)",
      MinMax(r.live_timeouts_min, r.live_timeouts_max), "");
  row("wheel entries in window, min / max",
      MinMax(r.wheel_entries_min, r.wheel_entries_max), "");
  const uint64_t ended = w.cancelled + w.fired;
  row("timeouts armed / cancelled / fired in window",
      absl::StrFormat(
          "%s / %s / %s (%s / %s / %s); %.2f%% of ended requests cancelled",
          Commas(w.armed), Commas(w.cancelled), Commas(w.fired),
          Rate(PerSecond(w.armed, r.window)),
          Rate(PerSecond(w.cancelled, r.window)),
          Rate(PerSecond(w.fired, r.window)),
          ended > 0 ? 100.0 * static_cast<double>(w.cancelled) /
                          static_cast<double>(ended)
                    : 0.0),
      "");
  row("answered requests whose timeout fired first (generator lag)",
      Commas(w.fired_before_answer), "");
  row("request thread lag p50 / p99 / max", Spread(r.request_lag), "");
  row("answers planned sooner than drawn (generator > 30 s behind)",
      Commas(r.timeouts.answers_clamped), "");
  row("fired timeouts: lateness after their deadline p50 / p99 / max",
      Spread(r.oneshot_lateness), "(includes the rounding up to a tick)");
  row(absl::StrCat("periodic calls late >= ",
                   absl::FormatDuration(PeriodicLoad::kLateCall),
                   " by cascade phase (", kCascadePhaseBins, " bins of ",
                   absl::FormatDuration(CascadePhaseBinWidth()), "; bin 0 = the ",
                   absl::FormatDuration(CascadePhaseBinWidth()), " from the cascade tick)"),
      PhaseLine(r.late_calls_by_phase), "");
  row("wheel lock wait, probed every 1 ms, p50 / p99 / max",
      absl::StrCat(Spread(r.wheel_lock_wait), " (",
                   Commas(r.wheel_lock_wait.count()), " probes)"),
      "");
  row("wheel lock wait, the probes whose thread was not preempted "
      "(no involuntary context switch), p50 / p99 / max",
      absl::StrCat(Spread(r.wheel_lock_wait_unpreempted), " (",
                   Commas(r.wheel_lock_wait_unpreempted.count()), " probes)"),
      "");
  row("the tick thread's longest single hold of the wheel lock "
      "(wall time, whole run; an advance lets others in every 1024 entries)",
      absl::FormatDuration(r.wheel_max_hold), "");
  row(absl::StrCat("wheel lock waits >= ",
                   absl::FormatDuration(WheelLockProbe::kLongWait),
                   ": in all / with the probe thread preempted"),
      absl::StrCat(Commas(r.long_lock_waits), " / ",
                   Commas(r.long_lock_waits_preempted)),
      "");
  row(absl::StrCat("wheel lock waits >= ",
                   absl::FormatDuration(WheelLockProbe::kLongWait),
                   " by cascade phase"),
      PhaseLine(r.long_lock_waits_by_phase), "");
  row("periodic calls in window / expected",
      absl::StrFormat("%s / %.0f (%.2f%%); missed periods reported %s",
                      Commas(r.periodic.window_calls), r.expected_window_calls,
                      r.expected_window_calls > 0
                          ? 100.0 * static_cast<double>(r.periodic.window_calls) /
                                r.expected_window_calls
                          : 0.0,
                      Commas(r.periodic.window_missed)),
      "");
  row("periodic timers' own counters (whole run): overruns / missed / refused",
      absl::StrCat(Commas(r.periodic.overruns), " / ",
                   Commas(r.periodic.missed_periods), " / ",
                   Commas(r.periodic.dispatch_refusals)),
      "");
  row("timeouts' dispatch refusals (whole run)",
      Commas(r.timeouts.timer_dispatch_refusals), "");
  for (const Violation& x : Violations(r)) row(x.what, Commas(x.count), "0");

  const std::vector<std::string> notes = Notes(r);
  if (!notes.empty()) {
    absl::StrAppend(&s, "\nNotes:\n");
    for (const std::string& n : notes) absl::StrAppend(&s, "- ", n, "\n");
  }

  absl::StrAppendFormat(
      &s,
      "\nLateness = actual - expected time from each call's TimerEvent "
      "(periodic: start + k * period, phase-locked). p50/p99 are histogram "
      "bucket upper bounds (<= 12.5%% high), max is exact. CPU %% is of one "
      "core over the window; the tick thread is found by its name \"%s\" in "
      "/proc/self/task.\n"
      "Result: %s; targets: periodic p99 lateness %s, tick thread CPU %s.\n",
      kTickThreadName,
      v.violations == 0
          ? std::string("no invariant violated")
          : absl::StrCat(v.violations, " INVARIANT VIOLATIONS (exit status 1)"),
      !v.lateness_measured ? "not measured" : v.lateness_pass ? "PASS" : "FAIL",
      v.tick_cpu_pass ? "PASS" : "FAIL");
  return s;
}

std::string ResultsJson(const ScaleResults& r, const Verdict& v) {
  const TimeoutCounters& w = r.timeouts_in_window;
  JsonObject j;
  j.Integer("oneshots", r.timeout_options.timeouts);
  j.Number("oneshot_min_delay_s", absl::ToDoubleSeconds(r.timeout_options.min_delay));
  j.Number("oneshot_max_delay_s", absl::ToDoubleSeconds(r.timeout_options.max_delay));
  j.Number("cancel_fraction", r.timeout_options.cancel_fraction);
  j.Integer("request_threads", r.timeout_options.threads);
  j.Integer("periodics", r.periodic_options.timers);
  j.String("period_spread", r.period_spread);
  j.Number("min_period_s", absl::ToDoubleSeconds(r.periodic_options.min_period));
  j.Number("max_period_s", absl::ToDoubleSeconds(r.periodic_options.max_period));
  j.Number("periodic_calls_per_s_expected", r.periodic_calls_per_s);
  j.Integer("seed", static_cast<int64_t>(r.periodic_options.seed));
  j.Number("warmup_s", absl::ToDoubleSeconds(r.warmup));
  j.Number("window_s", absl::ToDoubleSeconds(r.window));
  j.Bool("interrupted", r.interrupted);
  j.Integer("cpus", r.cpus);
  j.Number("load_average_start", r.load_average_start);
  j.Number("load_average_end", r.load_average_end);
  j.Integer("scheduler_processors", r.scheduler_processors);

  j.Latency("periodic_lateness", r.periodic_lateness);
  j.Latency("periodic_past_tick", r.periodic_past_tick);
  j.Latency("floor", r.floor);
  j.Integer("floor_skipped", static_cast<int64_t>(r.floor_skipped));
  j.Number("lateness_bound_us", absl::ToDoubleMicroseconds(v.lateness_bound));
  j.Bool("lateness_measured", v.lateness_measured);
  j.Bool("lateness_target_pass", v.lateness_pass);
  j.Number("tick_cpu_percent", v.tick_cpu_percent);
  j.Bool("tick_cpu_target_pass", v.tick_cpu_pass);
  j.Number("tick_wakeups_per_s", PerSecond(r.tick_wakeups, r.window));
  j.Number("tick_expiries_per_s", PerSecond(r.tick_expiries, r.window));
  for (const auto& [role, used] : r.cpu) {
    j.Number(absl::StrCat("cpu_percent_", ThreadRoleKey(role)),
             Percent(used.cpu, r.window));
  }
  j.Number("process_cpu_percent", Percent(r.process_cpu, r.window));
  j.Number("scheduler_dispatches_per_s",
           PerSecond(r.scheduler_dispatched, r.window));
  j.Integer("scheduler_refusals", static_cast<int64_t>(r.scheduler_refused));

  j.Integer("setup_rss_bytes", r.setup_rss_bytes);
  j.Integer("peak_rss_bytes", r.peak_rss_bytes);
  j.Integer("window_rss_min_bytes", r.window_rss_min_bytes);
  j.Integer("window_rss_max_bytes", r.window_rss_max_bytes);
  j.Number("bytes_per_oneshot_timer", r.bytes_per_oneshot);
  j.Number("bytes_per_periodic_timer", r.bytes_per_periodic);
  j.Integer("sizeof_timer", static_cast<int64_t>(r.sizeof_timer));
  j.Integer("live_timeouts_min", r.live_timeouts_min);
  j.Integer("live_timeouts_max", r.live_timeouts_max);
  j.Integer("wheel_entries_min", r.wheel_entries_min);
  j.Integer("wheel_entries_max", r.wheel_entries_max);

  j.Integer("timeouts_armed", static_cast<int64_t>(w.armed));
  j.Integer("timeouts_cancelled", static_cast<int64_t>(w.cancelled));
  j.Integer("timeouts_fired", static_cast<int64_t>(w.fired));
  j.Integer("timeouts_fired_before_answer",
            static_cast<int64_t>(w.fired_before_answer));
  j.Latency("request_lag", r.request_lag);
  j.Integer("answers_clamped", static_cast<int64_t>(r.timeouts.answers_clamped));
  j.Latency("oneshot_lateness", r.oneshot_lateness);
  j.Latency("wheel_lock_wait", r.wheel_lock_wait);
  j.Latency("wheel_lock_wait_unpreempted", r.wheel_lock_wait_unpreempted);
  j.Integer("wheel_lock_long_waits", static_cast<int64_t>(r.long_lock_waits));
  j.Number("wheel_max_hold_us", absl::ToDoubleMicroseconds(r.wheel_max_hold));
  j.Integer("wheel_lock_long_waits_preempted",
            static_cast<int64_t>(r.long_lock_waits_preempted));
  j.String("periodic_late_calls_by_cascade_phase",
           absl::StrJoin(r.late_calls_by_phase, " "));
  j.String("wheel_lock_long_waits_by_cascade_phase",
           absl::StrJoin(r.long_lock_waits_by_phase, " "));

  j.Integer("periodic_window_calls", static_cast<int64_t>(r.periodic.window_calls));
  j.Number("periodic_window_calls_expected", r.expected_window_calls);
  j.Integer("periodic_window_missed", static_cast<int64_t>(r.periodic.window_missed));
  j.Integer("periodic_overruns", static_cast<int64_t>(r.periodic.overruns));
  j.Integer("periodic_missed_periods",
            static_cast<int64_t>(r.periodic.missed_periods));
  j.Integer("periodic_dispatch_refusals",
            static_cast<int64_t>(r.periodic.dispatch_refusals));
  j.Integer("oneshot_dispatch_refusals",
            static_cast<int64_t>(r.timeouts.timer_dispatch_refusals));
  for (const Violation& x : Violations(r)) {
    j.Integer(absl::StrCat("violation_", x.key), static_cast<int64_t>(x.count));
  }
  j.Integer("violations_total", static_cast<int64_t>(v.violations));
  j.String("notes", absl::StrJoin(Notes(r), "; "));
  return j.Text();
}

}  // namespace scale
}  // namespace cyber
