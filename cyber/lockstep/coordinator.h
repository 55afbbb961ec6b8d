// Coordinator: the one time authority of a simulation that spans several
// processes (issue 37's lockstep). It is the protocol's logic only: reports
// go in, decisions come out, and whoever owns it (cyber_launch's lockstep
// driver) carries them over DDS and paces them. So every rule below is
// tested without a process or a network.
//
// The rules:
//   Joining. No grant before every process named in the options has sent
//   JOIN with clock "simulated", and, per channel, every writing process's
//   writer has matched the readers of every other process that reads it
//   (as their latest JOINs say: processes repeat JOIN until the first
//   grant). A JOIN on another clock, or from a process
//   not named, fails the run with its name (a real-clock process must never
//   share a simulated domain). Joining has a wall-clock deadline.
//   Stepping. Step k grants instant T_k to every process and names those
//   due at it: every process at the first step and at the end, else each
//   whose latest report put its next event at or before T_k. Step k is complete when
//   every due process has reported DONE for step k, and for every channel
//   and every process that reads it, what that process received equals
//   what the *other* processes sent on it, by each process's latest report
//   (so no message is in flight). A process not due runs and reports only
//   when a message of T_k reaches it; until then nothing of its own
//   changed, and its last report still holds. A process reports DONE again
//   when a late message made it run more at T_k: its latest report counts.
//   Gathering. A process that reads channels written by two or more other
//   processes (as the latest reports say) gathers: it hands over a message from
//   another process only at a step after the one in which it arrived, all
//   that arrived by then at once (the grant's deliver_through: its
//   arrivals by its latest report), so the order between two writers'
//   messages of one instant never depends on which arrived first. For it,
//   "received" above is what arrived. At an instant where none of them
//   has two writers that may run (due, or reading what a due process
//   writes), none gathers: each takes messages as they arrive.
//   The next instant. T_{k+1} = T_k again while a gathering process has
//   messages of T_k to hand over (its latest next event is at or before
//   T_k); else the earliest next event any process reported, or the end
//   when none has one (the simulation is idle until the end); never later
//   than the end. The first grant is the start instant.
//   Failing. A process that does not complete step k within the step
//   deadline (wall clock from the grant), or that is lost (its
//   participant gone, LEAVE before the end), fails the run; the reason
//   names the process, the step, the instant, and what it owed (its DONE,
//   or the messages on a channel that did not arrive).
//   Ending. After the steps at the end instant complete (no gathering
//   process has messages left to hand over): a stop grant.
//
// The wall clock is never read here: callers pass the steady clock's now
// (as absl::Time) for the deadlines.
//
// Threads: not thread-safe; one owner.

#ifndef CYBER_LOCKSTEP_COORDINATOR_H_
#define CYBER_LOCKSTEP_COORDINATOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/lockstep/lockstep.pb.h"

namespace cyber {
namespace lockstep {

struct CoordinatorOptions {
  // The processes of the run, by name (Report.process). Required.
  std::vector<std::string> processes;
  // Simulated instants, ns since the simulation's epoch; start <= end.
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t run_id = 1;  // non-zero
  // Wall-clock bounds (steady clock).
  absl::Duration join_deadline = absl::Seconds(60);
  absl::Duration step_deadline = absl::Seconds(10);
};

class Coordinator {
 public:
  // InvalidArgument naming the field and value: no process, a name twice
  // or empty, end before start, run_id 0, a deadline not positive.
  static absl::StatusOr<Coordinator> Create(CoordinatorOptions options, absl::Time now);

  // A report from a process. Reports of another run, and DONE for a step
  // other than the current one, are ignored (counted in ignored()).
  void OnReport(const Report& report, absl::Time now);
  // A process's participant is gone (it exited or was killed).
  void OnProcessLost(const std::string& process, absl::Time now);
  // Ends the run as a failure with `why` (Ctrl-C: "stop requested").
  void Abort(std::string why) { Fail(std::move(why)); }

  struct Decision {
    enum class Kind {
      kWait,   // nothing to send; ask again after an input or at `until`
      kGrant,  // send `grant`
      kStop,   // send `grant` (stop = true): the run is over
    };
    Kind kind = Kind::kWait;
    Grant grant;
    absl::Time until = absl::InfiniteFuture();  // kWait: the next deadline
  };
  // What to do now. A grant or a stop is handed out once: the next call
  // waits for the reports it asks for.
  Decision Next(absl::Time now);

  // Whether Next() would hand out a grant now: every process joined (the
  // first step), or the current step is complete (every due process
  // reported it, no message in flight), and the end is not reached.
  // A paused driver asks this instead of Next(), so a held grant's step
  // deadline does not run while it is held.
  bool ReadyToGrant() const;
  // Whether the current step is complete (every due process reported it,
  // nothing in flight) and the run neither stopped nor failed.
  bool StepComplete() const { return !stopped_ && !failure_ && step_ > 0 && Owed().empty(); }

  // Set once the run failed: why (the stop grant's `why` too).
  const std::optional<std::string>& failure() const { return failure_; }
  bool finished() const { return stopped_; }
  uint64_t step() const { return step_; }
  int64_t instant_ns() const { return instant_ns_; }
  uint64_t ignored() const { return ignored_; }
  // Who or what step `step()` still waits for, one line (status lines,
  // the failure reason).
  std::string Waiting() const;

 private:
  explicit Coordinator(CoordinatorOptions options, absl::Time now);
  bool AllJoined() const;
  // Empty when every writer matched every reader of the run; else the
  // first pair that has not.
  std::string Unmatched() const;
  // Empty when step k is complete; else what it waits for.
  std::string Owed() const;
  int64_t NextInstant() const;
  // From the latest reports (the JOINs before the first step): who writes
  // what whom reads, and gathering_.
  void MapWriters();
  // A report's channels and their directions, as one number that grows
  // when one is added.
  static int Endpoints(const Report& report);
  // The gathering processes that gather at `grant`: every one at a second
  // step at one instant, or when one of them has two or more of its
  // writers among the processes that may run at the instant; else none.
  std::set<std::string> GatheringAt(const Grant& grant, bool same_instant) const;
  // Whether a gathering process has messages of instant_ns_ left to hand
  // over (by its latest report).
  bool Gathered() const;
  Decision Stop(std::string why);
  void Fail(std::string why);

  CoordinatorOptions options_;
  std::set<std::string> expected_;
  std::set<std::string> joined_;
  std::map<std::string, int64_t> joined_pids_;
  std::map<std::string, Report> joins_;  // the latest JOIN per process
  // Whether `process` must report step_ (its next event is due).
  bool Due(const std::string& process) const;

  std::map<std::string, Report> latest_;  // the latest DONE per process, any step
  std::set<std::string> answered_;        // who reported DONE for step_
  // Mapped at the first grant, and again after a report with a channel
  // opened since: per process, the other processes that write what it
  // reads, and that read what it writes; those that read from two or more.
  std::map<std::string, std::set<std::string>> writers_of_, readers_of_;
  std::set<std::string> gathering_;
  bool remap_ = false;
  std::set<std::string> gathering_now_;  // those that gather at step_
  std::optional<std::string> failure_;
  bool stopped_ = false;
  uint64_t step_ = 0;
  int64_t instant_ns_ = 0;
  absl::Time phase_began_;  // joining began, or step_'s grant went out
  uint64_t ignored_ = 0;
};

}  // namespace lockstep
}  // namespace cyber

#endif  // CYBER_LOCKSTEP_COORDINATOR_H_
