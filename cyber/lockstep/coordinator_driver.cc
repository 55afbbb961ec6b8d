#include "cyber/common/steady_time.h"
#include "cyber/lockstep/coordinator_driver.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/common/log.h"
#include "cyber/lockstep/inline_scope.h"
#include "cyber/lockstep/topics.h"

namespace cyber {
namespace lockstep {
absl::StatusOr<std::unique_ptr<CoordinatorDriver>> CoordinatorDriver::Start(
    std::shared_ptr<RemoteTransport> transport, CoordinatorDriverOptions options) {
  if (options.speed < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("lockstep coordinator: option speed is ", options.speed, "; 0 (as fast as possible) or more"));
  }
  if (transport == nullptr) return absl::InvalidArgumentError("lockstep coordinator: no transport");
  absl::StatusOr<Coordinator> c = Coordinator::Create(options.coordinator, SteadyNow());
  if (!c.ok()) return c.status();
  std::unique_ptr<CoordinatorDriver> d(
      new CoordinatorDriver(std::move(transport), std::move(options), *std::move(c)));
  absl::StatusOr<std::shared_ptr<RemotePublisher>> out = d->transport_->Publisher(GrantEndpoint("lockstep"));
  if (!out.ok()) return out.status();
  d->grants_ = *std::move(out);
  std::shared_ptr<Inbox> inbox = d->inbox_;
  // The destructor closes the subscription (waiting for a call in
  // progress) before anything else of the driver goes.
  CoordinatorDriver* self = d.get();
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> in =
      d->transport_->Subscribe(ReportEndpoint("lockstep"), [self, inbox](const RemoteSample& s) {
        Report r;
        if (!r.ParseFromArray(s.payload.data(), static_cast<int>(s.payload.size()))) return false;
        {
          MutexLock lock(&inbox->mu);
          inbox->reports.push_back(std::move(r));
        }
        self->AdvanceFromReport();
        return true;
      });
  if (!in.ok()) return in.status();
  d->reports_ = *std::move(in);
  d->lost_listener_ = d->transport_->AddPeerLostListener([inbox](const RemotePeer& peer, bool) {
    MutexLock lock(&inbox->mu);
    inbox->lost.push_back(peer.process);
    inbox->wake_run = true;
    inbox->changed.SignalAll();
  });
  return d;
}

CoordinatorDriver::CoordinatorDriver(std::shared_ptr<RemoteTransport> transport,
                                     CoordinatorDriverOptions options, Coordinator coordinator)
    : transport_(std::move(transport)), options_(std::move(options)), coordinator_(std::move(coordinator)) {}

CoordinatorDriver::~CoordinatorDriver() {
  reports_.reset();  // first: its handler reaches this object
  transport_->RemovePeerLostListener(lost_listener_);
}

void CoordinatorDriver::WakeRun() {
  MutexLock lock(&inbox_->mu);
  inbox_->wake_run = true;
  inbox_->changed.SignalAll();
}

void CoordinatorDriver::TakeInbox() {
  std::deque<Report> reports;
  std::deque<std::string> lost;
  {
    MutexLock lock(&inbox_->mu);
    reports.swap(inbox_->reports);
    lost.swap(inbox_->lost);
  }
  const absl::Time now = SteadyNow();
  for (const Report& r : reports) coordinator_.OnReport(r, now);
  for (const std::string& p : lost) {
    coordinator_.OnProcessLost(p, now);
    lost_.insert(p);
  }
}

void CoordinatorDriver::AdvanceFromReport() {
  // Inside a step or a grant's publication on this thread (a member of
  // this process reporting, which Fast-DDS delivers on the writer's
  // thread): drive_mu_ may be held here already, and nothing must nest.
  // Unpaced runs only: a paced Run() holds drive_mu_ while it waits.
  if (InlineScope::active() || !inline_grants_.load()) {
    WakeRun();
    return;
  }
  bool wake = false;
  {
    MutexLock drive(&drive_mu_);
    if (!inline_grants_.load()) {
      wake = true;
    } else {
      TakeInbox();
      if (paused() || stop_requested_.load(std::memory_order_relaxed) || coordinator_.failure().has_value()) {
        wake = true;
      } else if (coordinator_.ReadyToGrant()) {
        Coordinator::Decision d = coordinator_.Next(SteadyNow());
        if (d.kind == Coordinator::Decision::Kind::kGrant) {
          Publish(d.grant);
        } else {
          wake = true;  // not expected after ReadyToGrant(); Run() decides
        }
      } else if (coordinator_.StepComplete()) {
        wake = true;  // the end: Run() sends the stop
      }
    }
  }
  if (wake) WakeRun();
}

void CoordinatorDriver::Publish(const Grant& grant) {
  // A member of this process may be handed the grant on this thread: it
  // must not run its step here, under drive_mu_.
  const InlineScope publishing;
  absl::Status s = grants_->PublishMessage(grant);
  if (!s.ok()) {
    // The run cannot go on without its grants.
    coordinator_.Abort(absl::StrCat("grant of step ", grant.step(), " not sent: ", s.message()));
  }
  if (!grant.stop()) {  // what step() and instant_ns() say
    granted_ns_.store(grant.instant_ns() - options_.coordinator.start_ns, std::memory_order_relaxed);
    granted_step_.store(grant.step(), std::memory_order_relaxed);
  }
}

// The stop grant must reach every process before this participant goes:
// a grant whose writer is gone is never delivered, and a process would
// wait for it for ever. Waits (at most the step deadline) until each has
// answered LEAVE or is lost.
void CoordinatorDriver::AwaitLeaves(uint64_t run_id) {
  std::set<std::string> waiting(options_.coordinator.processes.begin(), options_.coordinator.processes.end());
  {
    MutexLock drive(&drive_mu_);
    for (const std::string& p : lost_) waiting.erase(p);  // gone: no LEAVE to come
  }
  const absl::Time give_up = SteadyNow() + options_.coordinator.step_deadline;
  while (!waiting.empty() && SteadyNow() < give_up) {
    MutexLock lock(&inbox_->mu);
    for (const Report& r : inbox_->reports) {
      if (r.kind() == Report::LEAVE && (r.run_id() == run_id || r.run_id() == 0)) waiting.erase(r.process());
    }
    for (const std::string& p : inbox_->lost) waiting.erase(p);
    inbox_->reports.clear();
    inbox_->lost.clear();
    if (waiting.empty()) break;
    inbox_->changed.WaitUntil(&inbox_->mu, std::min(ToSteadyTimePoint(give_up), std::chrono::steady_clock::now() +
                                                                           std::chrono::milliseconds(100)));
  }
  if (!waiting.empty()) {
    AWARN << "lockstep coordinator: no LEAVE after the stop from " << absl::StrJoin(waiting, ", ") << " within "
          << absl::FormatDuration(options_.coordinator.step_deadline);
  }
}

void CoordinatorDriver::Resume() {
  steps_allowed_.store(0, std::memory_order_relaxed);
  paused_.store(false, std::memory_order_relaxed);
  MutexLock lock(&inbox_->mu);
  inbox_->changed.SignalAll();
}

void CoordinatorDriver::TogglePause() {
  if (paused()) {
    Resume();
  } else {
    Pause();
  }
}

void CoordinatorDriver::Step() {
  if (!paused()) return;
  steps_allowed_.fetch_add(1, std::memory_order_relaxed);
  MutexLock lock(&inbox_->mu);
  inbox_->changed.SignalAll();
}

RunOutcome CoordinatorDriver::Run() {
  RunOutcome outcome;
  // The pace's reference (moved by pauses) and the real start (not).
  std::optional<absl::Time> first_grant;
  std::optional<absl::Time> started;
  // While paused with a grant ready: since when (the paced schedule moves
  // by the pause).
  std::optional<absl::Time> held_since;
  absl::Time next_progress = SteadyNow();
  uint64_t progress_step = 0;  // the step of the last progress line
  const int64_t start_ns = options_.coordinator.start_ns;
  for (;;) {
    {
      MutexLock lock(&inbox_->mu);
      inbox_->wake_run = false;
    }
    // Progress, from what was granted (here or on the transport's thread).
    const uint64_t granted = granted_step_.load(std::memory_order_relaxed);
    if (options_.progress && granted > progress_step && SteadyNow() >= next_progress) {
      progress_step = granted;
      options_.progress(absl::StrCat(
          "lockstep: step ", granted, ", ",
          absl::FormatDuration(absl::Nanoseconds(granted_ns_.load(std::memory_order_relaxed))), " of ",
          absl::FormatDuration(absl::Nanoseconds(options_.coordinator.end_ns - start_ns)), " simulated"));
      next_progress = SteadyNow() + options_.progress_every;
    }

    drive_mu_.Lock();
    TakeInbox();
    const absl::Time now = SteadyNow();
    if (stop_requested_.load(std::memory_order_relaxed)) coordinator_.Abort("stop requested");

    // Paused: a ready grant is held (Next() is not asked, so its step
    // deadline does not start) unless a step was asked for.
    if (paused() && coordinator_.ReadyToGrant()) {
      uint64_t allowed = steps_allowed_.load(std::memory_order_relaxed);
      bool take = false;
      while (allowed > 0 && !take) {
        take = steps_allowed_.compare_exchange_weak(allowed, allowed - 1, std::memory_order_relaxed);
      }
      if (!take) {
        if (!held_since.has_value()) held_since = now;
        drive_mu_.Unlock();
        MutexLock lock(&inbox_->mu);
        if (!inbox_->wake_run && paused() && steps_allowed_.load(std::memory_order_relaxed) == 0) {
          inbox_->changed.WaitUntil(&inbox_->mu,
                                    std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
        }
        continue;
      }
    }
    if (held_since.has_value()) {
      if (first_grant.has_value()) *first_grant += SteadyNow() - *held_since;
      held_since.reset();
    }

    Coordinator::Decision d = coordinator_.Next(SteadyNow());
    if (d.kind == Coordinator::Decision::Kind::kGrant) {
      if (options_.speed > 0 && first_grant.has_value()) {
        const absl::Time due =
            *first_grant + absl::Nanoseconds(d.grant.instant_ns() - start_ns) / options_.speed;
        // Held back for the pace; a stop request still ends the wait.
        while (SteadyNow() < due && !stop_requested_.load(std::memory_order_relaxed)) {
          std::this_thread::sleep_for(std::min(absl::ToChronoNanoseconds(due - SteadyNow()),
                                               std::chrono::nanoseconds(std::chrono::milliseconds(50))));
        }
      }
      if (!first_grant.has_value()) first_grant = started = SteadyNow();
      Publish(d.grant);
      // From now on, reports that complete a step grant the next one at
      // once, unless the run is paced.
      inline_grants_.store(options_.speed == 0);
      drive_mu_.Unlock();
      continue;
    }
    if (d.kind == Coordinator::Decision::Kind::kStop) {
      inline_grants_.store(false);
      Publish(d.grant);
      outcome.ok = !coordinator_.failure().has_value();
      outcome.why = d.grant.why();
      outcome.steps = coordinator_.step();
      outcome.reached_ns = coordinator_.instant_ns();
      outcome.wall = started.has_value() ? SteadyNow() - *started : absl::ZeroDuration();
      drive_mu_.Unlock();
      AwaitLeaves(d.grant.run_id());
      return outcome;
    }
    // Wait for a report, a loss, the deadline, a progress line, or (polled)
    // a stop request.
    std::chrono::steady_clock::time_point until =
        std::min(ToSteadyTimePoint(d.until), std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
    // A progress line due later: wake for it (one due now with nothing new
    // to say waits for the next wake-up, at most 100 ms on).
    if (options_.progress && next_progress > SteadyNow()) until = std::min(until, ToSteadyTimePoint(next_progress));
    drive_mu_.Unlock();
    MutexLock lock(&inbox_->mu);
    if (!inbox_->wake_run) inbox_->changed.WaitUntil(&inbox_->mu, until);
  }
}

}  // namespace lockstep
}  // namespace cyber
