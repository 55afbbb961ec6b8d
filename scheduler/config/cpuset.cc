#include "scheduler/config/cpuset.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace cyber {
namespace scheduler {
namespace {

// A CPU number: decimal digits only (no sign, no spaces inside), at most
// kMaxCpuIndex. REQUIRES: `text` is not empty.
absl::StatusOr<int> ParseCpuNumber(absl::string_view text) {
  int value = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\" is not a CPU number"));
    }
    value = value * 10 + (c - '0');
    if (value > kMaxCpuIndex) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CPU ", text, " is above the maximum index ", kMaxCpuIndex));
    }
  }
  return value;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuset(absl::string_view text) {
  std::vector<int> cpus;
  if (absl::StripAsciiWhitespace(text).empty()) return cpus;

  std::set<int> seen;
  for (absl::string_view element : absl::StrSplit(text, ',')) {
    element = absl::StripAsciiWhitespace(element);
    if (element.empty()) {
      return absl::InvalidArgumentError("empty element between commas");
    }
    std::vector<absl::string_view> bounds = absl::StrSplit(element, '-');
    for (absl::string_view& bound : bounds) {
      bound = absl::StripAsciiWhitespace(bound);
    }
    if (bounds.size() > 2 || bounds.front().empty() || bounds.back().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", element, "\" is not a CPU or a range"));
    }
    absl::StatusOr<int> first = ParseCpuNumber(bounds.front());
    if (!first.ok()) return first.status();
    absl::StatusOr<int> last = ParseCpuNumber(bounds.back());
    if (!last.ok()) return last.status();
    if (*last < *first) {
      return absl::InvalidArgumentError(
          absl::StrCat("range \"", element, "\" runs backwards"));
    }
    for (int cpu = *first; cpu <= *last; ++cpu) {
      if (!seen.insert(cpu).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("CPU ", cpu, " is listed twice"));
      }
      cpus.push_back(cpu);
    }
  }
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  return absl::StrJoin(cpus, ",");
}

}  // namespace scheduler
}  // namespace cyber
