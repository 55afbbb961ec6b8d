#include "tests/scale/proc_stats.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace cyber {
namespace scale {

namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return true;
}

absl::Duration ClockTicks(uint64_t ticks) {
  static const long ticks_per_second = sysconf(_SC_CLK_TCK);
  return absl::Seconds(1) * static_cast<double>(ticks) /
         static_cast<double>(ticks_per_second > 0 ? ticks_per_second : 100);
}

// utime + stime from the text of a /proc/.../stat file. The thread name
// (field 2) is in parentheses and may itself contain spaces or ')', so the
// fields are counted from the last ')'.
bool ParseStatCpu(const std::string& stat, absl::Duration* cpu) {
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  uint64_t utime = 0;
  uint64_t stime = 0;
  // Field 3 (state) is the first after ')'; utime is field 14, stime 15.
  for (int n = 3; n <= 15; ++n) {
    if (!(fields >> field)) return false;
    if (n == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (n == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  *cpu = ClockTicks(utime + stime);
  return true;
}

int64_t StatusFieldBytes(const std::string& status, const char* field) {
  const std::string key = std::string(field) + ":";
  const size_t at = status.find(key);
  if (at == std::string::npos) return -1;
  // "VmRSS:	  123456 kB"
  const long long kb = std::strtoll(status.c_str() + at + key.size(), nullptr, 10);
  return static_cast<int64_t>(kb) * 1024;
}

}  // namespace

std::vector<ThreadCpu> SampleThreads() {
  std::vector<ThreadCpu> threads;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return threads;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const std::string base = std::string("/proc/self/task/") + entry->d_name;
    ThreadCpu t;
    t.tid = std::atoi(entry->d_name);
    std::string stat;
    if (!ReadFile(base + "/comm", &t.name) || !ReadFile(base + "/stat", &stat) ||
        !ParseStatCpu(stat, &t.cpu)) {
      continue;  // the thread exited meanwhile
    }
    while (!t.name.empty() && t.name.back() == '\n') t.name.pop_back();
    threads.push_back(std::move(t));
  }
  closedir(dir);
  return threads;
}

absl::Duration ProcessCpuTime() {
  rusage usage;
  std::memset(&usage, 0, sizeof(usage));
  if (getrusage(RUSAGE_SELF, &usage) != 0) return absl::ZeroDuration();
  return absl::DurationFromTimeval(usage.ru_utime) +
         absl::DurationFromTimeval(usage.ru_stime);
}

MemoryStatus ReadMemoryStatus() {
  MemoryStatus m;
  std::string status;
  if (!ReadFile("/proc/self/status", &status)) return m;
  m.rss_bytes = StatusFieldBytes(status, "VmRSS");
  m.peak_bytes = StatusFieldBytes(status, "VmHWM");
  return m;
}

double LoadAverage1() {
  double load[1];
  if (getloadavg(load, 1) != 1) return -1;
  return load[0];
}

}  // namespace scale
}  // namespace cyber
