// CoordinatorDriver: the Coordinator (coordinator.h) on a DDS domain. It
// reads every process's reports, notices a process whose participant goes
// away, sends the coordinator's grants, and paces them: as fast as the
// processes allow, or no faster than `speed` times real time.
//
// The pacing reads the steady clock (never the wall clock), and only to
// hold a grant back; the simulation's instants come from the coordinator.
//
// Pause, step, resume (a terminal's keys, cyber_launch): paused, the
// driver hands out no grant (the processes wait, idle, at the instant they
// reached) but still takes reports and notices a process lost; Step()
// lets one grant out; Resume() goes on, and a paced run's schedule moves by
// the time spent paused, so it does not rush to catch up. A held grant's
// step deadline does not run: it starts when the grant goes out. (A pause
// that comes while a grant is already decided — a paced one waiting for its
// time, or one being sent on a transport's thread — takes effect after that
// grant.)
//
// Unpaced and unpaused, a grant goes out on the transport's thread that
// delivered the report completing the step (no hand-over to Run()'s thread
// on the step's critical path); Run()'s thread handles everything else:
// the first grant, pauses, the pace, deadlines, the stop, progress lines.
//
// Threads: Run() blocks its caller; RequestStop() from any thread
// (async-signal-safe: it only stores an atomic and is polled); Pause(),
// Resume(), TogglePause(), Step() and paused() from any thread.

#ifndef CYBER_LOCKSTEP_COORDINATOR_DRIVER_H_
#define CYBER_LOCKSTEP_COORDINATOR_DRIVER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/lockstep/coordinator.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {
namespace lockstep {

struct CoordinatorDriverOptions {
  CoordinatorOptions coordinator;
  // 0: as fast as the processes go; N > 0: N times real time at most
  // (instant T is granted no earlier than (T - start) / N of real time
  // after the first grant).
  double speed = 0;
  // Progress lines ("lockstep: step 120, 1.2s of 60s simulated ..."), at
  // most one per `progress_every` of real time; null: none.
  std::function<void(const std::string&)> progress;
  absl::Duration progress_every = absl::Seconds(1);
};

struct RunOutcome {
  bool ok = false;
  std::string why;          // the stop grant's reason
  uint64_t steps = 0;
  int64_t reached_ns = 0;   // the last instant granted
  absl::Duration wall;      // real time from the first grant to the stop (pauses included)
};

class CoordinatorDriver {
 public:
  // InvalidArgument for bad options (Coordinator::Create's, a negative
  // speed); the transport's errors.
  static absl::StatusOr<std::unique_ptr<CoordinatorDriver>> Start(
      std::shared_ptr<RemoteTransport> transport, CoordinatorDriverOptions options);
  ~CoordinatorDriver();

  // Runs the simulation to its end or failure; every process has been
  // sent the stop grant when it returns, and has answered it (LEAVE) or
  // is gone, or the step deadline passed waiting for that.
  RunOutcome Run();
  // Ends the run at the next decision, as a failure: "stop requested"
  // (Ctrl-C).
  void RequestStop() { stop_requested_.store(true, std::memory_order_relaxed); }

  void Pause() { paused_.store(true, std::memory_order_relaxed); }
  void Resume();
  void TogglePause();
  // Paused: lets one more grant out (and stays paused). Running: nothing.
  void Step();
  bool paused() const { return paused_.load(std::memory_order_relaxed); }
  // The last step granted and its instant (ns from the run's start).
  uint64_t step() const { return granted_step_.load(std::memory_order_relaxed); }
  int64_t instant_ns() const { return granted_ns_.load(std::memory_order_relaxed); }

 private:
  CoordinatorDriver(std::shared_ptr<RemoteTransport> transport, CoordinatorDriverOptions options,
                    Coordinator coordinator);
  // Publishes a grant the coordinator handed out, and (not a stop) makes
  // it what step() and instant_ns() say. REQUIRES: drive_mu_ held, so
  // grants go out in their order.
  void Publish(const Grant& grant) ABSL_EXCLUSIVE_LOCKS_REQUIRED(drive_mu_);
  void AwaitLeaves(uint64_t run_id);
  // Feeds the queued reports and losses to the coordinator.
  void TakeInbox() ABSL_EXCLUSIVE_LOCKS_REQUIRED(drive_mu_);
  // On the transport's thread after a report: grants the next step at once
  // when it is complete and nothing (pause, pace, stop, end) needs Run()'s
  // thread; wakes that thread when something does.
  void AdvanceFromReport();
  void WakeRun();

  const std::shared_ptr<RemoteTransport> transport_;
  const CoordinatorDriverOptions options_;
  Mutex drive_mu_;
  Coordinator coordinator_ ABSL_GUARDED_BY(drive_mu_);
  // Set by Run() once the first grant is out, unpaced; cleared at the stop.
  // Read without drive_mu_ first, so that a report never waits for the lock
  // while Run() holds it through a paced grant's wait.
  std::atomic<bool> inline_grants_{false};
  // Processes whose participant went away: AwaitLeaves expects no LEAVE
  // from them.
  std::set<std::string> lost_ ABSL_GUARDED_BY(drive_mu_);
  std::shared_ptr<RemotePublisher> grants_;
  std::unique_ptr<RemoteSubscription> reports_;
  uint64_t lost_listener_ = 0;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> paused_{false};
  std::atomic<uint64_t> steps_allowed_{0};  // grants a paused run may still hand out
  std::atomic<uint64_t> granted_step_{0};
  std::atomic<int64_t> granted_ns_{0};

  // What the transport's threads hand over. Shared with the peer-lost
  // listener, which the transport may still call after its removal.
  struct Inbox {
    Mutex mu;
    CondVar changed;
    std::deque<Report> reports ABSL_GUARDED_BY(mu);
    std::deque<std::string> lost ABSL_GUARDED_BY(mu);
    bool wake_run ABSL_GUARDED_BY(mu) = false;  // Run()'s thread has a decision to make
  };
  const std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
};

}  // namespace lockstep
}  // namespace cyber

#endif  // CYBER_LOCKSTEP_COORDINATOR_DRIVER_H_
