#include "tests/transport_bench/run_support.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace cyber {
namespace transport_bench {

absl::Duration PositiveDurationFlag(const char* tool, const char* flag, const std::string& text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration()) {
    std::fprintf(stderr, "%s: --%s=%s is not a positive duration (e.g. 10s, 500ms, 10m)\n",
                 tool, flag, text.c_str());
    std::exit(2);
  }
  return d;
}

std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(f >> one >> five >> fifteen)) return "unknown";
  return absl::StrCat(one, " ", five, " ", fifteen);
}

}  // namespace transport_bench
}  // namespace cyber
