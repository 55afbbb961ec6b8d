// ThreadRoles: which thread of the scale run is which, so that CPU time can
// be charged to the tick thread, the scheduler, the load generators and the
// measuring threads separately.
//
// Why by name and by birth: the tick thread names itself "timer-tick"
// (timer/timer_system_core.cc) and is found by that name; the scheduler's
// processors are the other threads cyber::Init() starts (their names come
// from the scheduler conf, so they are recognised as "born during Init"
// instead); this tool's own threads carry the names below.
//
// Threads: ThreadRoles is immutable after Find(); use from any thread.

#ifndef TESTS_SCALE_THREAD_ROLES_H_
#define TESTS_SCALE_THREAD_ROLES_H_

#include <map>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/time/clock.h"
#include "tests/scale/proc_stats.h"

namespace cyber {
namespace scale {

// Names of this tool's threads (pthread_setname_np, at most 15 characters).
inline constexpr char kTickThreadName[] = "timer-tick";
inline constexpr char kRequestThreadPrefix[] = "scale-req-";
inline constexpr char kStarterThreadName[] = "scale-start";
inline constexpr char kFloorThreadName[] = "scale-floor";
inline constexpr char kProbeThreadName[] = "scale-probe";
inline constexpr char kSamplerThreadName[] = "scale-sampler";

enum class ThreadRole {
  kTick,
  kScheduler,
  kRequests,
  kStarter,
  kFloor,
  kProbe,
  kSampler,
  kMain,
  kOther,
};

// "tick thread", "scheduler processors", ...; also a JSON-friendly key.
const char* ThreadRoleName(ThreadRole role);
const char* ThreadRoleKey(ThreadRole role);

struct RoleCpu {
  absl::Duration cpu = absl::ZeroDuration();
  int threads = 0;
};

class ThreadRoles {
 public:
  // The tids alive now; call before cyber::Init().
  static std::set<int> CurrentTids();
  // After cyber::Init(): the tick thread by name (waiting up to `wait` for
  // it to name itself), the scheduler as the other threads not in `before`.
  // Errors: NotFound if no thread is named kTickThreadName in time.
  static absl::StatusOr<ThreadRoles> Find(const std::set<int>& before,
                                          Clock* clock, absl::Duration wait);

  ThreadRole RoleOf(const ThreadCpu& thread) const;
  // CPU time per role between two samples. Threads born in between count
  // from zero; threads gone by `after` are not counted.
  std::map<ThreadRole, RoleCpu> CpuByRole(
      const std::vector<ThreadCpu>& before,
      const std::vector<ThreadCpu>& after) const;

 private:
  std::set<int> tick_;
  std::set<int> scheduler_;
};

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_THREAD_ROLES_H_
