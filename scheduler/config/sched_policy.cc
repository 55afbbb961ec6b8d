#include "scheduler/config/sched_policy.h"

#include "absl/strings/str_cat.h"

namespace cyber {
namespace scheduler {

std::optional<int> SchedPolicyFromName(absl::string_view name) {
  if (name == "SCHED_OTHER") return SCHED_OTHER;
  if (name == "SCHED_FIFO") return SCHED_FIFO;
  if (name == "SCHED_RR") return SCHED_RR;
  return std::nullopt;
}

std::string SchedPolicyName(int policy) {
  switch (policy) {
    case SCHED_OTHER:
      return "SCHED_OTHER";
    case SCHED_FIFO:
      return "SCHED_FIFO";
    case SCHED_RR:
      return "SCHED_RR";
    default:
      return absl::StrCat("policy ", policy);
  }
}

std::optional<PriorityRange> PriorityRangeFor(int policy) {
  switch (policy) {
    case SCHED_OTHER:
      return PriorityRange{kMinNice, kMaxNice};
    case SCHED_FIFO:
    case SCHED_RR:
      return PriorityRange{kMinRealtimePriority, kMaxRealtimePriority};
    default:
      return std::nullopt;
  }
}

absl::string_view SupportedSchedPolicyNames() {
  return "SCHED_OTHER, SCHED_FIFO, SCHED_RR";
}

}  // namespace scheduler
}  // namespace cyber
