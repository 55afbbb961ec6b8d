#include "cyber/simulation/simulated_graph.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cyber/common/log.h"
#include "cyber/mainboard/stuck_report.h"
#include "cyber/time/ambient_clock.h"
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
  return r;
}

}  // namespace

// Watches the driving thread (see "A deadlock fails at once" in the
// header): a thread that polls, on the steady clock, a progress count the
// driving thread bumps (Progress(), and every Scope entered or left), while
// a Scope says what the driving thread does. Started at the first Scope, so
// a graph that never runs has no thread.
class SimulatedGraph::StuckWatch {
 public:
  StuckWatch(const SimulatedGraph* graph, absl::Duration stuck_after)
      : graph_(graph), stuck_after_(stuck_after) {}
  ~StuckWatch() {
    {
      MutexLock lock(&mu_);
      exit_ = true;
      cv_.SignalAll();
    }
    if (thread_.joinable()) thread_.join();
  }

  // The driving thread does `what` while this lives (nested: the innermost
  // is named). `what` is a string literal.
  class Scope {
   public:
    Scope(StuckWatch* watch, const char* what) : watch_(watch), outer_(watch->Enter(what)) {}
    ~Scope() { watch_->Enter(outer_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StuckWatch* const watch_;
    const char* const outer_;
  };

  // Something happened: a batch of routines ran, time moved.
  void Progress() { progress_.fetch_add(1, std::memory_order_relaxed); }

 private:
  using SteadyClock = std::chrono::steady_clock;

  const char* Enter(const char* what) {
    if (!thread_.joinable() && stuck_after_ != absl::InfiniteDuration()) {
      thread_ = std::thread([this] { Watch(); });
    }
    Progress();
    return what_.exchange(what, std::memory_order_relaxed);
  }

  void Watch() {
    const auto poll = absl::ToChronoNanoseconds(
        std::max(stuck_after_ / 8, absl::Milliseconds(1)));
    uint64_t seen = progress_.load(std::memory_order_relaxed);
    SteadyClock::time_point last_change = SteadyClock::now();
    MutexLock lock(&mu_);
    while (!exit_) {
      cv_.WaitUntil(&mu_, SteadyClock::now() + poll);
      if (exit_) return;
      const SteadyClock::time_point now = SteadyClock::now();
      const char* const what = what_.load(std::memory_order_relaxed);
      const uint64_t progress = progress_.load(std::memory_order_relaxed);
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
  const absl::Duration stuck_after_;
  std::atomic<const char*> what_{nullptr};  // null: nothing watched
  std::atomic<uint64_t> progress_{0};
  Mutex mu_;
  CondVar cv_;
  bool exit_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // the driving thread starts it; joined at the end
};

namespace {

// Options::stuck_after and stop_time_steps, with bad values reported and
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

int CheckedStopTimeSteps(const SimulatedGraph::Options& o) {
  if (o.stop_time_steps >= 1) return o.stop_time_steps;
  const int fallback = SimulatedGraph::Options().stop_time_steps;
  AERROR << "simulated graph \"" << o.name << "\": Options::stop_time_steps "
         << o.stop_time_steps << " is below 1; using " << fallback;
  return fallback;
}

}  // namespace

SimulatedGraph::SimulatedGraph(Options options)
    : name_(options.name),
      start_(options.start),
      stop_time_steps_(CheckedStopTimeSteps(options)),
      clock_(options.start),
      runtime_(RuntimeOptions(options, &clock_)),
      scheduler_(*runtime_.scheduler()),
      driver_(*runtime_.timers()),
      bus_(*runtime_.bus()),
      launcher_(ComponentContext{&driver_, &scheduler_, &bus_, this}),
      tap_node_(std::make_shared<Node>(options.name + "_taps", &scheduler_, &bus_)),
      watch_(std::make_unique<StuckWatch>(this, CheckedStuckAfter(options))) {}

SimulatedGraph::~SimulatedGraph() { Stop(); }

absl::Status SimulatedGraph::Launch(const std::vector<std::string>& dag_paths) {
  const ScopedClockDriver driving(&clock_);
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
    resumes += scheduler_.RunReady(kMaxResumesPerInstant - resumes);
    watch_->Progress();
  }
}

bool SimulatedGraph::RunTo(Instant end, const std::function<bool()>& done) {
  const StuckWatch::Scope watched(watch_.get(), "RunFor()/RunUntil()");
  const ScopedClockDriver driving(&clock_);
  while (true) {
    const Instant next = Settle();
    watch_->Progress();
    if (done && done()) return true;
    // Nothing planned: nothing will ever change again.
    if (next > end || next == Instant::InfiniteFuture()) break;
    clock_.AdvanceTo(std::max(next, clock_.Now()));
  }
  if (end > clock_.Now() && end != Instant::InfiniteFuture()) {
    clock_.AdvanceTo(end);
    Settle();
  }
  return done && done();
}

absl::Status SimulatedGraph::At(Instant at, std::function<void()> action) {
  if (stopping_.load()) {
    return absl::FailedPreconditionError("simulated graph: At() after Stop()");
  }
  const std::string what =
      absl::StrCat("simulated graph: At(", absl::FormatDuration(at - start_), " since start): ");
  if (!action) return absl::InvalidArgumentError(what + "action is empty");
  const absl::Duration delay = at - clock_.Now();
  if (delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, "that instant has passed (now ", absl::FormatDuration(Elapsed()), ")"));
  }
  if (delay == absl::ZeroDuration()) {
    if (!scheduler_.Dispatch(std::move(action), 0)) {
      return absl::FailedPreconditionError("simulated graph: At(now): scheduler refused");
    }
    return absl::OkStatus();
  }
  TimerOptions o;
  o.name = absl::StrCat("sim_action@", absl::FormatDuration(at - start_));
  o.period = delay;  // a oneshot's delay rounds up to a tick: never early
  o.oneshot = true;
  o.callback = std::move(action);
  auto t = std::make_unique<Timer>(std::move(o), &driver_);
  absl::Status s = t->Schedule();
  if (!s.ok()) return s;
  actions_.push_back(std::move(t));
  return absl::OkStatus();
}

absl::Status SimulatedGraph::StopComponent(const std::string& name) {
  const StuckWatch::Scope watched(watch_.get(), "StopComponent()");
  absl::Status s;
  RunWhileServing("StopComponent()", [&] { s = launcher_.StopComponent(name); });
  return s;
}

void SimulatedGraph::Stop() {
  if (stopped_) return;
  const StuckWatch::Scope watched(watch_.get(), "Stop()");
  // Actions queued for now run first; no action may add another from here.
  stopping_.store(true);
  {
    const ScopedClockDriver driving(&clock_);
    Settle();
  }
  stopped_ = true;
  RunWhileServing("Stop()", [this] {
    for (auto& a : actions_) a->Stop();
    launcher_.Stop();
    tap_node_->Shutdown();
  });
  scheduler_.Shutdown();  // unwinds what is left, on this thread
  driver_.Shutdown();
}

void SimulatedGraph::RunWhileServing(const char* stop_what,
                                     const std::function<void()>& blocking) {
  std::atomic<bool> done{false};
  std::thread helper([&] {
    pthread_setname_np(pthread_self(), "sim-stop");  // named in stop reports
    blocking();
    done.store(true, std::memory_order_release);
  });
  // Stops wait for running calls; those run here. A call suspended until a
  // later instant (SleepFor in a Proc) needs time to pass: only when nothing
  // has been runnable for 100 ms of real time does the clock move to the
  // next expiry, so an ordinary stop changes no count. (Not deterministic in
  // general: a stop that is merely slow lets time pass too. Hence counts and
  // traces are taken at the end of the run, before Stop().)
  const ScopedClockDriver driving(&clock_);
  int idle_polls = 0;
  constexpr int kIdlePollsBeforeTimePasses = 100;
  // Time moving is progress, but not for ever: a stop that lets time move
  // stop_time_steps_ times while no component finishes its shutdown waits
  // for something that waits for it (see the header).
  size_t not_stopped = launcher_.ComponentsLeftToStop();
  int steps_without_a_stop = 0;
  while (!done.load(std::memory_order_acquire)) {
    if (scheduler_.RunOneReady(absl::Milliseconds(1))) {
      idle_polls = 0;
      continue;
    }
    if (++idle_polls < kIdlePollsBeforeTimePasses) continue;
    idle_polls = 0;
    const Instant next = driver_.Step(clock_.Now());
    if (!scheduler_.HasReady() && next != Instant::InfiniteFuture()) {
      clock_.AdvanceTo(std::max(next, clock_.Now()));
      // Only time moving counts as a stop's progress: routines that run
      // at one instant for ever (a yield loop) do not finish a stop.
      watch_->Progress();
      const size_t now_not_stopped = launcher_.ComponentsLeftToStop();
      if (now_not_stopped != not_stopped) {
        not_stopped = now_not_stopped;
        steps_without_a_stop = 0;
      } else if (++steps_without_a_stop >= stop_time_steps_ &&
                 !done.load(std::memory_order_acquire)) {
        ReportStuck(stop_what, absl::StrCat("has let simulated time move ",
                                            steps_without_a_stop,
                                            " times (SimulatedGraph::Options::stop_time_steps) "
                                            "while no component finished its shutdown"));
        std::abort();
      }
    }
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
