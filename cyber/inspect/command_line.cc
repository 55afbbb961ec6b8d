#include "cyber/inspect/command_line.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace inspect {

absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args,
                                             const std::set<std::string>& value_flags,
                                             const std::set<std::string>& switches) {
  CommandLine line;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      line.help = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-' || absl::StartsWith(arg, "-0") ||
        (arg[1] >= '1' && arg[1] <= '9')) {
      line.operands.push_back(arg);  // an operand, or a negative number
      continue;
    }
    std::string flag = arg;
    std::string value;
    bool inline_value = false;
    if (const size_t eq = arg.find('='); eq != std::string::npos && absl::StartsWith(arg, "--")) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    if (switches.count(flag)) {
      if (inline_value) {
        return absl::InvalidArgumentError(absl::StrCat("flag ", flag, " takes no value"));
      }
      line.values[flag] = "";
    } else if (value_flags.count(flag)) {
      if (!inline_value) {
        if (i + 1 >= args.size()) {
          return absl::InvalidArgumentError(absl::StrCat("flag ", flag, " needs a value"));
        }
        value = args[++i];
      }
      line.values[flag] = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag));
    }
  }
  return line;
}

absl::StatusOr<int64_t> PositiveCount(const CommandLine& line, const std::string& flag,
                                      int64_t fallback) {
  auto it = line.values.find(flag);
  if (it == line.values.end()) return fallback;
  int64_t n = 0;
  if (!absl::SimpleAtoi(it->second, &n) || n <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag ", flag, ": \"", it->second, "\" is not a count > 0"));
  }
  return n;
}

absl::StatusOr<absl::Duration> PositiveDuration(const CommandLine& line, const std::string& flag,
                                                absl::Duration fallback) {
  auto it = line.values.find(flag);
  if (it == line.values.end()) return fallback;
  absl::Duration d;
  double seconds = 0;
  if (absl::SimpleAtod(it->second, &seconds)) {
    d = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(it->second, &d)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "flag ", flag, ": \"", it->second, "\" is not a duration (e.g. 1s, 250ms, 1.5)"));
  }
  if (d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag ", flag, ": \"", it->second, "\" is not a duration > 0"));
  }
  return d;
}

}  // namespace inspect
}  // namespace cyber
