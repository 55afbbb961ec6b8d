#include "timer/timer_options.h"

#include "absl/strings/str_cat.h"
#include "timer/period_rules.h"

namespace cyber {
namespace timer {

const char* OverrunPolicyName(OverrunPolicy policy) {
  switch (policy) {
    case OverrunPolicy::kSkip:
      return "kSkip";
    case OverrunPolicy::kDelay:
      return "kDelay";
    case OverrunPolicy::kBurst:
      return "kBurst";
  }
  return "unknown";
}

const char* TimerPrecisionName(TimerPrecision precision) {
  switch (precision) {
    case TimerPrecision::kTick:
      return "kTick";
    case TimerPrecision::kExact:
      return "kExact";
  }
  return "unknown";
}

const char* TimerPhaseName(TimerPhase phase) {
  switch (phase) {
    case TimerPhase::kNotStarted:
      return "kNotStarted";
    case TimerPhase::kScheduled:
      return "kScheduled";
    case TimerPhase::kRunning:
      return "kRunning";
    case TimerPhase::kFired:
      return "kFired";
    case TimerPhase::kCancelled:
      return "kCancelled";
  }
  return "unknown";
}

absl::Status ValidateTimerOptions(const TimerOptions& o,
                                  absl::Duration resolution,
                                  absl::Duration max_period) {
  return ValidateTimerOptions(o, o.name, resolution, max_period);
}

absl::Status ValidateTimerOptions(const TimerOptions& o, absl::string_view name,
                                  absl::Duration resolution,
                                  absl::Duration max_period) {
  // Messages are built only on failure.
  const auto who = [name] { return absl::StrCat("timer \"", name, "\": "); };
  if (!PeriodInRange(o.period, resolution, max_period)) {
    return CheckPeriod(absl::StrCat("timer \"", name, "\""),
                       o.oneshot ? "delay" : "period", o.period, resolution,
                       max_period);
  }
  if (!o.callback && !o.event_callback) {
    return absl::InvalidArgumentError(absl::StrCat(who(), "callback is empty"));
  }
  if (o.overrun_policy == OverrunPolicy::kBurst && o.max_burst < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        who(), "max_burst ", o.max_burst, " must be at least 1 for kBurst"));
  }
  if (o.priority < kPriorityFromConf) {
    return absl::InvalidArgumentError(absl::StrCat(
        who(), "priority ", o.priority,
        " must be >= 0 (or -1: the scheduler conf's, else 0)"));
  }
  return absl::OkStatus();
}

}  // namespace timer
}  // namespace cyber
