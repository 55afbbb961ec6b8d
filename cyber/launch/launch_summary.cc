#include "cyber/launch/launch_summary.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cyber/launch/child_process.h"

namespace cyber {
namespace launch {
namespace {

constexpr char kStartMarker[] = "cyber_launch: start ";

// A glog line: "I20261128 04:00:00.123456 ..." or "I1128 04:00:00.123 ...".
bool IsGlogLine(absl::string_view line) {
  if (line.size() < 6 || std::string("IWEF").find(line[0]) == std::string::npos) return false;
  for (size_t i = 1; i < 5; ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(line[i]))) return false;
  }
  return true;
}

std::string StateWord(const ProcessRecord& r) {
  if (!r.failure.empty()) return "not started";
  switch (r.state) {
    case ProcessRecord::State::kWaiting: return "never started";
    case ProcessRecord::State::kRunning: return "running";
    case ProcessRecord::State::kRespawnPending: return "respawn pending";
    case ProcessRecord::State::kDown: break;
  }
  return r.last_wait_status.has_value() ? DescribeWaitStatus(*r.last_wait_status)
                                        : "never started";
}

}  // namespace

std::string ProcessTable(const LaunchOutcome& outcome) {
  constexpr char kRow[] = "%-20s %-8s %-6s %-8s %-22s %-14s %s\n";
  std::string out =
      absl::StrFormat(kRow, "process", "pid", "starts", "respawns", "last exit", "stop signals", "log");
  for (const ProcessRecord& r : outcome.processes) {
    absl::StrAppend(
        &out,
        absl::StrFormat(kRow, r.name, r.pid == 0 ? std::string("-") : absl::StrCat(r.pid),
                        absl::StrCat(r.starts), absl::StrCat(r.respawns, "/", r.respawn_limit),
                        StateWord(r), r.stop_signals.empty() ? "-" : r.stop_signals, r.log_path));
    if (!r.failure.empty()) absl::StrAppend(&out, "  ", r.name, ": ", r.failure, "\n");
    if (r.respawn_limit_reached) {
      absl::StrAppend(&out, "  ", r.name, ": respawn limit ", r.respawn_limit, " reached\n");
    }
  }
  return out;
}

std::string FirstToEndOnItsOwn(const LaunchOutcome& outcome, absl::string_view why) {
  const ProcessRecord* first = nullptr;
  for (const ProcessRecord& r : outcome.processes) {
    if (r.state != ProcessRecord::State::kDown || !r.stop_signals.empty() ||
        !r.last_wait_status.has_value() || !r.last_exit.has_value()) {
      continue;
    }
    if (first == nullptr || *r.last_exit < *first->last_exit) first = &r;
  }
  if (first == nullptr || absl::StrContains(why, absl::StrCat("\"", first->name, "\""))) return "";
  return absl::StrCat("; the first process to end on its own: ", first->name, " (",
                      DescribeWaitStatus(*first->last_wait_status), ")");
}

std::string ProcessOwnSummary(absl::string_view log) {
  const size_t last = log.rfind(kStartMarker);
  if (last != absl::string_view::npos) log.remove_prefix(last);
  std::string out;
  bool in_table = false;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!in_table) {
      in_table = absl::StartsWith(line, "component ") && absl::StrContains(line, " class ");
      if (!in_table) continue;
    }
    if (IsGlogLine(line)) continue;
    absl::StrAppend(&out, line, "\n");
  }
  // Trailing blank lines.
  while (absl::EndsWith(out, "\n\n")) out.pop_back();
  return out;
}

std::string LaunchSummary(const std::string& launch_file, const LaunchOutcome& outcome) {
  std::string out = absl::StrCat("cyber_launch: ", launch_file, " ended: ", outcome.reason,
                                 " (exit code ", outcome.exit_code, ")\n", ProcessTable(outcome));
  for (const ProcessRecord& r : outcome.processes) {
    std::ifstream in(r.log_path);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    const std::string own = ProcessOwnSummary(text.str());
    if (own.empty()) continue;
    absl::StrAppend(&out, "\n== ", r.name, " (", r.log_path, ") ==\n", own);
  }
  return out;
}

}  // namespace launch
}  // namespace cyber
