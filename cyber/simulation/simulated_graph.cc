#include "cyber/simulation/simulated_graph.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cyber/common/log.h"
#include "cyber/mainboard/stuck_report.h"
#include "cyber/time/current_clock.h"
#include "cyber/time/wait_list.h"
#include "scheduler/config/scheduler_config.h"
#include "timer/timer_system_core.h"
#include "timer/timer_stop_registry.h"

namespace cyber {

namespace {

Runtime::Options RuntimeOptions(const SimulatedGraph::Options& o,
                                SimulatedClock* clock) {
  Runtime::Options r;
  r.name = o.name;
  r.clock = clock;
  r.config = o.config;  // empty: one group
  r.tick = o.tick;
  // No processor threads and no tick thread: every routine runs on the
  // driving thread, and Settle() steps the wheel.
  r.run_threads = false;
  r.remote = o.remote;
  return r;
}

}  // namespace

// Watches the driving thread (see "A deadlock fails at once" in the
// header): a thread that polls, on the steady clock, whether the driving
// thread makes progress, while a Scope says what the driving thread does.
// Progress is a count the driving thread bumps (Progress(), and every Scope
// entered or left) plus, in a Scope that says so, the scheduler's resumes
// (Scheduler::Stats::switches: one per routine that returned or suspended),
// so a run of many routines at one instant is watched routine by routine.
// Started at the first Scope, so a graph that never runs has no thread.
class SimulatedGraph::StuckWatch {
 public:
  StuckWatch(const SimulatedGraph* graph, const scheduler::Scheduler* scheduler,
             absl::Duration stuck_after)
      : graph_(graph), scheduler_(scheduler), stuck_after_(stuck_after) {}
  ~StuckWatch() {
    {
      MutexLock lock(&mu_);
      exit_ = true;
      cv_.SignalAll();
    }
    if (thread_.joinable()) thread_.join();
  }

  // Whether each routine the scheduler resumes counts as progress, or only
  // what the driving thread reports (Progress()).
  enum class Resumes { kAreProgress, kAreNot };

  // The driving thread does `what` while this lives (nested: the innermost
  // is named and says how resumes count). `what` is a string literal.
  class Scope {
   public:
    Scope(StuckWatch* watch, const char* what, Resumes resumes)
        : watch_(watch),
          outer_(watch->Enter({what, resumes == Resumes::kAreProgress})) {}
    ~Scope() { watch_->Enter(outer_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StuckWatch* const watch_;
    const std::pair<const char*, bool> outer_;
  };

  // Something happened: a routine ran, time moved, a component stopped.
  void Progress() { progress_.fetch_add(1, std::memory_order_relaxed); }

 private:
  using SteadyClock = std::chrono::steady_clock;

  // Installs (what, resumes count) and returns the previous pair.
  std::pair<const char*, bool> Enter(std::pair<const char*, bool> scope) {
    if (!thread_.joinable() && stuck_after_ != absl::InfiniteDuration()) {
      thread_ = std::thread([this] { Watch(); });
    }
    Progress();
    const bool outer_counts =
        resumes_count_.exchange(scope.second, std::memory_order_relaxed);
    return {what_.exchange(scope.first, std::memory_order_relaxed), outer_counts};
  }

  uint64_t ProgressNow() const {
    uint64_t p = progress_.load(std::memory_order_relaxed);
    if (resumes_count_.load(std::memory_order_relaxed)) p += scheduler_->stats().switches;
    return p;
  }

  void Watch() {
    const auto poll = absl::ToChronoNanoseconds(
        std::max(stuck_after_ / 8, absl::Milliseconds(1)));
    uint64_t seen = ProgressNow();
    SteadyClock::time_point last_change = SteadyClock::now();
    MutexLock lock(&mu_);
    while (!exit_) {
      cv_.WaitUntil(&mu_, SteadyClock::now() + poll);
      if (exit_) return;
      const SteadyClock::time_point now = SteadyClock::now();
      const char* const what = what_.load(std::memory_order_relaxed);
      const uint64_t progress = ProgressNow();
      if (what == nullptr || progress != seen) {
        seen = progress;
        last_change = now;
        continue;
      }
      const absl::Duration stuck_for = absl::FromChrono(now - last_change);
      if (stuck_for >= stuck_after_) {
        // The driving thread (or the stop's helper) will not come back: say
        // what is known, and end the process so that a test fails now.
        graph_->ReportStuck(
            what, absl::StrCat(
                      "has made no progress for ",
                      absl::FormatDuration(absl::Trunc(stuck_for, absl::Milliseconds(1))),
                      " of wall time (SimulatedGraph::Options::stuck_after)"));
        std::abort();
      }
    }
  }

  const SimulatedGraph* const graph_;
  const scheduler::Scheduler* const scheduler_;
  const absl::Duration stuck_after_;
  std::atomic<const char*> what_{nullptr};  // null: nothing watched
  std::atomic<bool> resumes_count_{false};
  std::atomic<uint64_t> progress_{0};
  Mutex mu_;
  CondVar cv_;
  bool exit_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // the driving thread starts it; joined at the end
};

namespace {

// Options::stuck_after and stop_time_limit, with bad values reported and
// replaced by the defaults (a constructor has no Status to return).
absl::Duration CheckedStuckAfter(const SimulatedGraph::Options& o) {
  if (o.stuck_after > absl::ZeroDuration()) return o.stuck_after;
  const absl::Duration fallback = SimulatedGraph::Options().stuck_after;
  AERROR << "simulated graph \"" << o.name << "\": Options::stuck_after "
         << absl::FormatDuration(o.stuck_after)
         << " is not positive (InfiniteDuration() turns the watch off); using "
         << absl::FormatDuration(fallback);
  return fallback;
}

absl::Duration CheckedStopTimeLimit(const SimulatedGraph::Options& o) {
  if (o.stop_time_limit > absl::ZeroDuration()) return o.stop_time_limit;
  const absl::Duration fallback = SimulatedGraph::Options().stop_time_limit;
  AERROR << "simulated graph \"" << o.name << "\": Options::stop_time_limit "
         << absl::FormatDuration(o.stop_time_limit)
         << " is not positive (InfiniteDuration(): no limit); using "
         << absl::FormatDuration(fallback);
  return fallback;
}

// Whether thread `tid` of this process sleeps in the kernel (state S or D
// in /proc/self/task/<tid>/stat): it waits for something, where a thread
// that runs or is ready to (preempted on a loaded machine) is R. False when
// it cannot be told.
bool ThreadSleeps(pid_t tid) {
  if (tid <= 0) return false;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/stat", static_cast<int>(tid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // "<tid> (<name>) <state> ...": the name may hold spaces and parentheses.
  const char* const name_end = std::strrchr(buf, ')');
  if (name_end == nullptr || name_end + 2 >= buf + n) return false;
  const char state = name_end[2];
  return state == 'S' || state == 'D';
}

}  // namespace

SimulatedGraph::SimulatedGraph(Options options)
    : name_(options.name),
      start_(options.start),
      stop_time_limit_(CheckedStopTimeLimit(options)),
      clock_(options.start),
      runtime_(RuntimeOptions(options, &clock_)),
      scheduler_(*runtime_.scheduler()),
      driver_(*runtime_.timers()),
      bus_(*runtime_.bus()),
      launcher_(ComponentContext{&runtime_, this}),
      tap_node_(std::make_shared<Node>(options.name + "_taps", &scheduler_, &bus_)),
      recording_input_(options.recording),
      watch_(std::make_unique<StuckWatch>(this, &scheduler_, CheckedStuckAfter(options))) {}

SimulatedGraph::~SimulatedGraph() { Stop(); }

absl::Status SimulatedGraph::Launch(const std::vector<std::string>& dag_paths) {
  const ScopedClockDriver driving(&clock_);
  if (!recording_input_.path.empty()) {
    absl::StatusOr<std::unique_ptr<RecordingReplay>> replay =
        RecordingReplay::Load(recording_input_, start_);
    if (!replay.ok()) return replay.status();
    replay_ = *std::move(replay);
    replay_node_ = std::make_shared<Node>(name_ + "_replay", &scheduler_, &bus_);
    // Once the components' readers have fixed the channels' types, and
    // before the launcher's check, which then sees the replay's writers.
    launcher_.set_after_init([this] { return replay_->Attach(replay_node_.get()); });
  }
  absl::Status s = launcher_.Load(dag_paths);
  if (!s.ok()) return s;
  // Init() runs graph code with the graph's timer system, clock and
  // scheduler ambient (the launcher installs its context's).
  s = launcher_.Start();
  Settle();
  return s;
}

Instant SimulatedGraph::Settle() {
  size_t resumes = 0;
  while (true) {
    const Instant next = driver_.Step(clock_.Now());  // due calls queue
    if (!scheduler_.HasReady()) return next;
    if (resumes >= kMaxResumesPerInstant) {
      // Routines that loop on Yield() keep themselves ready forever; on a
      // robot, time would pass meanwhile. Everything ready now runs once
      // more (a call the last step queued included), then time moves on to
      // the next planned event; the loopers run again at every instant.
      scheduler_.RunReady(scheduler_.queued());
      if (!yield_loop_reported_) {
        yield_loop_reported_ = true;
        AWARN << "simulated graph: routines still ready after " << resumes
              << " resumes at " << absl::FormatDuration(Elapsed())
              << " (a loop on Yield()?): simulated time moves on to the next "
                 "planned event";
      }
      return driver_.Step(clock_.Now());
    }
    // Each routine that returns is progress (the watch counts resumes).
    resumes += scheduler_.RunReady(kMaxResumesPerInstant - resumes);
  }
}

Instant SimulatedGraph::SettleAndReplay() {
  Instant next = Settle();
  if (replay_ == nullptr) return next;
  while (replay_->DeliverNext(clock_.Now())) next = Settle();
  return std::min(next, replay_->NextInstant());
}

Instant SimulatedGraph::NextPlanned() {
  const StuckWatch::Scope watched(watch_.get(), "NextPlanned()", StuckWatch::Resumes::kAreProgress);
  const ScopedClockDriver driving(&clock_);
  const Instant next = SettleAndReplay();
  watch_->Progress();
  return next;
}

bool SimulatedGraph::RunTo(Instant end, const std::function<bool()>& done) {
  const StuckWatch::Scope watched(watch_.get(), "RunFor()/RunUntil()",
                                  StuckWatch::Resumes::kAreProgress);
  const ScopedClockDriver driving(&clock_);
  while (true) {
    const Instant next = SettleAndReplay();
    watch_->Progress();
    if (done && done()) return true;
    // Nothing planned: nothing will ever change again.
    if (next > end || next == Instant::InfiniteFuture()) break;
    clock_.AdvanceTo(std::max(next, clock_.Now()));
  }
  if (end > clock_.Now() && end != Instant::InfiniteFuture()) {
    clock_.AdvanceTo(end);
    SettleAndReplay();
  }
  return done && done();
}

// The actions At() was given, and the one wheel entry that runs them.
//
// Why not a Timer per action: a Timer refuses a delay below one tick (its
// rule, owned elsewhere), and the wheel does not order the entries of one
// tick. Here the pending actions wait in a map ordered by (instant, call),
// and the entry is armed for the first of them; when it expires (in the
// driver's Step(), on the driving thread) every action whose tick has come
// is dispatched in that order, and the entry is re-armed for the next. An
// action whose tick is the present (the present on a tick, at() == now) is
// dispatched at once, behind those due with it.
//
// Dispatched at the highest priority, so an action runs before the graph's
// other work queued at its tick (a Proc() of the same instant included);
// actions keep their order among themselves (FIFO within a level).
//
// Threads: the driving thread calls Add() and OnExpired(); the stop's
// helper calls StopAndWait() while the driving thread runs routines.
class SimulatedGraph::Actions final : public timer::ExpiryTargetOf<Actions> {
 public:
  Actions(timer::TimerSystem* driver, scheduler::Scheduler* scheduler)
      : driver_(driver), scheduler_(scheduler) {}

  // Runs `action` on the first tick at or after `at`. `name` names it in
  // logs. REQUIRES: at >= the present, at most the wheel's maximum delay
  // after it (At() checks). Errors: as TimerSystem::Arm, FailedPrecondition
  // after StopAndWait().
  absl::Status Add(Instant at, std::string name, std::function<void()> action) {
    std::vector<Pending> due;
    {
      MutexLock lock(&mu_);
      if (stopped_) {
        return absl::FailedPreconditionError(name + ": the graph is stopping");
      }
      const Key key{at, next_seq_++};
      pending_.emplace(key, Pending{std::move(name), std::move(action)});
      const Instant now = driver_->clock()->Now();
      if (driver_->system()->FireInstant(at) <= now) {
        TakeDue(now, &due);  // its tick is the present: now, in order
      } else {
        const absl::Status armed = ArmForFirst();
        if (!armed.ok()) {
          pending_.erase(key);
          return armed;
        }
      }
    }
    Dispatch(&due);
    return absl::OkStatus();
  }

  // The tick of the first pending action (or a stale arming) has come.
  void OnExpired(uint32_t /*arm_seq*/) {
    std::vector<Pending> due;
    {
      MutexLock lock(&mu_);
      TakeDue(driver_->clock()->Now(), &due);
      if (!ArmForFirst().ok()) {
        // Only a shut-down driver refuses an instant At() accepted; nothing
        // will run any more anyway.
        AERROR << "simulated graph: " << pending_.size()
               << " actions will not run (the timer system is shut down)";
      }
    }
    Dispatch(&due);
  }

  // Drops the pending actions, then waits until the dispatched ones have
  // run (the driving thread runs them meanwhile; a WaitList, so the
  // driving thread sees that the stop waits for them). Call from another
  // thread. Leaves the entry disarmed, as its destruction requires.
  void StopAndWait() {
    std::map<Key, Pending> dropped;  // destroyed outside mu_ (user captures)
    MutexLock lock(&mu_);
    stopped_ = true;
    dropped.swap(pending_);
    driver_->Cancel(this);
    while (in_flight_ > 0) all_done_.Wait(&mu_);
  }

 private:
  // Ordered by instant, then by the order of the At() calls.
  struct Key {
    Instant at;
    uint64_t seq;
    bool operator<(const Key& o) const {
      return at < o.at || (at == o.at && seq < o.seq);
    }
  };
  struct Pending {
    std::string name;
    std::function<void()> action;
  };
  // Held by a dispatched action until it has run or been dropped.
  class InFlight {
   public:
    explicit InFlight(std::shared_ptr<Actions> actions) : actions_(std::move(actions)) {
      MutexLock lock(&actions_->mu_);
      ++actions_->in_flight_;
    }
    ~InFlight() {
      MutexLock lock(&actions_->mu_);
      if (--actions_->in_flight_ == 0) actions_->all_done_.WakeAll();
    }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    const std::shared_ptr<Actions> actions_;
  };

  // Moves the actions whose tick is at or before `now` to `due`, in order.
  void TakeDue(Instant now, std::vector<Pending>* due) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const timer::TimerSystemCore& front = *driver_->system();
    auto it = pending_.begin();
    for (; it != pending_.end() && front.FireInstant(it->first.at) <= now; ++it) {
      due->push_back(std::move(it->second));
    }
    pending_.erase(pending_.begin(), it);
  }

  // Arms the entry for the first pending action (re-arming moves it), or
  // cancels it if none is left.
  absl::Status ArmForFirst() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (pending_.empty()) {
      driver_->Cancel(this);
      return absl::OkStatus();
    }
    return driver_->Arm(this, pending_.begin()->first.at).status();
  }

  // Outside mu_: the scheduler only queues, but takes its own locks.
  void Dispatch(std::vector<Pending>* due) {
    if (due->empty()) return;
    const std::shared_ptr<Actions> self =
        std::static_pointer_cast<Actions>(shared_from_this());
    for (Pending& p : *due) {
      auto in_flight = std::make_shared<InFlight>(self);
      const bool accepted = scheduler_->Dispatch(
          [action = std::move(p.action), in_flight = std::move(in_flight)] { action(); },
          scheduler::kMaxTaskPriority);
      if (!accepted) {
        AERROR << p.name << ": refused by the scheduler; the action does not run";
      }
    }
    due->clear();
  }

  timer::TimerSystem* const driver_;
  scheduler::Scheduler* const scheduler_;
  Mutex mu_;
  WaitList all_done_ ABSL_GUARDED_BY(mu_);
  std::map<Key, Pending> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

absl::Status SimulatedGraph::At(Instant at, std::function<void()> action) {
  const std::string graph = absl::StrCat("simulated graph \"", name_, "\": ");
  if (stopping_.load()) {
    return absl::FailedPreconditionError(graph + "At() after Stop()");
  }
  const std::string what =
      absl::StrCat(graph, "At(", absl::FormatDuration(at - start_), " since start): ");
  if (!action) return absl::InvalidArgumentError(what + "action is empty");
  const absl::Duration ahead = at - clock_.Now();
  if (ahead < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, "that instant has passed (now ", absl::FormatDuration(Elapsed()),
        " since start)"));
  }
  if (ahead > driver_.max_delay()) {
    return absl::OutOfRangeError(absl::StrCat(
        what, absl::FormatDuration(ahead), " from now is beyond the timing wheel's maximum delay ",
        absl::FormatDuration(driver_.max_delay())));
  }
  // Made at the first action (on the driving thread, like every At()).
  if (!actions_) actions_ = std::make_shared<Actions>(&driver_, &scheduler_);
  return actions_->Add(at, absl::StrCat(graph, "action at ", absl::FormatDuration(at - start_)),
                       std::move(action));
}

absl::Status SimulatedGraph::StopComponent(const std::string& name) {
  const StuckWatch::Scope watched(watch_.get(), "StopComponent()",
                                  StuckWatch::Resumes::kAreNot);
  absl::Status s;
  RunWhileServing("StopComponent()", [&] { s = launcher_.StopComponent(name); });
  return s;
}

void SimulatedGraph::Stop() {
  if (stopped_) return;
  const StuckWatch::Scope watched(watch_.get(), "Stop()", StuckWatch::Resumes::kAreNot);
  // Actions queued for now run first; no action may add another from here.
  stopping_.store(true);
  {
    const StuckWatch::Scope settling(watch_.get(), "Stop()", StuckWatch::Resumes::kAreProgress);
    const ScopedClockDriver driving(&clock_);
    Settle();
  }
  stopped_ = true;
  RunWhileServing("Stop()", [this] {
    if (actions_) actions_->StopAndWait();
    launcher_.Stop();
    tap_node_->Shutdown();
    if (replay_node_ != nullptr) replay_node_->Shutdown();
  });
  scheduler_.Shutdown();  // unwinds what is left, on this thread
  driver_.Shutdown();
}

void SimulatedGraph::RunWhileServing(const char* stop_what,
                                     const std::function<void()>& blocking) {
  std::atomic<bool> done{false};
  // True while the helper waits in a WaitList: a synchronous stop (a
  // Timer's, a reader's, a service's, Actions::StopAndWait) waiting for a
  // call of the graph (cyber/time/wait_list.h, ScopedWaitReport).
  std::atomic<bool> waits_for_graph{false};
  std::atomic<pid_t> helper_tid{0};
  std::thread helper([&] {
    pthread_setname_np(pthread_self(), "sim-stop");  // named in stop reports
    helper_tid.store(static_cast<pid_t>(syscall(SYS_gettid)), std::memory_order_release);
    {
      const ScopedWaitReport report(&waits_for_graph);
      blocking();
    }
    done.store(true, std::memory_order_release);
  });
  const ScopedClockDriver driving(&clock_);
  // Simulated time moves only when nothing of the graph can run now and
  // the helper waits (see the header): at once when it waits for the
  // graph; when it waits for something else (a future, a condition
  // variable, a lock, a sleep), once a poll has brought no routine and its
  // thread sleeps in the kernel.
  constexpr absl::Duration kHelperPoll = absl::Milliseconds(1);
  bool helper_sleeps = false;  // found asleep after the last poll
  // Since when (simulated) no component has finished its shutdown.
  size_t not_stopped = launcher_.ComponentsLeftToStop();
  Instant no_stop_since = clock_.Now();
  size_t resumes_at_instant = 0;
  auto note_stops = [&] {
    const size_t now_not_stopped = launcher_.ComponentsLeftToStop();
    // The count rises once, when the helper begins the stop.
    if (now_not_stopped < not_stopped) {
      no_stop_since = clock_.Now();
      watch_->Progress();
    }
    not_stopped = now_not_stopped;
  };
  while (!done.load(std::memory_order_acquire)) {
    // 1. The graph's work at the present instant, a routine at a time:
    // each one that returns or suspends is progress (a yield loop, beyond
    // kMaxResumesPerInstant at one instant, is not, and time moves on).
    const bool budget_left = resumes_at_instant < kMaxResumesPerInstant;
    if (scheduler_.RunOneReady(absl::ZeroDuration())) {
      if (budget_left) {
        ++resumes_at_instant;
        watch_->Progress();
        helper_sleeps = false;
        continue;
      }
    }
    const Instant next = driver_.Step(clock_.Now());  // due calls queue
    if (budget_left && scheduler_.HasReady()) continue;
    note_stops();
    // 2. Nothing to run now (or a yield loop spent the instant): time
    // moves on if the helper waits, or past the yield loop.
    const bool helper_waits =
        waits_for_graph.load(std::memory_order_acquire) || helper_sleeps;
    if ((helper_waits || !budget_left) && next != Instant::InfiniteFuture()) {
      clock_.AdvanceTo(std::max(next, clock_.Now()));
      resumes_at_instant = 0;
      helper_sleeps = false;
      watch_->Progress();  // time moving with routines to run is progress
      if (stop_time_limit_ != absl::InfiniteDuration() &&
          clock_.Now() - no_stop_since >= stop_time_limit_ &&
          !done.load(std::memory_order_acquire)) {
        ReportStuck(stop_what,
                    absl::StrCat("has let ", absl::FormatDuration(clock_.Now() - no_stop_since),
                                 " of simulated time pass (SimulatedGraph::Options::"
                                 "stop_time_limit) while no component finished its shutdown"));
        std::abort();
      }
      continue;
    }
    if (!budget_left) continue;  // the yield loop runs on; not progress
    // 3. The helper runs, or waits for something outside the graph (or for
    // a call nothing will ever make: the watch reports it): wait for a
    // routine it queues, or its end; then look whether it sleeps.
    if (scheduler_.RunOneReady(kHelperPoll)) {
      ++resumes_at_instant;
      watch_->Progress();
      helper_sleeps = false;
      continue;
    }
    helper_sleeps = !done.load(std::memory_order_acquire) &&
                    ThreadSleeps(helper_tid.load(std::memory_order_acquire));
  }
  helper.join();
}

void SimulatedGraph::ReportStuck(const char* what, const std::string& why) const {
  const std::string prefix = absl::StrCat("simulated graph \"", name_, "\": ");
  const Launcher::StopProgress progress = launcher_.StopInProgress();
  const std::vector<timer::StopInProgress> stops = timer::StopsInProgress();
  std::string report = absl::StrCat(
      prefix, "stuck: ", what, " ", why, " at ", absl::FormatDuration(Elapsed()),
      " of simulated time\n",
      StuckReport(progress, stops, prefix));
  if (progress.not_stopped.empty() && stops.empty()) {
    absl::StrAppend(&report, prefix,
                    "the driving thread has not come back from a routine (or a component's "
                    "Init()/Clear()): one that blocks the thread (a lock held by a suspended "
                    "routine, a future or condition another routine would satisfy) blocks "
                    "the whole graph, which has only this thread\n");
  }
  absl::StrAppend(&report, Launcher::SummaryTable(progress.stats.empty() ? launcher_.Stats()
                                                                         : progress.stats),
                  prefix, "aborting: the graph cannot go on\n");
  std::fprintf(stderr, "%s", report.c_str());
  std::fflush(stderr);
}

void SimulatedGraph::OnProc(const std::string& component, bool ok) {
  const absl::Duration at = Elapsed();
  MutexLock lock(&trace_mu_);
  trace_.push_back({at, component, ok});
}

std::vector<ProcEvent> SimulatedGraph::Trace() const {
  MutexLock lock(&trace_mu_);
  return trace_;
}

std::optional<ComponentStats> SimulatedGraph::StatsOf(const std::string& component) const {
  for (ComponentStats& s : Stats()) {
    if (s.name == component) return std::move(s);
  }
  return std::nullopt;
}

}  // namespace cyber
