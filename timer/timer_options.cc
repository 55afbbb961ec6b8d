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

absl::Status ValidateTimerOptions(const TimerOptions& o) {
  return ValidateTimerOptions(o, o.name);
}

absl::Status ValidateTimerOptions(const TimerOptions& o,
                                  absl::string_view name) {
  // Messages are built only on failure.
  const auto who = [name] { return absl::StrCat("timer \"", name, "\": "); };
  // A oneshot's delay may be anything (<= 0: at once; beyond the wheel's
  // range: never); a period must be positive (timer/period_rules.h).
  if (!o.oneshot && !PeriodInRange(o.period)) {
    return CheckPeriod(absl::StrCat("timer \"", name, "\""), "period",
                       o.period);
  }
  if (o.use_default_timeout && !o.oneshot) {
    return absl::InvalidArgumentError(absl::StrCat(
        who(), "use_default_timeout is set on a periodic timer (oneshot "
               "false): only a oneshot's delay can be the default timeout"));
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
