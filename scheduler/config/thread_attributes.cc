#include "scheduler/config/thread_attributes.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "scheduler/config/cpuset.h"
#include "scheduler/config/sched_policy.h"

namespace cyber {
namespace scheduler {
namespace {

std::string ThreadPrefix(const std::string& thread_name) {
  return absl::StrCat("thread \"", thread_name, "\": ");
}

}  // namespace

absl::Status SetCurrentThreadAffinity(const std::vector<int>& cpus,
                                      const std::string& thread_name) {
  if (cpus.empty()) return absl::OkStatus();
  const std::string list = FormatCpuList(cpus);

  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu > kMaxCpuIndex) {
      return absl::InvalidArgumentError(
          absl::StrCat(ThreadPrefix(thread_name), "cannot pin to CPUs ", list,
                       ": CPU ", cpu, " is outside 0..", kMaxCpuIndex));
    }
    CPU_SET(cpu, &wanted);
  }

  const int rc =
      pthread_setaffinity_np(pthread_self(), sizeof(wanted), &wanted);
  if (rc == EINVAL) {
    return absl::InvalidArgumentError(absl::StrCat(
        ThreadPrefix(thread_name), "cannot pin to CPUs ", list,
        ": none of them is usable here (", sysconf(_SC_NPROCESSORS_ONLN),
        " CPUs online; the cgroup may allow fewer)"));
  }
  if (rc != 0) {
    return absl::ErrnoToStatus(rc, absl::StrCat(ThreadPrefix(thread_name),
                                                "cannot pin to CPUs ", list));
  }

  // The kernel drops CPUs that do not exist or are not allowed; say so.
  cpu_set_t actual;
  CPU_ZERO(&actual);
  if (pthread_getaffinity_np(pthread_self(), sizeof(actual), &actual) == 0) {
    std::vector<int> dropped;
    for (int cpu : cpus) {
      if (!CPU_ISSET(cpu, &actual)) dropped.push_back(cpu);
    }
    AWARN_IF(!dropped.empty())
        << ThreadPrefix(thread_name) << "pinned to CPUs " << list << " without "
        << FormatCpuList(dropped) << ", which are not usable here";
  }
  return absl::OkStatus();
}

absl::Status SetCurrentThreadPolicy(int policy, int priority,
                                    const std::string& thread_name) {
  const std::optional<PriorityRange> range = PriorityRangeFor(policy);
  if (!range) {
    return absl::InvalidArgumentError(absl::StrCat(
        ThreadPrefix(thread_name), "scheduling ", SchedPolicyName(policy),
        " is not one of ", SupportedSchedPolicyNames()));
  }
  const std::string setting =
      policy == SCHED_OTHER
          ? absl::StrCat("SCHED_OTHER nice value ", priority)
          : absl::StrCat(SchedPolicyName(policy), " priority ", priority);
  if (priority < range->min || priority > range->max) {
    return absl::InvalidArgumentError(
        absl::StrCat(ThreadPrefix(thread_name), "cannot set ", setting,
                     ": out of range ", range->min, "..", range->max));
  }

  sched_param param{};
  param.sched_priority = policy == SCHED_OTHER ? 0 : priority;
  const int rc = pthread_setschedparam(pthread_self(), policy, &param);
  if (rc != 0) {
    std::string hint;
    if (rc == EPERM && policy != SCHED_OTHER) {
      hint = absl::StrCat(" (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= ", priority,
                          ")");
    }
    return absl::ErrnoToStatus(rc, absl::StrCat(ThreadPrefix(thread_name),
                                                "cannot set ", setting, hint));
  }
  if (policy != SCHED_OTHER) return absl::OkStatus();

  // Linux keeps the nice value per thread; PRIO_PROCESS with a thread id
  // addresses exactly one thread.
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), priority) != 0) {
    const int error = errno;
    std::string hint;
    if (error == EACCES || error == EPERM) {
      hint = " (a lower nice value needs CAP_SYS_NICE or RLIMIT_NICE)";
    }
    return absl::ErrnoToStatus(
        error,
        absl::StrCat(ThreadPrefix(thread_name), "cannot set ", setting, hint));
  }
  return absl::OkStatus();
}

std::vector<int> CpusForProcessor(const ProcessorGroupConfig& group,
                                  int index) {
  ACHECK(index >= 0) << "group \"" << group.name << "\": processor index "
                     << index << " is negative";
  if (group.cpuset.empty() ||
      group.affinity == ProcessorGroupConfig::Affinity::kRange) {
    return group.cpuset;
  }
  const size_t i = static_cast<size_t>(index) % group.cpuset.size();
  return {group.cpuset[i]};
}

}  // namespace scheduler
}  // namespace cyber
