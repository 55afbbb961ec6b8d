// What /proc/self says about this process: per-thread CPU time by thread
// name, the process's CPU time, and its resident memory.
//
// Why: the scale run must attribute CPU to the tick thread alone (the target
// is "under 5% of a core"), and getrusage() only knows the whole process.
// Linux keeps per-thread counters in /proc/self/task/<tid>/stat (utime and
// stime, fields 14 and 15, in clock ticks of sysconf(_SC_CLK_TCK)), and the
// name a thread gave itself with pthread_setname_np in .../comm. Memory comes
// from /proc/self/status (VmRSS now, VmHWM the peak).
//
// Resolution: clock ticks are usually 10 ms, so a CPU percentage over a 60 s
// window is good to about 0.02 percentage points.
//
// Threads: every function may be called from any thread; each reads /proc
// afresh and keeps no state.

#ifndef TESTS_SCALE_PROC_STATS_H_
#define TESTS_SCALE_PROC_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace cyber {
namespace scale {

// One thread of this process at the moment of the sample.
struct ThreadCpu {
  int tid = 0;
  std::string name;                                // .../comm, as set by the thread
  absl::Duration cpu = absl::ZeroDuration();       // utime + stime so far
};

// Every thread of this process (threads that exit while the directory is read
// are skipped).
std::vector<ThreadCpu> SampleThreads();

// User + system CPU time of the whole process so far (getrusage).
absl::Duration ProcessCpuTime();

// Resident memory from /proc/self/status, in bytes; -1 if unreadable.
struct MemoryStatus {
  int64_t rss_bytes = -1;   // VmRSS
  int64_t peak_bytes = -1;  // VmHWM
};
MemoryStatus ReadMemoryStatus();

// The 1-minute load average, or a negative value if unreadable.
double LoadAverage1();

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_PROC_STATS_H_
