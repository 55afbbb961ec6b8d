// Readiness: what the supervisor asks before it starts a process that
// waits (start_after, wait_for_writer). The program answers from the DDS
// domain (GraphReadiness, over DomainGraph); tests answer with a fake, so
// the supervisor's ordering is tested without DDS.
//
// Threads: called from the supervisor's Run() thread only, between its
// waits (at least every kReadinessPoll while a process waits), never under
// the supervisor's lock.

#ifndef CYBER_LAUNCH_READINESS_H_
#define CYBER_LAUNCH_READINESS_H_

#include <sys/types.h>

#include <string>

#include "absl/time/time.h"

namespace cyber {
namespace launch {

// How often a waiting process's conditions are asked again.
inline constexpr absl::Duration kReadinessPoll = absl::Milliseconds(50);

class Readiness {
 public:
  virtual ~Readiness() = default;
  // True once process `process_name`, running as `pid` on this host, has
  // announced its components (a graph with at least one node).
  virtual bool ProcessUp(const std::string& process_name, pid_t pid) = 0;
  // True once any process of the domain writes `channel`.
  virtual bool ChannelHasWriter(const std::string& channel) = 0;
  // One line on where readiness was looked for (the domain), for the
  // message when a process waited longer than its ready_timeout.
  virtual std::string Where() const = 0;
  // No process will wait any more (every one has started or given up;
  // respawns do not wait): what the answers needed can go. Called once.
  virtual void Done() {}
};

}  // namespace launch
}  // namespace cyber

#endif  // CYBER_LAUNCH_READINESS_H_
