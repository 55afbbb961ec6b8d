// LockstepMember: one process's side of the lockstep protocol
// (lockstep.proto, coordinator.h). It joins the run, and for each grant
// that names it due (or once something of the granted instant is pending:
// next_event_ns at or before it) runs the process to the granted instant
// through the caller's hooks and reports DONE with the process's counts and
// its next event; a grant that does not concern it is not answered. A message
// from another process that arrives after the report (Poke) makes it run to
// the same instant again and report again (what it hands over, as far as
// the grant's deliver_through allows, and its new counts): the coordinator
// never moves time while a message is in flight.
//
// A coordinator that goes away (its participant lost) ends the run for the
// member as a failure, as a stop grant would: nothing waits for ever.
//
// Hooks run one at a time. A step (run_until, then DONE) runs on the
// transport's thread that delivered its grant or the message that poked it,
// when no other step is running (so no hand-over to another thread lies on
// the run's critical path); otherwise, and for the join, the first grant
// and the stop, on the member's own thread. So a hook must not wait for a
// message to arrive, nor close the transport's subscriptions. The member never
// reads a clock for the simulation: the granted instants are the only
// time it knows; the steady clock only spaces JOIN's repeats.
//
// Threads: Poke and the destructor may be called from any thread but a
// hook's (the destructor waits for a step in progress to end).

#ifndef CYBER_LOCKSTEP_MEMBER_H_
#define CYBER_LOCKSTEP_MEMBER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/lockstep/lockstep.pb.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {
namespace lockstep {

// A member's run_until `through` when the coordinator does not name the
// process as gathering: hand over what has arrived as it arrives.
inline constexpr uint64_t kDeliverAll = UINT64_MAX;

struct MemberHooks {
  // Runs everything due at or before `instant_ns` (again, when called a
  // second time for the same instant: what arrived since), handing over
  // messages from other processes only up to the `through`th arrival
  // (kDeliverAll: every one). Required.
  std::function<void(int64_t instant_ns, uint64_t through)> run_until;
  // The earliest pending event after the last instant run, a message from
  // another process that arrived and waits for its instant included; -1:
  // none. A grant that does not name the process due runs it only when
  // this is at or before the granted instant.
  std::function<int64_t()> next_event_ns;
  // Per channel, what crossed to and from other processes since the start,
  // and whom its writers matched (sent with JOIN and DONE); and into
  // `*arrivals`, how many messages from other processes had arrived, taken
  // with the counts.
  std::function<std::vector<ChannelCount>(uint64_t* arrivals)> counts;
  // The run is over: `why`, and whether it failed (a stop grant before
  // the end, or the coordinator lost). Called once, then no hook again.
  std::function<void(const std::string& why)> on_stop;
};

struct MemberOptions {
  std::string process;  // the name the coordinator expects (required)
  std::string host;
  int64_t pid = 0;
  // JOIN again this often until the first grant (a JOIN sent before every
  // writer matched its readers cannot start the run; the next one can).
  absl::Duration join_repeat = absl::Milliseconds(20);
};

class LockstepMember {
 public:
  // Opens the topics on `transport` and starts joining. InvalidArgument
  // for an empty process name or a missing hook; the transport's errors.
  static absl::StatusOr<std::unique_ptr<LockstepMember>> Start(
      std::shared_ptr<RemoteTransport> transport, MemberOptions options, MemberHooks hooks);
  // Sends LEAVE unless stopped by a grant, and ends the thread; no hook
  // runs after it returns.
  ~LockstepMember();

  // A message from another process was delivered (call from the delivery
  // path): report again once it has been run.
  void Poke();
  // Blocks until the run is over; returns the stop grant's reason.
  std::string WaitForStop();
  // After WaitForStop: whether the run failed (ended before its end).
  bool failed() const;
  // The step last answered (0 before the first grant).
  uint64_t step() const;

 private:
  LockstepMember(std::shared_ptr<RemoteTransport> transport, MemberOptions options, MemberHooks hooks);
  void OnGrant(const Grant& grant, const RemotePeer* sender);
  void OnPeerLost(const RemotePeer& peer);
  // One piece of work: a grant (or, without one, a poke's run again at the
  // current step's instant).
  struct Work {
    std::optional<Grant> grant;
    uint64_t step = 0;
    int64_t instant_ns = 0;
    uint64_t through = kDeliverAll;
  };
  void Run();
  bool TakeWork(Work* work) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Claims running_ for a step on the calling (transport's) thread; false
  // (and the member thread woken) when it must not: a step is running, not
  // joined yet, stopping.
  bool ClaimInline() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs steps until no work is left; then releases running_.
  void RunInline();
  void ReleaseRunning() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunStep(const Work& work);
  // Whether `grant` names this process among those due at its instant.
  bool Due(const Grant& grant) const;
  void Send(Report::Kind kind, uint64_t step, int64_t instant_ns);

  const std::shared_ptr<RemoteTransport> transport_;
  const MemberOptions options_;
  const MemberHooks hooks_;
  std::shared_ptr<RemotePublisher> reports_;
  std::unique_ptr<RemoteSubscription> grants_;
  std::thread thread_;
  // The transport may call a lost-peer listener after its removal: the
  // listener reaches the member through this, cleared by the destructor.
  struct LostLink {
    Mutex mu;
    LockstepMember* member ABSL_GUARDED_BY(mu) = nullptr;
  };
  std::shared_ptr<LostLink> lost_link_ = std::make_shared<LostLink>();
  uint64_t lost_listener_ = 0;

  mutable Mutex mu_;
  CondVar changed_;     // the member thread's: a grant, a poke, the end
  CondVar stopped_cv_;  // WaitForStop's: stopped_ set
  std::optional<Grant> pending_ ABSL_GUARDED_BY(mu_);  // the newest grant not yet run
  uint64_t run_id_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t instant_ns_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t through_ ABSL_GUARDED_BY(mu_) = kDeliverAll;  // the current step's
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;  // a thread runs a step (or joins, or stops)
  bool quit_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::string> stopped_ ABSL_GUARDED_BY(mu_);
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  std::string coordinator_ ABSL_GUARDED_BY(mu_);  // the grants' sender
};

}  // namespace lockstep
}  // namespace cyber

#endif  // CYBER_LOCKSTEP_MEMBER_H_
