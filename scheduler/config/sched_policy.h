// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// The Linux scheduling policies a processor group may run under, by the names
// conf files use ("SCHED_OTHER", "SCHED_FIFO", "SCHED_RR"), and the priority
// range each accepts.
//
// Why a file of its own: the conf validator (scheduler_config.h) and the code
// that applies the setting to a thread (thread_attributes.h) must agree on
// the names and ranges; both read them from here.
//
// "Priority" means different things per policy:
//   SCHED_OTHER       the nice value, -20 (most favoured) .. 19
//   SCHED_FIFO / RR   the real-time priority, 1 .. 99 (higher runs first)
// These are Linux's fixed ranges (sched_get_priority_min/max report the
// real-time ones; the test checks they agree).
//
// Threads: stateless; call from any thread.

#ifndef SCHEDULER_CONFIG_SCHED_POLICY_H_
#define SCHEDULER_CONFIG_SCHED_POLICY_H_

#include <sched.h>

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace cyber {
namespace scheduler {

inline constexpr int kMinNice = -20;
inline constexpr int kMaxNice = 19;
inline constexpr int kMinRealtimePriority = 1;
inline constexpr int kMaxRealtimePriority = 99;

struct PriorityRange {
  int min;
  int max;
};

// SCHED_OTHER, SCHED_FIFO or SCHED_RR for their exact (case-sensitive) names;
// nullopt for anything else.
std::optional<int> SchedPolicyFromName(absl::string_view name);

// "SCHED_OTHER", "SCHED_FIFO", "SCHED_RR"; other values as "policy <n>".
std::string SchedPolicyName(int policy);

// The priorities `policy` accepts; nullopt for a policy this library does not
// set (SCHED_BATCH, SCHED_IDLE, SCHED_DEADLINE, garbage).
std::optional<PriorityRange> PriorityRangeFor(int policy);

// The three names, for error messages: "SCHED_OTHER, SCHED_FIFO, SCHED_RR".
absl::string_view SupportedSchedPolicyNames();

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_CONFIG_SCHED_POLICY_H_
