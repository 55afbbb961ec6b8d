#include "tests/scale/thread_roles.h"

#include <unistd.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace scale {

const char* ThreadRoleName(ThreadRole role) {
  switch (role) {
    case ThreadRole::kTick:
      return "tick thread";
    case ThreadRole::kScheduler:
      return "scheduler processors";
    case ThreadRole::kRequests:
      return "request threads (load)";
    case ThreadRole::kStarter:
      return "periodic starter (load)";
    case ThreadRole::kFloor:
      return "floor thread";
    case ThreadRole::kProbe:
      return "wheel lock probe";
    case ThreadRole::kSampler:
      return "sampler";
    case ThreadRole::kMain:
      return "main thread";
    case ThreadRole::kOther:
      return "other";
  }
  return "unknown";
}

const char* ThreadRoleKey(ThreadRole role) {
  switch (role) {
    case ThreadRole::kTick:
      return "tick";
    case ThreadRole::kScheduler:
      return "scheduler";
    case ThreadRole::kRequests:
      return "requests";
    case ThreadRole::kStarter:
      return "starter";
    case ThreadRole::kFloor:
      return "floor";
    case ThreadRole::kProbe:
      return "probe";
    case ThreadRole::kSampler:
      return "sampler";
    case ThreadRole::kMain:
      return "main";
    case ThreadRole::kOther:
      return "other";
  }
  return "unknown";
}

std::set<int> ThreadRoles::CurrentTids() {
  std::set<int> tids;
  for (const ThreadCpu& t : SampleThreads()) tids.insert(t.tid);
  return tids;
}

absl::StatusOr<ThreadRoles> ThreadRoles::Find(const std::set<int>& before,
                                              Clock* clock,
                                              absl::Duration wait) {
  const Instant deadline = clock->Now() + wait;
  while (true) {
    ThreadRoles roles;
    for (const ThreadCpu& t : SampleThreads()) {
      if (t.name == kTickThreadName) {
        roles.tick_.insert(t.tid);
      } else if (before.count(t.tid) == 0) {
        roles.scheduler_.insert(t.tid);
      }
    }
    if (!roles.tick_.empty()) return roles;
    if (clock->Now() >= deadline) {
      return absl::NotFoundError(absl::StrCat(
          "no thread named \"", kTickThreadName, "\" within ",
          absl::FormatDuration(wait), " of cyber::Init()"));
    }
    clock->SleepFor(absl::Milliseconds(1));
  }
}

ThreadRole ThreadRoles::RoleOf(const ThreadCpu& t) const {
  if (tick_.count(t.tid) > 0) return ThreadRole::kTick;
  if (scheduler_.count(t.tid) > 0) return ThreadRole::kScheduler;
  if (t.name.rfind(kRequestThreadPrefix, 0) == 0) return ThreadRole::kRequests;
  if (t.name == kStarterThreadName) return ThreadRole::kStarter;
  if (t.name == kFloorThreadName) return ThreadRole::kFloor;
  if (t.name == kProbeThreadName) return ThreadRole::kProbe;
  if (t.name == kSamplerThreadName) return ThreadRole::kSampler;
  if (t.tid == static_cast<int>(getpid())) return ThreadRole::kMain;
  return ThreadRole::kOther;
}

std::map<ThreadRole, RoleCpu> ThreadRoles::CpuByRole(
    const std::vector<ThreadCpu>& before,
    const std::vector<ThreadCpu>& after) const {
  std::map<int, absl::Duration> start;
  for (const ThreadCpu& t : before) start[t.tid] = t.cpu;
  std::map<ThreadRole, RoleCpu> cpu;
  for (const ThreadCpu& t : after) {
    const auto it = start.find(t.tid);
    RoleCpu& r = cpu[RoleOf(t)];
    r.cpu += t.cpu - (it == start.end() ? absl::ZeroDuration() : it->second);
    ++r.threads;
  }
  return cpu;
}

}  // namespace scale
}  // namespace cyber
