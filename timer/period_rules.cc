#include "timer/period_rules.h"

#include "absl/strings/str_cat.h"

namespace cyber {
namespace timer {

absl::Status CheckPeriod(absl::string_view subject, absl::string_view field,
                         absl::Duration period, absl::Duration resolution,
                         absl::Duration max) {
  // Messages are built only on failure.
  if (period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(subject, ": ", field, " ", absl::FormatDuration(period),
                     " must be positive (the minimum is the ",
                     absl::FormatDuration(resolution), " resolution)"));
  }
  if (period < resolution) {
    return absl::InvalidArgumentError(absl::StrCat(
        subject, ": ", field, " ", absl::FormatDuration(period), " is below the ",
        absl::FormatDuration(resolution), " resolution"));
  }
  if (period > max) {
    return absl::OutOfRangeError(absl::StrCat(
        subject, ": ", field, " ", absl::FormatDuration(period),
        " exceeds the maximum ", absl::FormatDuration(max)));
  }
  return absl::OkStatus();
}

}  // namespace timer
}  // namespace cyber
