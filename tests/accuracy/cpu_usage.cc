#include "tests/accuracy/cpu_usage.h"

#include <unistd.h>

#include <limits>
#include <map>

namespace cyber {
namespace accuracy {
namespace {

// Linux keeps this many characters of a thread's name (TASK_COMM_LEN - 1).
constexpr size_t kThreadNameLength = 15;

bool HasAnyPrefix(const std::string& name,
                  const std::vector<std::string>& prefixes) {
  for (const std::string& prefix : prefixes) {
    const std::string kept = prefix.substr(0, kThreadNameLength);
    if (!kept.empty() && name.compare(0, kept.size(), kept) == 0) return true;
  }
  return false;
}

}  // namespace

CpuSample SampleCpu(Clock* clock) {
  CpuSample s;
  s.at = clock->Now();
  s.threads = scale::SampleThreads();
  s.process = scale::ProcessCpuTime();
  return s;
}

CpuUsage CpuBetween(const CpuSample& before, const CpuSample& after,
                    const CpuThreadNames& names) {
  const std::string tick = names.tick.substr(0, kThreadNameLength);
  std::map<int, absl::Duration> start;
  for (const scale::ThreadCpu& t : before.threads) start[t.tid] = t.cpu;
  CpuUsage u;
  u.window = after.at - before.at;
  u.process = after.process - before.process;
  for (const scale::ThreadCpu& t : after.threads) {
    const auto it = start.find(t.tid);
    const absl::Duration spent =
        t.cpu - (it == start.end() ? absl::ZeroDuration() : it->second);
    if (!tick.empty() && t.name == tick) {
      u.tick += spent;
      ++u.tick_threads;
    } else if (HasAnyPrefix(t.name, names.processor_prefixes)) {
      u.processors += spent;
      ++u.processor_threads;
    }
  }
  return u;
}

double PercentOfCore(absl::Duration cpu, absl::Duration window) {
  if (window <= absl::ZeroDuration()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return 100 * absl::FDivDuration(cpu, window);
}

absl::Duration ThreadCpuResolution() {
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  // proc_stats.cc assumes 100 when sysconf cannot tell.
  return absl::Seconds(1) / (ticks_per_second > 0 ? ticks_per_second : 100);
}

}  // namespace accuracy
}  // namespace cyber
