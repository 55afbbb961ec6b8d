#include "tests/accuracy/machine_info.h"

#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace cyber {
namespace accuracy {
namespace {

std::string FirstLineOf(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "model name")) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return "";
}

}  // namespace

MachineInfo ReadMachineInfo() {
  MachineInfo m;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  m.online_cpus = cpus > 0 ? static_cast<unsigned>(cpus) : 0;
  m.cpu_model = CpuModel();
  utsname u;
  if (uname(&u) == 0) {
    m.kernel = absl::StrCat(u.sysname, " ", u.release, " ", u.version, " ",
                            u.machine);
  }
  m.clocksource = FirstLineOf(
      "/sys/devices/system/clocksource/clocksource0/current_clocksource");
  const int slack_ns = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  if (slack_ns >= 0) m.timer_slack = absl::Nanoseconds(slack_ns);
  m.date_utc = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(),
                                absl::UTCTimeZone());
  return m;
}

std::optional<LoadAverage> ReadLoadAverage() {
  const std::string line = FirstLineOf("/proc/loadavg");
  std::istringstream in(line);
  LoadAverage load;
  if (!(in >> load.one >> load.five >> load.fifteen >> load.runnable)) {
    return std::nullopt;
  }
  return load;
}

}  // namespace accuracy
}  // namespace cyber
