// SimulatedGraph: runs graphs (.dag files) on simulated time, as fast as the
// CPU allows, with the same result every run.
//
// Why: robot teams test graphs by running them. On the real clock a 60 s
// scenario takes 60 s and its interleavings differ from run to run; Cyber RT
// switches timers off in simulation and ROS 2's use_sim_time still runs at
// wall speed. Here a graph gets its own runtime (cyber/runtime/runtime.h) —
// a SimulatedClock, a thread-free TimerSystem on it, a Scheduler with no
// processor threads and a ChannelBus — and everything inside it follows that
// runtime (cyber/common/runtime_scope.h): TimerComponent intervals, Timers
// the components make with the plain constructors, Nodes they make,
// reader delivery, CRoutine::SleepFor, Rate, Duration::Sleep,
// cyber::Time::Now(), cyber::Async and scheduler::Instance(). No real clock
// is read on the scheduling path of a run.
//
// Determinism, by construction rather than by ordering rules: from Launch()
// to the end of the last Run*(), all of the graph's code runs on the thread
// that drives the simulation. Run*() repeats
//   1. run every queued routine (timer calls, reader deliveries, tasks) to
//      completion or suspension, in the scheduler's priority order;
//   2. step the wheel at the present instant (due timers queue their calls);
//   3. when nothing is queued, jump the clock to the next planned expiry;
// so the sequence of (simulated time, component, call) events depends only on
// the graphs and their inputs. Trace() returns it.
//
//   SimulatedGraph graph;
//   ASSERT_TRUE(graph.Launch({"examples/sensor_polling/sensor_polling.dag"}).ok());
//   auto imu = graph.Tap<ImuSample>("/sensor/imu");
//   graph.RunFor(absl::Seconds(60));
//   EXPECT_EQ(graph.StatsOf("imu_poller")->procs, 6000);
//
// Replaying a recording (Options::recording: an MCAP file and the channels
// to feed; recording_replay.h): each recorded message of those channels is
// published into the graph's channel, as a writer of node "<name>_replay"
// in the graph would, at its recorded instant:
//
//   instant = Options::start + (its log_time - the recording's first log_time)
//
// (the first message of the whole recording, fed or not, is at the start),
// in the recording's total order (instant, channel, writer, sequence).
// The ordering rule at one instant: the graph's own events of that instant
// first — its timers, At() actions, and every routine they make ready at
// that instant — then the recorded messages of that instant, one at a
// time: each is delivered, and what it makes ready runs, before the next.
// So a 10 ms timer and a message recorded at 10 ms: the timer's call runs,
// then the message's reader. (It is the rule of lockstep processes too:
// own events, then what arrives from outside; docs/lockstep.md.) Messages
// are delivered during Run*() and NextPlanned(), from the first Run*() on
// (those at the start instant too); Stop() delivers none. A channel asked
// for that is not in the recording, or recorded with another type than the
// graph's readers use, or read by no one in the graph, fails Launch() with
// an error naming the recording, the channel and both types. The same
// recording gives the same Trace() (and TraceDigest()) every run.
//
// What graph code must not do here: block its thread waiting for other
// routines (std::future::get on cyber::Async, a condition variable another
// routine signals) — there is only one thread. Suspending (SleepFor,
// WaitForData, a Timer's synchronous Stop() from a routine) is fine; a
// routine that loops on Yield() is run again at every instant while time
// moves on (after 2^14 resumes at one instant, with a warning). A blocking
// sleep in a component's Init() (on the driving thread) cannot end: it is
// logged and returns at once (cyber/time/sleep_on_clock.h).
//
// Stop() is not part of the deterministic run: components are stopped (and
// their Clear() runs) on a helper thread while the driving thread runs the
// calls they wait for. Simulated time passes during a stop as fast as the
// CPU allows, and only when nothing of the graph can run at the present
// instant and the stop waits:
//   * at once when it waits for a call of the graph: a synchronous stop of
//     a Timer, a Reader, a Service or a Client waiting for its running
//     callback, which sleeps until later (the stop's thread reports its
//     waits: cyber/time/wait_list.h, ScopedWaitReport);
//   * when it waits for something else (a std::future, a condition
//     variable, a lock, a sleep in Clear()), once a poll of 1 ms of wall
//     time has brought no routine and the stop's thread sleeps in the
//     kernel (its state in /proc/self/task/<tid>/stat).
// A stop that computes (a Clear() saving a map) lets no time pass
// meanwhile. Take counts and traces at the end of the run, before Stop();
// Stats() after Stop() are the final ones, which may include such a call.
//
// A deadlock fails at once, with a report, instead of hanging until Bazel's
// timeout. A watch thread (steady clock) checks that the driving thread
// makes progress:
//   * during Run*(), that it comes back from the routines it runs, each
//     routine that returns or suspends counting (many slow routines at one
//     instant are progress; a routine that blocks the thread — a lock
//     another routine holds across a suspension, a std::future of another
//     routine — never comes back);
//   * during Stop()/StopComponent(), that a routine returns or suspends,
//     simulated time moves on or a component finishes its shutdown (a
//     Clear() that stops a timer while holding the lock its callback needs
//     does none of these; a yield loop's resumes beyond 2^14 at one
//     instant do not count).
// After Options::stuck_after (default 10 s of wall time) without progress
// it prints on stderr, each line starting with `simulated graph "<name>": `,
//
//   stuck: Stop() has made no progress for 10s of wall time
//   (SimulatedGraph::Options::stuck_after) at 1.25s of simulated time
//   components not stopped: "planner" (Shutdown() in progress), "lidar"
//   timer stops in progress:
//     timer "planner_timeout": Stop() waiting 10.002s for its running
//     callback; caller: thread 4242 "graph_test", in component "planner"
//     Shutdown()
//   (a hint for a run: what can block the driving thread)
//   aborting: the graph cannot go on
//
// A stop can also be stuck while time moves: its Clear() waits for a call
// that waits for the stop (two timers stopping each other), and another
// component's timer keeps simulated time going. A stop that lets
// Options::stop_time_limit of simulated time pass (default 10 s) while no
// component finishes its shutdown is reported the same way ("stuck: Stop()
// has let 10s of simulated time pass ... while no component finished its
// shutdown"). A callback that legitimately takes a while (a service
// callback sleeping 250 ms while a 1 kHz timer runs on) is not stuck: it
// costs the simulated time it sleeps, not wall time per step.
// Launch() is not watched: a component's Init() may take as long as it
// needs (it loads a map, say).
//
// (each report line is one line; the same report as mainboard's
// --shutdown_deadline, cyber/mainboard/stuck_report.h), then the summary
// table of what is known, and aborts the process (std::abort): a test
// binary fails there, with the report in its log.
//
// Lifetimes: the graph owns its clock, wheel and scheduler; a Timer or Rate
// that graph code made must not be used after the graph is destroyed (a
// Timer's Schedule() then fails with FailedPrecondition).
//
// Threads: one thread drives a SimulatedGraph (Launch, Run*, At, Write, Stop);
// Tap contents and Stats may be read from it between runs.

#ifndef CYBER_SIMULATION_SIMULATED_GRAPH_H_
#define CYBER_SIMULATION_SIMULATED_GRAPH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/component/component_base.h"
#include "cyber/mainboard/launcher.h"
#include "cyber/runtime/runtime.h"
#include "cyber/simulation/recording_replay.h"
#include "cyber/time/instant.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/node/node.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"
#include "timer/timer.h"

namespace cyber {

// One Proc() call, as Trace() lists it.
struct ProcEvent {
  absl::Duration at;      // simulated time since the graph's start
  std::string component;  // the component's name in its graph file
  bool ok = true;         // what Proc() returned
  bool operator==(const ProcEvent& o) const {
    return at == o.at && component == o.component && ok == o.ok;
  }
};

// Messages a Tap received, with the simulated time of their delivery.
template <typename M>
class ChannelTap {
 public:
  struct Received {
    absl::Duration at;  // since the graph's start
    std::shared_ptr<const M> message;
  };
  std::vector<Received> received() const {
    MutexLock lock(&mu_);
    return received_;
  }
  size_t size() const {
    MutexLock lock(&mu_);
    return received_.size();
  }

 private:
  friend class SimulatedGraph;
  void Add(absl::Duration at, std::shared_ptr<const M> m) {
    MutexLock lock(&mu_);
    received_.push_back({at, std::move(m)});
  }
  mutable Mutex mu_;
  std::vector<Received> received_ ABSL_GUARDED_BY(mu_);
};

class SimulatedGraph final : private ProcObserver {
 public:
  struct Options {
    std::string name = "sim";
    // The instant the simulation starts at (simulated; any value works).
    Instant start = Instant() + absl::Hours(1);
    absl::Duration tick = timer::kTimerResolution;
    // Scheduler conf (groups, task priorities); empty: one group.
    scheduler::SchedulerConfig config;
    // Wall time (steady clock) without progress after which a run or a
    // stop is stuck: reported, then the process aborts (see above).
    // InfiniteDuration(): never watched.
    // Zero or negative: an error is logged naming the value, and the
    // default is used.
    absl::Duration stuck_after = absl::Seconds(10);
    // Simulated time a stop may let pass while no component finishes its
    // shutdown (see above). InfiniteDuration(): no limit. Zero or
    // negative: an error is logged naming the value, and the default is
    // used.
    absl::Duration stop_time_limit = absl::Seconds(10);
    // The graph's link to other processes (null: none, the graph stays in
    // this process). On lockstep simulated time: a
    // lockstep::LockstepTransport, which holds what arrives until its
    // instant (cyber/lockstep/lockstep_process.h).
    std::shared_ptr<RemoteTransport> remote;
    // A recording to replay into the graph (see above); path "": none.
    RecordingInput recording;
  };

  SimulatedGraph() : SimulatedGraph(Options()) {}
  explicit SimulatedGraph(Options options);
  ~SimulatedGraph() override;  // Stop()
  SimulatedGraph(const SimulatedGraph&) = delete;
  SimulatedGraph& operator=(const SimulatedGraph&) = delete;

  // Loads and checks the graph files (errors as Launcher::Load: file, line,
  // field), then starts every component at the start instant and runs what
  // their Init() queued. Components' Init() runs on this thread with the
  // graph's clock and timer system ambient. With Options::recording, the
  // recording is read first (its errors name the file) and checked against
  // the graph's channels after the components' Init() (see above).
  absl::Status Launch(const std::vector<std::string>& dag_paths);

  // Runs the graph until the simulated clock reads `t` (every event due at
  // or before `t` has run, in order).
  void RunUntil(Instant t) { RunTo(t, nullptr); }
  // Runs what is ready at the present instant, then returns the next
  // planned event's instant (InfiniteFuture: none): what a lockstep
  // process reports to its coordinator.
  Instant NextPlanned();
  void RunFor(absl::Duration d) { RunUntil(Now() + d); }
  // Runs until `done()` is true (checked after every batch of events at one
  // instant) or `limit` of simulated time has passed; returns done().
  bool RunUntil(const std::function<bool()>& done, absl::Duration limit) {
    return RunTo(Now() + limit, done);
  }

  // Runs `action` as a routine of the graph when the clock reaches `at` —
  // fault injection: stop a component, write a message, ... It runs on the
  // first tick (Options::tick, 2 ms) at or after `at`, never earlier, for
  // any `at` from the present on: less than a tick ahead, or from a
  // present between ticks (after RunFor(1ms)), it runs on the next tick; at
  // the present on a tick (After(0) at the start) it runs in the current
  // step (called from a routine: before time moves on; between runs: at
  // the start of the next Run*()).
  // Order, the same every run: actions due at one tick run in the order of
  // their instants, then of their At() calls, and before the graph's other
  // work queued at that tick (a Proc() of the same instant included: they
  // are dispatched at the highest priority).
  // Errors: InvalidArgument for an instant in the past or an empty action;
  // OutOfRange beyond the wheel's maximum delay from now (~99 days at 2 ms);
  // FailedPrecondition after Stop(). Stop() drops actions not yet due and
  // waits for those running.
  absl::Status At(Instant at, std::function<void()> action);
  absl::Status After(absl::Duration delay, std::function<void()> action) {
    return At(Now() + delay, std::move(action));
  }

  // Collects every message written to `channel` from now on.
  // Errors: as Node::TryCreateReader (a channel of another type).
  template <typename M>
  absl::StatusOr<std::shared_ptr<ChannelTap<M>>> Tap(const std::string& channel);
  // Writes `message` on `channel` now (delivered in the next Run*()).
  template <typename M>
  absl::Status Write(const std::string& channel, const M& message);

  // Stops one component (as the launcher does at the end: its timer or
  // readers synchronously, then Clear()), between runs, serving the graph
  // meanwhile (see Stop() above). From inside an action, call
  // launcher().StopComponent() instead: the action's routine parks while
  // it waits. Errors: NotFound naming it.
  absl::Status StopComponent(const std::string& name);
  // Stops every component, then the scheduler and the wheel. Idempotent.
  void Stop();

  Instant Now() const { return clock_.Now(); }
  absl::Duration Elapsed() const { return Now() - start_; }
  // Every Proc() call so far, in the order they ran.
  std::vector<ProcEvent> Trace() const;
  // A digest of Trace() (every event's instant, component and outcome), 16
  // hex digits: two runs did the same when their digests are equal.
  // FNV-1a, 64 bits (trace_digest.cc).
  std::string TraceDigest() const;
  // The replay of Options::recording; null without one (or before Launch()).
  const RecordingReplay* replay() const { return replay_.get(); }
  // Per component, in start order; after Stop(), their final statistics.
  std::vector<ComponentStats> Stats() const {
    return stopped_ ? launcher_.FinalStats() : launcher_.Stats();
  }
  std::optional<ComponentStats> StatsOf(const std::string& component) const;
  // The launched component `name` as a T (Launcher::Find): valid until
  // Stop() destroys it; nothing runs between Run*() calls, so a test reads
  // and calls it freely there. Errors: NotFound naming the running
  // components (after Stop(): none), InvalidArgument naming its class.
  template <typename T>
  absl::StatusOr<T*> Find(const std::string& name) const {
    return launcher_.Find<T>(name);
  }

  SimulatedClock& clock() { return clock_; }
  timer::TimerSystem& driver() { return driver_; }
  // The graph's runtime: enter it (ScopedRuntime s(graph.runtime().scope()))
  // to run test code as graph code.
  Runtime& runtime() { return runtime_; }
  scheduler::Scheduler& scheduler() { return scheduler_; }
  ChannelBus& bus() { return bus_; }
  Launcher& launcher() { return launcher_; }

 private:
  void OnProc(const std::string& component, bool ok) override;
  // Runs queued routines and due expiries at the present instant until
  // nothing is left to do now; returns the next planned expiry.
  Instant Settle();
  // Settle(), then the recorded messages due at the present instant, one at
  // a time, each followed by Settle() (the ordering rule above); returns the
  // next planned expiry or recorded message.
  Instant SettleAndReplay();
  // Runs event by event until `end`, or until `done` (if given) holds after
  // an instant's events; returns whether it does.
  bool RunTo(Instant end, const std::function<bool()>& done);
  // Runs `blocking` on a helper thread while this thread runs the graph's
  // routines, until it returns (for stops that wait for running calls).
  // `what` names the stop in a report ("Stop()", "StopComponent()").
  void RunWhileServing(const char* what, const std::function<void()>& blocking);
  // The watch on the driving thread (simulated_graph.cc), and its report:
  // `what` has made no progress for `stuck_for`.
  class StuckWatch;
  // Prints the report; `why` follows "stuck: <what> " on its first line.
  void ReportStuck(const char* what, const std::string& why) const;

  const std::string name_;
  const Instant start_;
  const absl::Duration stop_time_limit_;
  SimulatedClock clock_;
  // The graph's runtime on clock_ (cyber/runtime/runtime.h), without
  // threads; the three references name its parts.
  Runtime runtime_;
  scheduler::Scheduler& scheduler_;
  timer::TimerSystem& driver_;
  ChannelBus& bus_;
  Launcher launcher_;
  std::shared_ptr<Node> tap_node_;
  // Options::recording (Launch() reads it) and the node that publishes it.
  const RecordingInput recording_input_;
  std::unique_ptr<RecordingReplay> replay_;
  std::shared_ptr<Node> replay_node_;
  // What At() was given (simulated_graph.cc); made by the first At().
  class Actions;
  std::shared_ptr<Actions> actions_;
  // Resumes at one instant before time moves on regardless (yield loops).
  static constexpr size_t kMaxResumesPerInstant = size_t{1} << 14;
  bool yield_loop_reported_ = false;
  std::atomic<bool> stopping_{false};  // read by At() from action routines
  bool stopped_ = false;
  mutable Mutex trace_mu_;
  std::vector<ProcEvent> trace_ ABSL_GUARDED_BY(trace_mu_);
  // Last: its thread (reading the members above) ends first.
  const std::unique_ptr<StuckWatch> watch_;
};

// --- templates ---------------------------------------------------------------

template <typename M>
absl::StatusOr<std::shared_ptr<ChannelTap<M>>> SimulatedGraph::Tap(
    const std::string& channel) {
  auto tap = std::make_shared<ChannelTap<M>>();
  // A deep queue: a tap never drops what it is shown.
  constexpr size_t kTapQueue = size_t{1} << 20;
  auto reader = tap_node_->TryCreateReader<M>(
      channel,
      [this, tap](const std::shared_ptr<const M>& m) { tap->Add(Elapsed(), m); },
      kTapQueue);
  if (!reader.ok()) return reader.status();
  return tap;
}

template <typename M>
absl::Status SimulatedGraph::Write(const std::string& channel, const M& message) {
  auto writer = tap_node_->TryCreateWriter<M>(channel);
  if (!writer.ok()) return writer.status();
  if (!(*writer)->Write(message)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "simulated graph: write to \"", channel, "\" refused"));
  }
  return absl::OkStatus();
}

}  // namespace cyber

#endif  // CYBER_SIMULATION_SIMULATED_GRAPH_H_
