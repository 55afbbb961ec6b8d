// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Parsing of CPU lists as conf files write them: "0-3,6" means CPUs 0, 1, 2,
// 3 and 6 (the kernel's cpuset "list" format, as in Cyber RT confs).
//
// Why strict: a typo in a cpuset silently pins a robot's compute threads to
// the wrong cores, which shows up much later as latency. So every element
// must be a CPU number or an ascending range, no CPU may appear twice, and
// no CPU may exceed kMaxCpuIndex (the largest index a cpu_set_t can hold).
// Order is kept as written: with "1to1" affinity processor i takes the i-th
// CPU of the list.
//
// Whether a CPU exists on this machine is not checked here (confs are shared
// between machines); thread_attributes.h reports that when pinning.
//
// Threads: stateless; call from any thread.

#ifndef SCHEDULER_CONFIG_CPUSET_H_
#define SCHEDULER_CONFIG_CPUSET_H_

#include <sched.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cyber {
namespace scheduler {

inline constexpr int kMaxCpuIndex = CPU_SETSIZE - 1;

// "0-3,6" -> {0, 1, 2, 3, 6}. Spaces around elements are allowed; "" (or only
// spaces) is the empty list. Errors are InvalidArgument and describe the
// offending element, e.g. `"x" is not a CPU number`; the caller adds which
// file and field the text came from.
absl::StatusOr<std::vector<int>> ParseCpuset(absl::string_view text);

// {0, 1, 2, 6} -> "0,1,2,6", for messages.
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_CONFIG_CPUSET_H_
