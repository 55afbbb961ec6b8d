// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Applying a processor group's placement to a thread: CPU affinity and Linux
// scheduling policy/priority, for the calling thread only.
//
// Why the calling thread: a processor sets its own attributes first thing in
// its loop, so there is no window where another thread's handle may have
// exited, and the nice value (which Linux keeps per thread, addressed by the
// kernel thread id) can be set with setpriority(gettid()).
//
// Why errors, never crashes: whether a setting is allowed depends on the
// machine, not the code: SCHED_FIFO needs CAP_SYS_NICE or an RLIMIT_RTPRIO
// budget, a conf written for 8 cores names CPUs a 2-core machine lacks, a
// cgroup may exclude CPUs. The caller decides whether to run degraded; each
// message names the thread, the setting and the errno text, e.g.
//   thread "compute_0": cannot set SCHED_FIFO priority 10: Operation not
//   permitted (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 10)
//
// Pinning follows the kernel: the thread runs on the requested CPUs that
// exist and that its cgroup allows; if none does, that is an error. If only
// some do, the call succeeds and a warning names the ones left out.
//
// Threads: each function affects only the thread calling it (except
// CpusForProcessor, which is pure); call from any thread.

#ifndef SCHEDULER_CONFIG_THREAD_ATTRIBUTES_H_
#define SCHEDULER_CONFIG_THREAD_ATTRIBUTES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/config/scheduler_config.h"

namespace cyber {
namespace scheduler {

// Restricts the calling thread to `cpus`. An empty list means "no pinning"
// and changes nothing. `thread_name` is only used in messages.
// Errors: InvalidArgument for an index outside 0..kMaxCpuIndex or when no
// listed CPU is usable here; otherwise by errno.
absl::Status SetCurrentThreadAffinity(const std::vector<int>& cpus,
                                      const std::string& thread_name);

// Sets the calling thread's policy (SCHED_OTHER, SCHED_FIFO, SCHED_RR) and
// priority: for SCHED_OTHER the nice value (-20..19, set with setpriority on
// the thread id, after switching the policy to SCHED_OTHER), for FIFO/RR the
// real-time priority (1..99, pthread_setschedparam).
// Errors: InvalidArgument for another policy or an out-of-range priority
// (nothing is changed); PermissionDenied when not allowed (e.g. real-time
// without privileges, or a nice value below the RLIMIT_NICE floor). If only
// the nice value is refused, the thread is left SCHED_OTHER at its old nice
// value.
absl::Status SetCurrentThreadPolicy(int policy, int priority,
                                    const std::string& thread_name);

// The CPUs processor `index` of `group` should be pinned to: for kRange the
// whole cpuset, for kOneToOne only cpuset[index % cpuset.size()]; empty (no
// pinning) when the group has no cpuset.
// REQUIRES: index >= 0.
std::vector<int> CpusForProcessor(const ProcessorGroupConfig& group, int index);

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_CONFIG_THREAD_ATTRIBUTES_H_
