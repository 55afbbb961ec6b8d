#include "cyber/simulation/simulated_graph.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "cyber/common/log.h"
#include "cyber/time/ambient_clock.h"

namespace cyber {

namespace {

scheduler::Scheduler::Options SchedulerOptions(const SimulatedGraph::Options& o) {
  scheduler::Scheduler::Options s;
  s.name = o.name;
  s.config = o.config.groups.empty() ? scheduler::DefaultSchedulerConfig(1) : o.config;
  s.run_threads = false;  // every routine runs on the driving thread
  return s;
}

timer::TickDriver::Options DriverOptions(const SimulatedGraph::Options& o) {
  timer::TickDriver::Options d;
  d.name = o.name + "-tick";
  d.tick = o.tick;
  d.run_thread = false;  // stepped by Settle()
  return d;
}

}  // namespace

SimulatedGraph::SimulatedGraph(Options options)
    : start_(options.start),
      clock_(options.start),
      scheduler_(SchedulerOptions(options)),
      driver_(&clock_, &scheduler_, DriverOptions(options)),
      launcher_(ComponentContext{&driver_, &scheduler_, &bus_, this}),
      tap_node_(std::make_shared<Node>(options.name + "_taps", &scheduler_, &bus_)) {
  scheduler_.SetTimerDriver(&driver_);
}

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
  }
}

bool SimulatedGraph::RunTo(Instant end, const std::function<bool()>& done) {
  const ScopedClockDriver driving(&clock_);
  while (true) {
    const Instant next = Settle();
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
  absl::Status s;
  RunWhileServing([&] { s = launcher_.StopComponent(name); });
  return s;
}

void SimulatedGraph::Stop() {
  if (stopped_) return;
  // Actions queued for now run first; no action may add another from here.
  stopping_.store(true);
  {
    const ScopedClockDriver driving(&clock_);
    Settle();
  }
  stopped_ = true;
  RunWhileServing([this] {
    for (auto& a : actions_) a->Stop();
    launcher_.Stop();
    tap_node_->Shutdown();
  });
  scheduler_.Shutdown();  // unwinds what is left, on this thread
  driver_.Shutdown();
}

void SimulatedGraph::RunWhileServing(const std::function<void()>& blocking) {
  std::atomic<bool> done{false};
  std::thread helper([&] {
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
    }
  }
  helper.join();
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
