#include "timer/period_rules.h"

#include "absl/strings/str_cat.h"

namespace cyber {
namespace timer {

absl::Status CheckPeriod(absl::string_view subject, absl::string_view field,
                         absl::Duration period) {
  // The message is built only on failure.
  if (PeriodInRange(period)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      subject, ": ", field, " ", absl::FormatDuration(period),
      " must be positive"));
}

}  // namespace timer
}  // namespace cyber
