#include "cyber/mainboard/stuck_report.h"

#include "absl/strings/str_cat.h"

namespace cyber {

std::string StuckReport(const Launcher::StopProgress& progress,
                        const std::vector<timer::StopInProgress>& stops,
                        const std::string& prefix) {
  std::string out = absl::StrCat(prefix, "components not stopped:");
  if (progress.not_stopped.empty()) absl::StrAppend(&out, " none");
  // In stop order: the one in progress, then those it has not reached.
  for (auto it = progress.not_stopped.rbegin(); it != progress.not_stopped.rend(); ++it) {
    absl::StrAppend(&out, it == progress.not_stopped.rbegin() ? " " : ", ", "\"", *it, "\"",
                    it == progress.not_stopped.rbegin() ? " (Shutdown() in progress)" : "");
  }
  absl::StrAppend(&out, "\n", prefix, "timer stops in progress:",
                  stops.empty() ? " none" : "", "\n");
  for (const timer::StopInProgress& s : stops) {
    absl::StrAppend(&out, prefix, "  ", timer::ToString(s), "\n");
  }
  return out;
}

}  // namespace cyber
