#include "tests/accuracy/accuracy_target.h"

#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tests/accuracy/fire_record.h"

namespace cyber {
namespace accuracy {

const char* TargetBasisName(TargetBasis basis) {
  switch (basis) {
    case TargetBasis::kLateness:
      return "lateness";
    case TargetBasis::kPastTick:
      return "past_tick";
  }
  return "unknown";
}

const char* TargetVerdictName(TargetVerdict verdict) {
  switch (verdict) {
    case TargetVerdict::kMeets:
      return "meets";
    case TargetVerdict::kMisses:
      return "misses";
    case TargetVerdict::kNoTarget:
      return "no target";
    case TargetVerdict::kRefused:
      return "refused";
    case TargetVerdict::kFailed:
      return "failed";
  }
  return "unknown";
}

TargetCheck CheckTarget(const ScenarioResult& r) {
  TargetCheck c;
  const bool tick_oneshot =
      r.kind == ScenarioKind::kOneshot &&
      r.precision.value_or(timer::TimerPrecision::kTick) ==
          timer::TimerPrecision::kTick;
  c.basis = tick_oneshot ? TargetBasis::kPastTick : TargetBasis::kLateness;
  const Lateness timer = Summarize(
      tick_oneshot ? PastTickOf(r.timer) : LatenessOf(r.timer));
  const Lateness floor = Summarize(LatenessOf(r.floor));
  if (timer.count > 0) {
    c.p50_over_floor = timer.p50 - floor.p50;
    c.p99_ratio = floor.count > 0 && floor.p99 > absl::ZeroDuration()
                      ? absl::FDivDuration(timer.p99, floor.p99)
                      : std::numeric_limits<double>::quiet_NaN();
  } else {
    c.p99_ratio = std::numeric_limits<double>::quiet_NaN();
  }

  const bool periodic_target =
      r.kind == ScenarioKind::kPeriodic && r.overrun <= absl::ZeroDuration();
  const bool exact_oneshot = r.kind == ScenarioKind::kOneshot && !tick_oneshot;
  if (periodic_target || exact_oneshot) {
    c.rule = absl::StrCat("p50 <= floor + ",
                          absl::FormatDuration(kTargetP50OverFloor));
    if (periodic_target) {
      absl::StrAppendFormat(&c.rule, ", p99 <= %gx floor", kTargetP99Ratio);
    }
  }
  if (r.refused) {
    c.verdict = TargetVerdict::kRefused;
    return c;
  }
  if (!r.error.empty()) {
    c.verdict = TargetVerdict::kFailed;
    return c;
  }
  if (c.rule.empty()) return c;  // kNoTarget
  if (timer.count == 0 || floor.count == 0) {
    c.verdict = TargetVerdict::kFailed;
    return c;
  }
  std::vector<std::string> missed;
  if (c.p50_over_floor > kTargetP50OverFloor) {
    missed.push_back(absl::StrFormat(
        "p50 +%.1fus > +%.0fus", absl::ToDoubleMicroseconds(c.p50_over_floor),
        absl::ToDoubleMicroseconds(kTargetP50OverFloor)));
  }
  if (periodic_target && !(c.p99_ratio <= kTargetP99Ratio)) {  // NaN misses
    missed.push_back(absl::StrFormat("p99 %.2fx > %gx", c.p99_ratio,
                                     kTargetP99Ratio));
  }
  c.verdict = missed.empty() ? TargetVerdict::kMeets : TargetVerdict::kMisses;
  c.why = absl::StrJoin(missed, ", ");
  return c;
}

}  // namespace accuracy
}  // namespace cyber
