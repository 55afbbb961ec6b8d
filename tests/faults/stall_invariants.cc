#include "tests/faults/stall_invariants.h"

#include <algorithm>
#include <cstddef>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cyber {
namespace faults {

namespace {

// The wheel's tick, in nanoseconds.
const int64_t kTickNs = absl::ToInt64Nanoseconds(timer::kTimerResolution);


using timer::OverrunPolicy;

// At most this many violations are spelled out per timer; the rest counted.
constexpr size_t kMaxReportsPerTimer = 8;
// For the summary: calls expected this long after the resume count as
// settled.
constexpr int64_t kSettled = 1000000000;

std::string Ms(int64_t ns) {
  return absl::StrFormat("%+.3fms", static_cast<double>(ns) / 1e6);
}

}  // namespace

std::string DescribeCall(const CallRecord& call, int64_t origin_ns) {
  return absl::StrCat("expected=", Ms(call.expected_ns - origin_ns),
                      " actual=", Ms(call.actual_ns - origin_ns),
                      " missed=", call.missed, " run=[",
                      Ms(call.entry_ns - origin_ns), ",",
                      Ms(call.end_ns - origin_ns), "]");
}

TimerFindings CheckStalledTimer(const ObservedTimer& t,
                                const StallWindow& stall) {
  TimerFindings f;
  const absl::Span<const CallRecord> c = t.calls;
  const int64_t p = t.period_ns;
  const bool phase_locked = t.policy != OverrunPolicy::kDelay;
  size_t suppressed = 0;

  // `i` is the call the rule is about; the message shows it with the two
  // calls before it and the one after it (times from SIGCONT).
  auto report = [&](size_t i, const std::string& what) {
    if (f.violations.size() >= kMaxReportsPerTimer) {
      ++suppressed;
      return;
    }
    std::string s = absl::StrCat(
        t.name, " (", timer::OverrunPolicyName(t.policy), ", period ",
        Ms(p).substr(1), t.policy == OverrunPolicy::kBurst
                             ? absl::StrCat(", max_burst ", t.max_burst)
                             : std::string(),
        "): call #", i, ": ", what, "; calls, times from SIGCONT:");
    const size_t from = i >= 2 ? i - 2 : 0;
    for (size_t k = from; k < c.size() && k <= i + 1; ++k) {
      absl::StrAppend(&s, "\n      #", k, " ", DescribeCall(c[k], stall.resumed_ns));
    }
    f.violations.push_back(std::move(s));
  };
  auto report_timer = [&](const std::string& what) {
    if (f.violations.size() >= kMaxReportsPerTimer) {
      ++suppressed;
      return;
    }
    f.violations.push_back(absl::StrCat(
        t.name, " (", timer::OverrunPolicyName(t.policy), ", period ",
        Ms(p).substr(1), "): ", what));
  };

  if (t.overflowed) {
    report_timer("more calls than the preallocated record holds (the scenario "
                 "ran far longer than planned); the record is incomplete");
  }
  if (t.calls_after_stop != 0) {
    report_timer(absl::StrCat(t.calls_after_stop,
                              " call(s) after its own Stop() returned"));
  }

  f.calls = c.size();
  int64_t prev_stall_call = 0;
  size_t largest_gap_at = 0;
  int64_t largest_gap = -1;
  for (size_t i = 0; i < c.size(); ++i) {
    const CallRecord& e = c[i];
    f.missed += e.missed;

    // never early
    if (e.actual_ns < e.expected_ns) {
      report(i, absl::StrCat("EARLY: actual_time ",
                             Ms(e.actual_ns - e.expected_ns), " from expected"));
    }
    if (e.entry_ns < e.expected_ns) {
      report(i, absl::StrCat("EARLY: the callback ran ",
                             Ms(e.expected_ns - e.entry_ns).substr(1),
                             " before expected_time (its own clock reading)"));
    }
    // nothing while stopped
    if (e.entry_ns >= stall.stopped_ns && e.entry_ns < stall.resumed_ns) {
      report(i, "ran while the process was stopped (the stall window is wrong)");
    }

    if (e.actual_ns >= stall.resumed_ns) {
      ++f.calls_after_resume;
      f.stall_missed += e.missed;
      if (f.resume_latency_ns < 0) f.resume_latency_ns = e.actual_ns - stall.resumed_ns;
      if (e.expected_ns < stall.resumed_ns) {
        if (++f.stall_calls == 2) f.stall_second_call_after_ns = e.actual_ns - prev_stall_call;
        prev_stall_call = e.actual_ns;
      }
    }
    if (e.expected_ns >= stall.resumed_ns) {
      f.max_lateness_ns = std::max(f.max_lateness_ns, e.actual_ns - e.expected_ns);
    }
    if (e.expected_ns >= stall.resumed_ns + kSettled) {
      f.max_lateness_settled_ns =
          std::max(f.max_lateness_settled_ns, e.actual_ns - e.expected_ns);
    }
    if (e.actual_ns < stall.stopped_ns) {
      f.max_lateness_before_ns =
          std::max(f.max_lateness_before_ns, e.actual_ns - e.expected_ns);
    }

    // phase (first call: only the kSkip spacing rule below applies)
    if (phase_locked && (e.expected_ns - c[0].expected_ns) % p != 0) {
      report(i, absl::StrCat("PHASE lost: expected_time is ",
                             Ms((e.expected_ns - c[0].expected_ns) % p),
                             " off the first call's phase"));
    }
    if (i == 0) continue;
    const CallRecord& prev = c[i - 1];

    if (e.expected_ns <= prev.expected_ns) {
      report(i, "expected_time not after the previous call's");
    }
    if (e.actual_ns < prev.end_ns) {
      report(i, "started before the previous call had ended (ran "
                "concurrently with itself)");
    }
    if (e.actual_ns - prev.actual_ns > largest_gap) {
      largest_gap = e.actual_ns - prev.actual_ns;
      largest_gap_at = i;
    }

    switch (t.policy) {
      case OverrunPolicy::kSkip:
      case OverrunPolicy::kBurst: {
        const int64_t gap = e.expected_ns - prev.expected_ns;
        if (gap > 0 && gap % p == 0 && gap / p - 1 != e.missed) {
          report(i, absl::StrCat("MISSED miscounted: ", gap / p - 1,
                                 " periods lie between this call and the "
                                 "previous one, missed_periods says ",
                                 e.missed));
        }
        const int64_t newest = t.policy == OverrunPolicy::kSkip ? 1 : t.max_burst;
        // (+ a tick: the timer decides overruns in ticks.)
        if (e.expected_ns + newest * p + kTickNs < prev.end_ns) {
          report(i, absl::StrCat(
                        "served an old period: expected_time + ", newest,
                        " period(s) is before the previous run ended (",
                        t.policy == OverrunPolicy::kSkip
                            ? "kSkip makes its late call for the latest "
                              "missed period"
                            : "kBurst catches up on the max_burst latest",
                        ")"));
        }
        break;
      }
      case OverrunPolicy::kDelay:
        if (e.expected_ns - prev.expected_ns < p) {
          report(i, "kDelay: expected less than one period after the "
                    "previous call's expected_time");
        }
        // The timer decides overruns in ticks (timer_core.h): a run that
        // ends within the tick of the next expected call has not overrun.
        // Without the wheel's epoch, only a run ending more than a tick
        // after that call is surely an overrun.
        if (prev.end_ns > prev.expected_ns + p + kTickNs &&
            e.expected_ns < prev.end_ns + p) {
          report(i, absl::StrCat("kDelay: the previous run overran, so this "
                                 "call is due one period after it ended, but "
                                 "it is expected ",
                                 Ms(e.expected_ns - prev.end_ns),
                                 " after that end"));
        }
        break;
    }

    if (t.policy == OverrunPolicy::kSkip) {
      // The earliest instant the previous call can have been scheduled for.
      // (A run ending within a tick of prev's expected time may not have
      // delayed it: overruns are decided in ticks.)
      const int64_t prev_scheduled =
          i >= 2 && c[i - 2].end_ns > prev.expected_ns + kTickNs
              ? c[i - 2].end_ns
              : prev.expected_ns;
      if (2 * (e.actual_ns - prev_scheduled) < p) {
        report(i, absl::StrCat("BURST under kSkip: started ",
                               Ms(e.actual_ns - prev_scheduled).substr(1),
                               " after the earliest instant the previous call "
                               "can have been scheduled for (< period/2)"));
      }
      if (prev.actual_ns >= stall.resumed_ns && 2 * (e.actual_ns - prev.actual_ns) < p) {
        if (e.expected_ns == prev.expected_ns + p) {
          ++f.close_to_next_on_phase;
        } else {
          if (f.close_other == 0) {
            f.close_other_example = absl::StrCat(
                t.name, " period ", Ms(p).substr(1), ": #", i - 1, " ",
                DescribeCall(prev, stall.resumed_ns), " then #", i, " ",
                DescribeCall(e, stall.resumed_ns),
                i >= 2 ? absl::StrCat(" (before them #", i - 2, " ",
                                      DescribeCall(c[i - 2], stall.resumed_ns), ")")
                       : std::string());
          }
          ++f.close_other;
        }
      }
    }
  }

  // stall backlog
  // kSkip: one call, for the latest period due when the timer is
  // dispatched after the stall (timer_options.h); kDelay: one, then
  // re-based; kBurst: at most max_burst catch-up calls plus the due one.
  const int backlog_cap = t.policy == OverrunPolicy::kSkip    ? 1
                          : t.policy == OverrunPolicy::kDelay ? 1
                                                              : 1 + t.max_burst;
  if (f.stall_calls > backlog_cap) {
    size_t first = 0;
    while (first < c.size() && c[first].actual_ns < stall.resumed_ns) ++first;
    report(first, absl::StrCat("BURST after the resume: ", f.stall_calls,
                               " calls for periods that fell into the stall, "
                               "at most ", backlog_cap, " allowed"));
  }

  // resumed
  if (c.empty()) {
    report_timer("never called");
  } else if (c[0].actual_ns >= stall.resumed_ns) {
    report_timer("no call before the stop (the scenario did not wait for it)");
  } else if (c.back().expected_ns < stall.resumed_ns) {
    report_timer("did not resume: no call expected after SIGCONT");
  } else if (!(c[largest_gap_at - 1].actual_ns < stall.stopped_ns &&
               c[largest_gap_at].actual_ns >= stall.resumed_ns)) {
    report(largest_gap_at,
           absl::StrCat("the largest gap between calls (", Ms(largest_gap).substr(1),
                        ") is not the one spanning the stall"));
  }

  // statistics
  if (!t.overflowed && t.stats.fires != c.size()) {
    report_timer(absl::StrCat("statistics say ", t.stats.fires,
                              " fires, the callback saw ", c.size()));
  }
  if (t.stats.early_fires != 0) {
    report_timer(absl::StrCat("EARLY: statistics count ", t.stats.early_fires,
                              " early fires"));
  }
  if (t.stats.exceptions != 0) {
    report_timer(absl::StrCat(t.stats.exceptions, " exceptions counted"));
  }
  if (!t.overflowed && t.stats.missed_periods != static_cast<uint64_t>(f.missed)) {
    report_timer(absl::StrCat("MISSED miscounted: statistics say ",
                              t.stats.missed_periods,
                              " missed periods, the calls' missed_periods sum to ",
                              f.missed));
  }

  if (suppressed != 0) {
    f.violations.push_back(absl::StrCat(t.name, ": ", suppressed,
                                        " more violation(s) not shown"));
  }
  return f;
}

}  // namespace faults
}  // namespace cyber
