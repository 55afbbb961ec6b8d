// SchedulerConfig: how the classic scheduler lays out its processors (worker
// threads) in groups, where each group runs, under which Linux policy, and
// which task (coroutine) runs in which group at which priority. Read from a
// Cyber RT scheduler conf file.
//
// Why plain structs: the scheduler should not see protobuf. The schema
// (scheduler_conf.proto) exists so Cyber RT conf files load unchanged; this
// layer parses it once, checks every value, and hands the scheduler types
// with meaning (Affinity, a CPU list, a <sched.h> policy) instead of strings.
//
// Why strict: a wrong thread layout does not fail, it makes the robot slow.
// So a bad value is an error naming the file, line, column, field and value,
// e.g.
//   conf/sched.conf:9:7: group "compute": processor_prio 0 is out of range
//   1..99 for SCHED_FIFO
// and nothing is silently clamped. Errors are returned and logged (AERROR).
// Whether CPUs exist, or the process may use real-time policies, is only
// known when applying them (thread_attributes.h), so it is not checked here.
//
// Accepted file shapes: Cyber's `scheduler_conf { ... }` wrapper (message
// CyberConfig), or the body of it alone (message SchedulerConf). The first
// field name in the file decides which.
//
// Cyber RT fields accepted but not used: routine_num; process_level_cpuset
// and threads are validated (cpuset syntax, policy name) and a warning says
// they are not applied. policy "choreography" is rejected.
//
// Example (no threads, no files):
//   absl::StatusOr<SchedulerConfig> c = ParseSchedulerConfig(
//       R"(classic_conf { groups { name: "g" processor_num: 2 } })", "inline");
//   // c->groups[0].processor_num == 2, affinity kRange, no pinning.
//
// Threads: every function here is reentrant and may be called from any
// thread; nothing is shared.

#ifndef SCHEDULER_CONFIG_SCHEDULER_CONFIG_H_
#define SCHEDULER_CONFIG_SCHEDULER_CONFIG_H_

#include <sched.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cyber {
namespace scheduler {

// Limits the parser enforces.
inline constexpr int kMaxProcessorsPerGroup = 1024;
inline constexpr int kMinTaskPriority = 0;
inline constexpr int kMaxTaskPriority = 19;  // Cyber RT's MAX_PRIO - 1

struct ProcessorGroupConfig {
  std::string name;
  int processor_num = 0;
  // kRange: every processor may run on any CPU of `cpuset` ("range").
  // kOneToOne: processor i runs on cpuset[i % cpuset.size()] alone ("1to1").
  enum class Affinity { kRange, kOneToOne } affinity = Affinity::kRange;
  std::vector<int> cpuset;   // empty: no pinning; order as written
  int policy = SCHED_OTHER;  // SCHED_OTHER, SCHED_FIFO or SCHED_RR
  int priority = 0;          // nice value for SCHED_OTHER, 1..99 for FIFO/RR
  // Task name -> priority (0..19, higher runs first).
  std::map<std::string, int> task_priorities;
};

struct SchedulerConfig {
  std::vector<ProcessorGroupConfig> groups;  // at least one
  // Task name -> name of the group that runs it.
  std::map<std::string, std::string> task_groups;
};

// One group "default" with `processors` processors, no pinning, SCHED_OTHER
// nice 0, no tasks. `processors` < 1 means one per hardware thread (1 if the
// count is unknown).
SchedulerConfig DefaultSchedulerConfig(int processors);

// Parses protobuf text format (either shape above) and validates it.
// `source` names the text in errors (usually the file path). A conf without
// classic groups yields DefaultSchedulerConfig(default_proc_num).
// Errors: InvalidArgument.
absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(const std::string& text,
                                                     const std::string& source);

// Reads `path` and parses it as above. Errors: NotFound for a missing file,
// other read failures by errno (PermissionDenied, ...), each naming the path;
// then as ParseSchedulerConfig.
absl::StatusOr<SchedulerConfig> LoadSchedulerConfig(const std::string& path);

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_CONFIG_SCHEDULER_CONFIG_H_
