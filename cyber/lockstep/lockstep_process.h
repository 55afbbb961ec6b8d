// LockstepProcess: a process's whole part in a lockstep run, put together:
// the LockstepTransport its runtime sends and receives through, and the
// LockstepMember that runs it to each granted instant.
//
// The order at one instant T (the same rule in every process, every run):
//   1. everything of this process due at or before T runs (timers, the
//      routines they wake, the messages they write to readers in this
//      process), until nothing is left to run at T;
//   2. the messages other processes sent at T are handed to this process's
//      readers in (instant, writer process, order sent) order: as they
//      arrive when one process writes what this process reads; when two or
//      more do, at the next step at T, all those that arrived before it,
//      at once (the coordinator's deliver_through);
//   3. what they woke runs, as in 1;
// and 2-3 again for messages that arrive later during T (the coordinator
// does not move time while one is in flight). Then the process reports
// DONE with its counts and its next event: the earlier of its simulation's
// next planned event and the earliest message already queued.
//
// The simulation is the caller's (a SimulatedGraph in mainboard): it is
// reached only through SimulationHooks, on the member's thread.
//
// Threads: as LockstepMember.

#ifndef CYBER_LOCKSTEP_LOCKSTEP_PROCESS_H_
#define CYBER_LOCKSTEP_LOCKSTEP_PROCESS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cyber/lockstep/lockstep_transport.h"
#include "cyber/lockstep/member.h"

namespace cyber {
namespace lockstep {

struct SimulationHooks {
  // Runs everything due at or before `instant_ns` until nothing is left to
  // run at it. Required.
  std::function<void(int64_t instant_ns)> run_until;
  // The next planned event after the last instant run; -1: none. Required.
  std::function<int64_t()> next_event_ns;
  // The run is over (the coordinator's reason); the process should stop.
  std::function<void(const std::string& why)> on_stop;
};

class LockstepProcess {
 public:
  // `now_ns`: the simulation's present instant (stamped on what it sends).
  LockstepProcess(std::shared_ptr<RemoteTransport> real, std::function<int64_t()> now_ns);
  ~LockstepProcess();  // leaves the run (LockstepMember's destructor)

  // What the process's runtime must use as its remote transport: made
  // before the simulation, which opens its channels through it.
  const std::shared_ptr<LockstepTransport>& transport() const { return transport_; }

  // Joins the run as `options.process`; from now on the hooks are called.
  absl::Status Join(MemberOptions options, SimulationHooks hooks);
  // Blocks until the run is over; the coordinator's reason.
  std::string WaitForStop();
  // After WaitForStop: whether the run failed.
  bool failed() const { return member_ != nullptr && member_->failed(); }
  uint64_t steps() const { return member_ ? member_->step() : 0; }

 private:
  void RunTo(int64_t instant_ns, uint64_t through);

  // The member speaks the protocol on the real transport: its grants and
  // reports are not the simulation's messages.
  const std::shared_ptr<RemoteTransport> real_;
  std::shared_ptr<LockstepTransport> transport_;
  SimulationHooks hooks_;
  std::atomic<bool> granted_{false};  // the first grant came
  std::unique_ptr<LockstepMember> member_;
};

}  // namespace lockstep
}  // namespace cyber

#endif  // CYBER_LOCKSTEP_LOCKSTEP_PROCESS_H_
