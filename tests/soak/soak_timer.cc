#include "tests/soak/soak_timer.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cyber {
namespace soak {

using timer::OverrunPolicy;
using timer::Timer;
using timer::TimerEvent;

std::string TimerSpec::Describe() const {
  return absl::StrCat(oneshot ? "oneshot " : "periodic ",
                      absl::FormatDuration(period),
                      oneshot ? "" : absl::StrCat(" ", timer::OverrunPolicyName(policy)),
                      compat ? " compat" : " modern");
}

SoakTimer::SoakTimer(SoakContext* ctx, size_t index) : ctx_(ctx), index_(index) {}

SoakTimer::~SoakTimer() { Destroy(); }

// --- Owner side ------------------------------------------------------------

bool SoakTimer::Claim() {
  MutexLock lock(&mu_);
  // A running call may be about to act on the timer, or (a oneshot) be in
  // the last moments of its run: leave the timer to it.
  if (in_call_ || callback_acting_) return false;
  owner_busy_ = true;
  return true;
}

void SoakTimer::Release() {
  MutexLock lock(&mu_);
  owner_busy_ = false;
}

Phase SoakTimer::phase() const {
  MutexLock lock(&mu_);
  return phase_;
}

TimerSpec SoakTimer::spec() const {
  MutexLock lock(&mu_);
  return spec_;
}

Timer* SoakTimer::timer() const {
  MutexLock lock(&mu_);
  return timer_.get();
}

void SoakTimer::Recreate(const TimerSpec& spec) {
  uint64_t id;
  {
    MutexLock lock(&mu_);
    id = ++config_seq_;
  }
  std::unique_ptr<Timer> fresh = MakeTimer(spec, id);
  std::unique_ptr<Timer> old;
  {
    MutexLock lock(&mu_);
    old = std::move(timer_);
  }
  if (old) {
    RetireStatistics(old.get());
    old.reset();  // ~Timer() stops it, waiting out a running call
    ctx_->counters().recreates.fetch_add(1, std::memory_order_relaxed);
  }
  const Instant done = ctx_->Now();
  MutexLock lock(&mu_);
  timer_ = std::move(fresh);
  spec_ = spec;
  config_id_ = id;
  replaced_at_ = done;
  phase_ = Phase::kIdle;
  requested_ = SelfAction::kNone;
}

void SoakTimer::Reconfigure(const TimerSpec& spec) {
  uint64_t id;
  Timer* t;
  {
    MutexLock lock(&mu_);
    id = ++config_seq_;
    t = timer_.get();
  }
  RetireStatistics(t);
  absl::Status status;
  if (spec.compat) {
    t->SetTimerOption(CompatOption(spec, id));  // errors only logged
  } else {
    status = t->Configure(ModernOptions(spec, id));
  }
  const Instant done = ctx_->Now();
  ctx_->counters().reconfigures.fetch_add(1, std::memory_order_relaxed);
  MutexLock lock(&mu_);
  spec_ = spec;
  config_id_ = id;
  replaced_at_ = done;
  phase_ = Phase::kIdle;
  requested_ = SelfAction::kNone;
  if (!status.ok()) {
    ctx_->log().Report(Violation::kScheduleFailed,
                       absl::StrCat(DescribeLocked(), ": Configure() failed: ",
                                    status.ToString()));
  }
}

void SoakTimer::Arm() {
  Instant arm = ctx_->Now();  // before Schedule(): a lower bound
  if (ctx_->fault() == SoakContext::Fault::kEarly) arm += 2 * ctx_->bounds().tick;
  Timer* t;
  TimerSpec spec;
  uint64_t epoch;
  {
    MutexLock lock(&mu_);
    t = timer_.get();
    spec = spec_;
    epoch = BeginArming(arm, spec_.compat ? "owner Start()" : "owner Schedule()");
  }
  if (ctx_->fault() == SoakContext::Fault::kLost &&
      ctx_->counters().arms.load(std::memory_order_relaxed) % 1000 == 999) {
    FinishArming(epoch, absl::OkStatus(), ctx_->Now());  // but never started
    ctx_->counters().arms.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  absl::Status status = StartTimer(t, spec);
  if (status.ok() && spec.compat && !spec.oneshot && !t->IsRunning()) {
    // Start() reports errors only in the log; a periodic timer that is not
    // running right after Start() (nobody else may stop it: we hold the
    // claim) did not start.
    status = absl::InternalError("Start() left the timer not running");
  }
  FinishArming(epoch, status, ctx_->Now());
  ctx_->counters().arms.fetch_add(1, std::memory_order_relaxed);
}

void SoakTimer::Stop() {
  timer()->Stop();
  const Instant returned = ctx_->Now();
  ctx_->counters().stops.fetch_add(1, std::memory_order_relaxed);
  MutexLock lock(&mu_);
  phase_ = Phase::kStopped;
  stopped_ = returned;
  requested_ = SelfAction::kNone;
}

void SoakTimer::ScheduleWhileRunning() {
  Timer* t;
  TimerSpec spec;
  {
    MutexLock lock(&mu_);
    if (phase_ != Phase::kArmed || spec_.oneshot) return;
    t = timer_.get();
    spec = spec_;
  }
  const absl::Status status = StartTimer(t, spec);
  ctx_->counters().redundant_schedules.fetch_add(1, std::memory_order_relaxed);
  if (!status.ok()) {
    MutexLock lock(&mu_);
    ctx_->log().Report(Violation::kScheduleFailed,
                       absl::StrCat(DescribeLocked(),
                                    ": Schedule() of a running timer failed: ",
                                    status.ToString()));
  }
}

void SoakTimer::RequestSelfAction(SelfAction action) {
  MutexLock lock(&mu_);
  requested_ = action;
}

void SoakTimer::FinalStop() {
  Stop();
  RetireStatistics(timer());
}

void SoakTimer::Destroy() {
  std::unique_ptr<Timer> old;
  {
    MutexLock lock(&mu_);
    old = std::move(timer_);
  }
  old.reset();
  const Instant done = ctx_->Now();
  MutexLock lock(&mu_);
  // No configuration is current any more: a call now is one of the destroyed
  // Timer's.
  config_id_ = ++config_seq_;
  replaced_at_ = done;
  phase_ = Phase::kStopped;
  stopped_ = done;
}

// --- Arming -----------------------------------------------------------------

uint64_t SoakTimer::BeginArming(Instant arm, const char* by) {
  ++epoch_;
  armed_by_ = by;
  phase_ = Phase::kArmed;
  arm_ = arm;
  scheduled_ = Instant::InfiniteFuture();
  calls_ = 0;
  last_expected_ = arm;
  last_actual_ = arm;
  last_end_ = arm;
  overdue_alive_ = absl::InfiniteDuration();
  overdue_reported_ = false;
  return epoch_;
}

void SoakTimer::FinishArming(uint64_t epoch, const absl::Status& status,
                             Instant returned) {
  MutexLock lock(&mu_);
  if (epoch_ != epoch) return;  // cannot happen (see the header); be safe
  if (!status.ok()) {
    ctx_->log().Report(Violation::kScheduleFailed,
                       absl::StrCat(DescribeLocked(), ": Schedule() failed: ",
                                    status.ToString()));
    phase_ = Phase::kStopped;
    stopped_ = returned;
    return;
  }
  scheduled_ = returned;
}

absl::Status SoakTimer::StartTimer(Timer* timer, const TimerSpec& spec) {
  if (spec.compat) {
    timer->Start();
    return absl::OkStatus();
  }
  return timer->Schedule();
}

void SoakTimer::RetireStatistics(Timer* timer) {
  if (timer == nullptr) return;
  uint64_t id;
  {
    MutexLock lock(&mu_);
    id = config_id_;
  }
  ctx_->AddRetiredStatistics(timer->GetStatistics(),
                             absl::StrCat("soak#", index_, " config ", id));
}

std::unique_ptr<Timer> SoakTimer::MakeTimer(const TimerSpec& spec,
                                            uint64_t config_id) {
  if (spec.compat) {
    TimerOption o = CompatOption(spec, config_id);
    return std::make_unique<Timer>(o.period, std::move(o.callback), o.oneshot);
  }
  return std::make_unique<Timer>(ModernOptions(spec, config_id));
}

timer::TimerOptions SoakTimer::ModernOptions(const TimerSpec& spec,
                                             uint64_t config_id) {
  timer::TimerOptions o;
  o.name = absl::StrCat("soak#", index_);
  o.period = spec.period;
  o.oneshot = spec.oneshot;
  o.overrun_policy = spec.policy;
  o.max_burst = spec.max_burst;
  o.event_callback = [this, config_id](const TimerEvent& event) {
    OnCall(config_id, &event);
  };
  return o;
}

timer::TimerOption SoakTimer::CompatOption(const TimerSpec& spec,
                                           uint64_t config_id) {
  return timer::TimerOption(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(spec.period)),
      [this, config_id] { OnCall(config_id, nullptr); }, spec.oneshot);
}

// --- The callback -------------------------------------------------------

void SoakTimer::OnCall(uint64_t config_id, const TimerEvent* event) {
  const Instant now = ctx_->Now();  // first thing: the actual time
  ctx_->counters().calls.fetch_add(1, std::memory_order_relaxed);
  SelfAction action = SelfAction::kNone;
  Timer* t = nullptr;
  TimerSpec spec;
  uint64_t epoch = 0;
  {
    MutexLock lock(&mu_);
    if (!CheckCallLocked(now, config_id, event)) return;
    epoch = epoch_;
    in_call_ = true;
    if (requested_ != SelfAction::kNone && !owner_busy_ && !ctx_->final_stop()) {
      action = requested_;
      requested_ = SelfAction::kNone;
      callback_acting_ = true;
      t = timer_.get();
      spec = spec_;
    }
  }
  if (event != nullptr) ctx_->RecordLateness(now - event->expected_time);
  if (ctx_->fault() == SoakContext::Fault::kLeak) {
    static std::atomic<char*> sink{nullptr};
    sink.store(new char[64], std::memory_order_relaxed);  // the previous leaks
  }
  if (action != SelfAction::kNone) PerformSelfAction(action, t, epoch, spec);
  const Instant end = ctx_->Now();
  MutexLock lock(&mu_);
  in_call_ = false;
  callback_acting_ = false;
  if (epoch_ == epoch) last_end_ = end;
}

bool SoakTimer::CheckCallLocked(Instant now, uint64_t config_id,
                                const TimerEvent* event) {
  ViolationLog& log = ctx_->log();
  if (config_id != config_id_) {
    log.Report(Violation::kFireAfterReplace,
               absl::StrCat(DescribeLocked(), ": call at ", ctx_->At(now),
                            " of configuration ", config_id,
                            ", retired (Configure/SetTimerOption/~Timer "
                            "returned) at ",
                            ctx_->At(replaced_at_)));
    return false;
  }
  switch (phase_) {
    case Phase::kIdle:
      log.Report(Violation::kUnscheduledFire,
                 absl::StrCat(DescribeLocked(), ": call at ", ctx_->At(now),
                              " but not scheduled since configured at ",
                              ctx_->At(replaced_at_)));
      return false;
    case Phase::kStopped:
      log.Report(Violation::kFireAfterStop,
                 absl::StrCat(DescribeLocked(), ": call at ", ctx_->At(now),
                              ", ", absl::FormatDuration(now - stopped_),
                              " after Stop() returned at ", ctx_->At(stopped_),
                              event != nullptr
                                  ? absl::StrCat(" (expected_time ",
                                                 ctx_->At(event->expected_time), ")")
                                  : std::string()));
      return false;
    case Phase::kFired:
      log.Report(Violation::kDuplicateFire,
                 absl::StrCat(DescribeLocked(), ": second call at ",
                              ctx_->At(now), " for one Schedule(); the first at ",
                              ctx_->At(last_actual_)));
      return false;
    case Phase::kArmed:
      break;
  }
  ++calls_;
  const Instant lower =
      arm_ + (spec_.oneshot ? spec_.period : spec_.period * calls_);
  if (now < lower) {
    log.Report(Violation::kEarlyFire,
               absl::StrCat(DescribeLocked(), ": call ", calls_, " at ",
                            ctx_->At(now), ", ", absl::FormatDuration(lower - now),
                            " before the earliest allowed ", ctx_->At(lower)));
  }
  if (event != nullptr) {
    if (event->actual_time < event->expected_time) {
      log.Report(Violation::kTimerReportedEarly,
                 absl::StrCat(DescribeLocked(), ": call ", calls_,
                              " reports actual_time ", ctx_->At(event->actual_time),
                              " < expected_time ", ctx_->At(event->expected_time)));
    }
    if (event->expected_time < lower) {
      log.Report(Violation::kStaleSchedule,
                 absl::StrCat(DescribeLocked(), ": call ", calls_,
                              " has expected_time ", ctx_->At(event->expected_time),
                              ", before this schedule's earliest ", ctx_->At(lower),
                              " (a call of an older schedule?)"));
    } else if (calls_ > 1 && event->expected_time <= last_expected_) {
      log.Report(Violation::kStaleSchedule,
                 absl::StrCat(DescribeLocked(), ": call ", calls_,
                              " has expected_time ", ctx_->At(event->expected_time),
                              ", not after the previous call's ",
                              ctx_->At(last_expected_)));
    }
    if (!spec_.oneshot && spec_.policy == OverrunPolicy::kSkip && calls_ > 1 &&
        event->actual_time - last_actual_ < spec_.period / 2) {
      // timer_options.h: "two calls are never closer than half a period".
      // Seen only after a call that was itself late (its dispatch), which
      // the policy cannot take back: informational.
      ctx_->counters().close_skip_calls.fetch_add(1, std::memory_order_relaxed);
      ctx_->Note(absl::StrCat(
          DescribeLocked(), ": kSkip call ", calls_, " (expected ",
          ctx_->At(event->expected_time), ", actual ", ctx_->At(event->actual_time),
          ") came ", absl::FormatDuration(event->actual_time - last_actual_),
          " after the previous call (expected ", ctx_->At(last_expected_), ", actual ",
          ctx_->At(last_actual_), ", late by ",
          absl::FormatDuration(last_actual_ - last_expected_),
          "): closer than half the period"));
    }
    last_expected_ = event->expected_time;
    last_actual_ = event->actual_time;
  } else {
    last_actual_ = now;
  }
  if (!overdue_reported_ && overdue_alive_ != absl::InfiniteDuration() &&
      ctx_->alive() - overdue_alive_ > ctx_->bounds().lost_after) {
    const Instant due_by = DueByLocked();
    log.Report(Violation::kLate,
               absl::StrCat(DescribeLocked(), ": call ", calls_, " at ",
                            ctx_->At(now), ", ", absl::FormatDuration(now - due_by),
                            " after the latest on-time instant ", ctx_->At(due_by),
                            "; overdue since the watchdog saw it at ",
                            ctx_->At(overdue_seen_), ", the timer system ran ",
                            absl::FormatDuration(ctx_->alive() - overdue_alive_),
                            " since (bound ",
                            absl::FormatDuration(ctx_->bounds().lost_after), ")"));
  }
  // A periodic timer's next wait starts now.
  overdue_reported_ = false;
  overdue_alive_ = absl::InfiniteDuration();
  if (spec_.oneshot) phase_ = Phase::kFired;
  return true;
}

void SoakTimer::PerformSelfAction(SelfAction action, Timer* timer,
                                  uint64_t epoch, const TimerSpec& spec) {
  ctx_->counters().self_actions.fetch_add(1, std::memory_order_relaxed);
  if (action == SelfAction::kStop || action == SelfAction::kRestart) {
    timer->Stop();  // from its own callback: returns without waiting
    const Instant returned = ctx_->Now();
    ctx_->counters().stops.fetch_add(1, std::memory_order_relaxed);
    MutexLock lock(&mu_);
    if (epoch_ == epoch) {
      phase_ = Phase::kStopped;
      stopped_ = returned;
    }
    if (action == SelfAction::kStop) return;
  }
  // kRestart (after the Stop above) or kRearm: a new schedule from inside
  // the callback.
  const Instant arm = ctx_->Now();
  uint64_t new_epoch;
  {
    MutexLock lock(&mu_);
    if (epoch_ != epoch) return;  // cannot happen: nobody else acts now
    new_epoch = BeginArming(
        arm, action == SelfAction::kRestart
                 ? "callback Stop() + Schedule()/Start()"
                 : "callback Schedule()/Start() without Stop()");
  }
  const absl::Status status = StartTimer(timer, spec);
  FinishArming(new_epoch, status, ctx_->Now());
  ctx_->counters().arms.fetch_add(1, std::memory_order_relaxed);
}

// --- Watchdog -------------------------------------------------------------

Instant SoakTimer::DueByLocked() const {
  if (scheduled_.IsInfiniteFuture()) return Instant::InfiniteFuture();
  const absl::Duration tick = ctx_->bounds().tick;
  // Oneshot: origin <= scheduled_, deadline = origin + delay, rounded up to
  // a tick. Periodic: the first call is due at most a tick + a period after
  // Schedule(); each next one at most a period + a tick after the previous
  // run ended (kSkip's late call comes at the next tick, its on-phase call
  // within a period; kDelay re-bases on the end; kBurst calls at once).
  const Instant from =
      spec_.oneshot ? scheduled_ : std::max(scheduled_, last_end_);
  return from + spec_.period + tick;
}

void SoakTimer::Scan(Instant now) {
  const absl::Duration alive = ctx_->alive();
  MutexLock lock(&mu_);
  // Skipped while someone acts on the timer: an owner between Stop()
  // returning and recording it, or a call in progress.
  if (phase_ != Phase::kArmed || owner_busy_ || in_call_ || overdue_reported_) {
    return;
  }
  const Instant due_by = DueByLocked();
  if (due_by.IsInfiniteFuture() || now <= due_by) return;
  if (overdue_alive_ == absl::InfiniteDuration()) {  // first seen overdue
    overdue_alive_ = alive;
    overdue_seen_ = now;
    return;
  }
  if (alive - overdue_alive_ <= ctx_->bounds().lost_after) return;
  overdue_reported_ = true;  // once per wait; a late call is then not "late"
  ctx_->log().Report(
      Violation::kLost,
      absl::StrCat(DescribeLocked(), ": no call by ", ctx_->At(now), ", ",
                   absl::FormatDuration(now - due_by),
                   " after the latest on-time instant ", ctx_->At(due_by),
                   "; overdue since the watchdog saw it at ", ctx_->At(overdue_seen_),
                   ", the timer system ran ", absl::FormatDuration(alive - overdue_alive_),
                   " since (bound ", absl::FormatDuration(ctx_->bounds().lost_after),
                   "); calls in this schedule: ", calls_,
                   calls_ > 0 ? absl::StrCat(", the last ended at ",
                                             ctx_->At(last_end_))
                              : std::string()));
}

std::string SoakTimer::DescribeLocked() const {
  return absl::StrCat("soak#", index_, " [", spec_.Describe(), ", config ",
                      config_id_, ", epoch ", epoch_, ", armed by ", armed_by_,
                      " at ", ctx_->At(arm_), ", Schedule() returned at ",
                      ctx_->At(scheduled_), "]");
}

}  // namespace soak
}  // namespace cyber
