#include "timer/timer_core.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "cyber/time/steady_clock.h"
#include "cyber/common/runtime_scope.h"
#include "timer/timer_stop_registry.h"

namespace cyber {
namespace timer {

namespace {
// Longest back-off between retries of a refused oneshot.
constexpr absl::Duration kMaxRefusalBackoff = absl::Seconds(1);
}  // namespace

namespace {
uint32_t NextTimerId() {
  static std::atomic<uint32_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

TimerCore::TimerCore(std::shared_ptr<TimerSystemCore> system)
    : stripe_(StripeFor(this)),
      fixed_(system != nullptr),
      bound_(false),
      outcome_(kNoOutcome),
      counted_(false),
      has_on_cancel_(false),
      id_(NextTimerId()) {
  AdaptiveMutexLock lock(&stripe_->mu);
  system_ = std::move(system);
  LinkIntoStripeLocked();
}

TimerCore::~TimerCore() {
  // Normally never armed here (Stop/Retire cancel); the system is held,
  // so this cancel is always safe.
  AdaptiveMutexLock lock(&stripe_->mu);
  if (system_) system_->Cancel(this);
  // Likewise never counted here (Retire() ends the schedule), except for a
  // core freed with its schedule on, which no Timer does.
  if (counted_) ReleasePendingLocked();
  UnlinkFromStripeLocked();
}

std::string TimerCore::NameLocked() const {
  if (cold_ != nullptr && !cold_->name.empty()) return cold_->name;
  return absl::StrCat("timer#", id_);
}

// Inlined where it is used (this file only): it is on every path of a
// timer.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void TimerCore::TransitionLocked(
    Event event, bool keep_pending_slot) {
  const std::optional<State> next = TimerStateAfter(state_, event);
  // An invalid pair is a broken invariant of this file; a build without
  // DCHECKs leaves the state as it is.
  DCHECK(next.has_value()) << "timer \"" << NameLocked() << "\": "
                           << TimerStateEventName(event) << " in state "
                           << TimerStateName(state_);
  if (!next.has_value()) return;
  const bool was_on = ScheduleOn(state_);
  state_ = *next;
  // A periodic timer's calls (expire, begin, end) keep it on: nothing more.
  if (was_on == ScheduleOn(state_) && event != Event::kNewSchedule &&
      event != Event::kOneshotCallBegins) {
    return;
  }
  NoteScheduleChangeLocked(event, was_on, keep_pending_slot);
}

void TimerCore::NoteScheduleChangeLocked(Event event, bool was_on,
                                         bool keep_pending_slot) {
  const bool on = ScheduleOn(state_);
  // The outcome (see the header comment); Configure() refines kConfigure.
  if (event == Event::kNewSchedule) {
    outcome_ = kNoOutcome;
  } else if (event == Event::kOneshotCallBegins) {
    outcome_ = kFiredOutcome;
  } else if (was_on && !on) {
    outcome_ = kCancelledOutcome;
  }
  if (on != static_cast<bool>(counted_) && !keep_pending_slot) {
    SyncPendingLocked();
  }
}

void TimerCore::SyncPendingLocked() {
  if (ScheduleOn(state_) == static_cast<bool>(counted_)) return;
  if (counted_) {
    ReleasePendingLocked();
    return;
  }
  // Only kNewSchedule turns a schedule on, after ReservePendingLocked():
  // not reached today; counted without the cap if it ever is.
  system_->AddPendingTimer();
  counted_ = true;
}

absl::Status TimerCore::ReservePendingLocked() {
  if (counted_) return absl::OkStatus();  // a Reset() of a pending timer
  size_t pending, cap;
  if (!system_->TryAddPendingTimer(&pending, &cap)) {
    absl::Status status = absl::ResourceExhaustedError(absl::StrCat(
        "timer \"", NameLocked(), "\": timer system \"", system_->name(),
        "\" has ", pending, " pending timers, its cap (max_pending_timers ",
        cap, "); not started"));
    AERROR_EVERY(100) << status.message() << " (logged once per 100)";
    return status;
  }
  counted_ = true;
  return absl::OkStatus();
}

void TimerCore::ReleasePendingLocked() {
  system_->RemovePendingTimer();
  counted_ = false;
}

// The other cores touched share this stripe (the list is the stripe's),
// so stripe_->mu guards them too; the analysis cannot see that.
void TimerCore::LinkIntoStripeLocked() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  TimerCore* const head = stripe_->cores;
  stripe_next_ = head;
  stripe_pprev_ = &stripe_->cores;
  if (head != nullptr) head->stripe_pprev_ = &stripe_next_;
  stripe_->cores = this;
}

void TimerCore::UnlinkFromStripeLocked() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  *stripe_pprev_ = stripe_next_;
  if (stripe_next_ != nullptr) stripe_next_->stripe_pprev_ = stripe_pprev_;
  stripe_next_ = nullptr;
  stripe_pprev_ = nullptr;
}

Instant TimerCore::ExpectedLocked(int64_t k) const {
  return schedule_.Expected(k, rules_.period);
}

void TimerCore::CancelLocked() {
  if (armed_seq_ != 0 && system_) system_->Cancel(this);
  armed_seq_ = 0;
  armed_never_ = false;
}

absl::Status TimerCore::ArmNextLocked() {
  const absl::Status status =
      TryArmLocked(ExpectedLocked(schedule_.call() + 1));
  if (status.ok()) armed_for_next_ = true;
  return status;
}

absl::Status TimerCore::ArmLocked(Instant deadline) {
  const absl::Status status = TryArmLocked(deadline);
  if (!status.ok()) TransitionLocked(Event::kArmFailed);
  return status;
}

absl::Status TimerCore::TryArmLocked(Instant deadline) {
  armed_for_next_ = false;
  armed_never_ = false;
  // "Never": a delay or period beyond the wheel's range (~99 days) or
  // infinite, decided on the duration itself rather than on the wheel's
  // rounding to ticks (and, below, a deadline the wheel still finds out of
  // range, one within a tick of that limit). The timer stays armed
  // (cancellable, pending) and nothing is in the wheel; a failed arm left
  // a previous arming as it was.
  if (rules_.period > system_->max_delay()) return ArmNeverLocked();
  // Exact (at the deadline itself): every periodic call, so that any
  // period keeps its phase; a oneshot that asks for it; a delay <= 0, which
  // runs at once rather than on the next tick. Otherwise on the tick.
  const bool exact = !rules_.oneshot || precision_ == TimerPrecision::kExact ||
                     rules_.period <= absl::ZeroDuration();
  auto armed = exact ? system_->ArmExact(this, deadline)
                     : system_->Arm(this, deadline);
  if (!armed.ok() && armed.status().code() == absl::StatusCode::kOutOfRange) {
    return ArmNeverLocked();
  }
  if (!armed.ok()) {
    armed_seq_ = 0;
    const absl::Status status(
        armed.status().code(),
        absl::StrCat("timer \"", NameLocked(), "\": ", armed.status().message()));
    AERROR << status.message();
    return status;
  }
  armed_seq_ = armed->arm_seq;
  return absl::OkStatus();
}

absl::Status TimerCore::ArmNeverLocked() {
  if (armed_seq_ != 0) system_->Cancel(this);
  armed_seq_ = 0;
  armed_never_ = true;
  return absl::OkStatus();
}

void TimerCore::Configure(TimerOptions options, absl::Status status) {
  const bool stop_prevented = StopWith(Event::kStop);
  // Out of line only when set (see the header comment).
  std::shared_ptr<const ColdOptions> cold;
  if (!options.name.empty() || options.on_cancel) {
    cold = std::make_shared<const ColdOptions>(
        ColdOptions{std::move(options.name), std::move(options.on_cancel)});
  }
  std::shared_ptr<const ColdOptions> raced;  // its on_cancel, if due
  // The replaced callback and cold options, destroyed after the lock is
  // released (their captures are user objects).
  Callback old_callback;
  std::shared_ptr<const ColdOptions> old_cold;
  {
    AdaptiveMutexLock lock(&stripe_->mu);
    // A Start() that raced in after the Stop() is undone: the new options
    // begin with the next Start().
    const bool raced_prevented = ScheduleOn(state_);
    if (raced_prevented && has_on_cancel_) raced = cold_;
    CancelLocked();
    TransitionLocked(Event::kConfigure);
    // "Not started" with the new options, unless this stopped a schedule.
    outcome_ = stop_prevented || raced_prevented ? kCancelledOutcome
                                                  : kNoOutcome;
    // Statistics describe one configuration: they start again at zero (a
    // call of the old one still running is not counted in the new).
    ++config_epoch_;
    record_.reset();
    missed_since_last_ = 0;
    bound_ = false;  // validate and resolve the priority again at Start()
    rules_ = ScheduleRules{options.period, options.overrun_policy,
                           options.max_burst, options.oneshot,
                           options.use_default_timeout};
    precision_ = options.precision;
    latency_percentiles_ = options.latency_percentiles;
    given_priority_ = options.priority;
    old_callback = std::move(callback_);
    if (options.event_callback) {
      callback_.emplace<1>(std::move(options.event_callback));
    } else {
      callback_.emplace<0>(std::move(options.callback));
    }
    old_cold = std::move(cold_);
    cold_ = std::move(cold);
    has_on_cancel_ = cold_ != nullptr && static_cast<bool>(cold_->on_cancel);
    config_status_ = std::move(status);
  }
  if (raced != nullptr) CallOnCancel(*raced);
}

absl::Status TimerCore::BindLocked(TimerSystemCore* system,
                                   std::shared_ptr<TimerSystemCore> system_ref) {
  // Bound here for this configuration already: the common restart of a
  // timeout costs nothing more.
  if (bound_ && system_.get() == system) return absl::OkStatus();
  // The options were validated at Configure (config_status_); nothing in
  // them depends on the wheel.
  if (system_.get() != system) {
    if (system_) system_->Cancel(this);
    // A Reset() that kept its slot on the old system: a new pending timer
    // here, within this system's cap.
    if (counted_) ReleasePendingLocked();
    system_ = system_ref != nullptr ? std::move(system_ref)
                                  : system->shared_from_this();
  }
  // An automatic name is in no scheduler conf: no lookup.
  const Route conf = cold_ == nullptr || cold_->name.empty()
                         ? Route{}
                         : system_->dispatcher()->RouteFor(cold_->name);
  priority_ = given_priority_ >= 0 ? given_priority_ : conf.priority;
  group_ = conf.group;
  system_->InstallPendingTimerCanceller(&TimerCore::CancelAllOn);
  bound_ = true;
  return absl::OkStatus();
}

absl::Status TimerCore::StartFixed(bool reset) {
  return Begin(fixed_system(), nullptr, reset);
}

absl::Status TimerCore::StartDefault(bool reset) {
  // The common case: the timer starts again on the system it last ran on,
  // still the current one. Compared, never dereferenced: if it is system_,
  // the core's own reference keeps it alive.
  const TimerSystemCore* const hint = CurrentTimerSystemHint();
  if (hint != nullptr) {
    AdaptiveMutexLock lock(&stripe_->mu);
    if (system_.get() == hint) {
      const absl::Status status = BeginLocked(system_.get(), nullptr, reset);
      SyncPendingLocked();  // a Reset() that failed gives its slot back
      return status;
    }
  }
  // The rule of cyber/common/runtime_scope.h; the reference held while the
  // timer binds keeps a process runtime alive, and the timer then holds
  // the system itself.
  const RuntimeRef runtime = CurrentRuntime();
  TimerSystemCore* const raw = runtime.part(&RuntimeScope::timers);
  if (raw == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "timer \"", name(),
        "\": no timer system: no runtime scope is installed on this thread "
        "and this binary links no process runtime (depend on //timer, "
        "which links it, or pass a TimerSystem)"));
  }
  return Begin(raw, raw->shared_from_this(), reset);
}

absl::Status TimerCore::Begin(TimerSystemCore* system,
                              std::shared_ptr<TimerSystemCore> system_ref,
                              bool reset) {
  AdaptiveMutexLock lock(&stripe_->mu);
  const absl::Status status = BeginLocked(system, std::move(system_ref), reset);
  SyncPendingLocked();  // a Reset() that failed gives its slot back
  return status;
}

absl::Status TimerCore::BeginLocked(TimerSystemCore* system,
                                    std::shared_ptr<TimerSystemCore> system_ref,
                                    bool reset) {
  if (Retired(state_)) {
    return absl::FailedPreconditionError(
        absl::StrCat("timer \"", NameLocked(), "\": destroyed"));
  }
  if (state_ == State::kUnconfigured) {
    return absl::FailedPreconditionError(absl::StrCat(
        "timer \"", NameLocked(),
        "\": Start() before SetTimerOption()/Configure(): no period or "
        "callback set"));
  }
  if (!config_status_.ok()) return config_status_;
  if (AwaitingCall(state_) && system_->closed()) {
    // Its system shut down under it: the schedule is over.
    CancelLocked();
    TransitionLocked(Event::kSystemShutDown);
  }
  if (!reset && ScheduleOn(state_)) return absl::OkStatus();  // already on
  // The default timeout, before anything changes: a refused start leaves
  // the timer as it was.
  if (rules_.use_default_timeout && system != nullptr) {
    const std::optional<absl::Duration> delay = system->default_timeout();
    if (!delay.has_value()) {
      const absl::Status status = absl::FailedPreconditionError(absl::StrCat(
          "timer \"", NameLocked(),
          "\": TimerOptions::use_default_timeout is set, and timer system \"",
          system->name(),
          "\" has no default timeout (TimerSystem::set_default_timeout)"));
      AERROR << status.message();
      return status;
    }
    rules_.period = *delay;
  }
  if (reset) {
    // A new countdown: the armed entry is cancelled, a queued run drops out
    // (its token no longer matches), and the schedule starts afresh; a
    // running call's next arming is cancelled, and the new schedule is
    // armed when that call ends, never beside it.
    CancelLocked();
    TransitionLocked(Event::kDropCountdown, /*keep_pending_slot=*/true);
  }
  Instant now;
  if (system == nullptr || !system->TryNow(&now)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "timer \"", NameLocked(), "\": the timer system is shut down (",
        fixed_ ? "its TimerSystem \"" + system->name() + "\" is gone"
               : "cyber::Shutdown() was called; cyber::Init() starts a new one",
        ")"));
  }
  // Idle: bind (to `system`, for this configuration). A call still running
  // whose callback reconfigured its timer (Configure() unbinds) binds again
  // on the system it runs on, so the next call takes the new route.
  if (state_ == State::kIdle || (!bound_ && system_.get() == system)) {
    const absl::Status bound = BindLocked(system, std::move(system_ref));
    if (!bound.ok()) return bound;
  }
  // The cap (TimerSystemCore::Options::max_pending_timers), before anything
  // changes: a refused start leaves the timer as it was.
  const absl::Status reserved = ReservePendingLocked();
  if (!reserved.ok()) return reserved;
  // A periodic schedule starts on the first tick boundary at or after now
  // (kTick), so that periods of whole ticks land on ticks (one wake-up for
  // all the timers due there); the first call is still no earlier than
  // now + period. kExact starts it at now itself. A oneshot counts from
  // now exactly (kTick: its deadline rounds up to a tick when armed).
  schedule_.Start(rules_.oneshot || precision_ == TimerPrecision::kExact
                      ? now
                      : system_->FireInstant(now));
  missed_since_last_ = 0;
  refusals_in_a_row_ = 0;
  // Its call may still be running (it is restarting itself, or was stopped
  // and started again meanwhile, or reset): then kRunningRestartPending, and
  // armed when that call ends, never beside it.
  TransitionLocked(Event::kNewSchedule);
  if (state_ != State::kArmed) return absl::OkStatus();
  return ArmLocked(ExpectedLocked(schedule_.call()));
}

void TimerCore::Stop() { StopWith(Event::kStop); }

bool TimerCore::Cancel() { return StopWith(Event::kStop); }

void TimerCore::Retire() { StopWith(Event::kRetire); }

bool TimerCore::IsReady() const {
  return TimeUntilNextCall() <= absl::ZeroDuration();
}

bool TimerCore::StopWith(Event event, bool system_sweep) {
  const void* const me = CurrentExecutionId();
  // The options whose on_cancel is due, held only when one is.
  std::shared_ptr<const ColdOptions> notify;
  bool prevented;
  {
    // Lists this stop while it waits (timer_stop_registry.h); declared
    // before the lock, so that it is taken off the list (and a "returned
    // after" logged) once the lock is released.
    // Allocated only by a stop that waits (the rare case): an empty
    // pointer costs the common stop nothing (an optional of the record
    // cost a 128-byte clear of the stack per Stop(), ~10 ns).
    std::unique_ptr<timer_internal::StopWaitRecord> waiting;
    AdaptiveMutexLock lock(&stripe_->mu);
    // Decided here, under the lock where a queued call decides to begin:
    // either this prevents it or it has begun (a oneshot's schedule ended).
    prevented = ScheduleOn(state_);
    if (prevented && !system_sweep && AwaitingCall(state_) &&
        system_->closed()) {
      // Its schedule ended with its system's shutdown (phase() says
      // kCancelled already): this prevents nothing. The system's own sweep
      // (TimerSystem::ShutdownAndCancelAll) is what cancels it.
      CancelLocked();
      TransitionLocked(Event::kSystemShutDown);
      prevented = false;
    }
    if (prevented && has_on_cancel_) notify = cold_;
    CancelLocked();
    // A queued run finds the state changed and drops out; a call in flight
    // ends in kFinishing (kRetiring), never re-arming.
    TransitionLocked(event);
    // From the callback itself: no re-arm, no wait.
    if (CallInFlight(state_) && runner_ != me) AwaitCallEndLocked(&waiting);
  }
  // After the wait and with no lock held, on this thread.
  if (notify != nullptr) CallOnCancel(*notify);  // catches what it throws
  return prevented;
}

void TimerCore::CallOnCancel(const ColdOptions& cold) const {
  const char* failure = nullptr;
  std::string what;
  try {
    cold.on_cancel();
  } catch (const std::exception& e) {
    failure = "threw";
    what = e.what();
  } catch (...) {
    failure = "threw a non-std::exception";
  }
  if (failure != nullptr) {
    // Named from the options it was called for (a Configure() may have
    // replaced the timer's since).
    AERROR << "timer \""
           << (cold.name.empty() ? absl::StrCat("timer#", id_) : cold.name)
           << "\": on_cancel " << failure << (what.empty() ? "" : ": ")
           << what;
  }
}

void TimerCore::AwaitCallEndLocked(
    std::unique_ptr<timer_internal::StopWaitRecord>* waiting) {
  // Wait for the end of the call in flight; while we wait its end never
  // re-arms (stop_waiters_), whatever the callback does to its timer.
  ++stop_waiters_;
  const uint32_t ended = calls_ended_;
  *waiting = std::make_unique<timer_internal::StopWaitRecord>(NameLocked());
  if ((*waiting)->must_start_watcher()) {
    // Not under the lock. Released here as it is by the wait below: to this
    // stop, the gap is one more spurious wake (stop_waiters_ and `ended`
    // are set, the loop checks again).
    stripe_->mu.Unlock();
    timer_internal::StopWaitRecord::StartWatcher();
    stripe_->mu.Lock();
  }
  // The stripe's list is shared: a wake for another timer's call is
  // spurious here, and the loop waits again.
  while (calls_ended_ == ended) stripe_->call_ended.Wait(&stripe_->mu);
  --stop_waiters_;
}

TimerPhase TimerCore::phase() const {
  AdaptiveMutexLock lock(&stripe_->mu);
  if (CallInFlight(state_)) return TimerPhase::kRunning;
  if (AwaitingCall(state_)) {
    // Armed or queued on a system that shut down: it will never run.
    return system_->closed() ? TimerPhase::kCancelled : TimerPhase::kScheduled;
  }
  switch (outcome_) {
    case kFiredOutcome:
      return TimerPhase::kFired;
    case kCancelledOutcome:
      return TimerPhase::kCancelled;
    default:
      return TimerPhase::kNotStarted;
  }
}

absl::Duration TimerCore::TimeUntilNextCall() const {
  AdaptiveMutexLock lock(&stripe_->mu);
  if (!ScheduleOn(state_) || armed_never_) return absl::InfiniteDuration();
  Instant now;
  if (!system_->TryNow(&now)) return absl::InfiniteDuration();  // shut down
  // Call k_ is armed or queued, or (kRunningRestartPending) the new
  // schedule's first; while a periodic call runs (kRunning), the next is
  // the one after it.
  const int64_t k = schedule_.call() + (state_ == State::kRunning ? 1 : 0);
  const absl::Duration left = ExpectedLocked(k) - now;
  // Queued: due (the tick it was dispatched on is at or after its
  // deadline), whatever the clock did meanwhile.
  if (state_ == State::kQueued) return std::min(left, absl::ZeroDuration());
  return left;
}

Clock* TimerCore::clock() const {
  AdaptiveMutexLock lock(&stripe_->mu);
  // A fixed system's clock is the one its TimerSystem was given, for the
  // Timer's whole life; a default-bound timer reports the system it is
  // bound to while that is open, else the steady clock (unbound, as a
  // plain Timer is until its first Start(): nothing is looked up or made).
  if (system_ != nullptr && (fixed_ || !system_->closed())) {
    return system_->clock();
  }
  return SteadyClock::Get();
}

bool TimerCore::IsSteady() const {
  AdaptiveMutexLock lock(&stripe_->mu);
  // Known to the system without touching the clock (which may be gone
  // with a fixed system's TimerSystem).
  if (system_ != nullptr && (fixed_ || !system_->closed())) {
    return system_->clock_is_steady();
  }
  return true;  // SteadyClock
}

// The walk reads other cores' fields under their stripe's lock (the lock
// held), which the analysis cannot tie to core->stripe_->mu.
size_t TimerCore::CancelAllOn(TimerSystemCore* system,
                              std::vector<std::string>* cancelled)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  size_t prevented = 0;
  std::vector<std::shared_ptr<TimerCore>> found;
  for (size_t i = 0; i < kTimerStripes; ++i) {
    TimerStripe* const stripe = TimerStripeAt(i);
    {
      AdaptiveMutexLock lock(&stripe->mu);
      for (TimerCore* c = stripe->cores; c != nullptr; c = c->stripe_next_) {
        // Its state first: a core still being made (whose owner is not
        // set yet) is never on.
        if (!ScheduleOn(c->state_) || c->system_.get() != system) continue;
        // On means its Timer (which retires it before letting go) still
        // holds it; lock() only guards against a core freed outside one.
        std::shared_ptr<ExpiryTarget> ref = c->weak_from_this().lock();
        if (ref != nullptr) {
          found.push_back(std::static_pointer_cast<TimerCore>(std::move(ref)));
        }
      }
    }
    // With no lock held: Cancel() takes the stripe's lock, may wait for a
    // running call, and calls on_cancel.
    for (const std::shared_ptr<TimerCore>& core : found) {
      if (core->StopWith(Event::kStop, /*system_sweep=*/true)) {
        ++prevented;
        if (cancelled != nullptr) cancelled->push_back(core->name());
      }
    }
    found.clear();
  }
  return prevented;
}

bool TimerCore::IsRunning() const {
  AdaptiveMutexLock lock(&stripe_->mu);
  if (state_ == State::kRunning || state_ == State::kRunningRestartPending) {
    return true;
  }
  // Armed or queued on a system that shut down: never going to run.
  return AwaitingCall(state_) && !system_->closed();
}

std::string TimerCore::name() const {
  AdaptiveMutexLock lock(&stripe_->mu);
  return NameLocked();
}

std::string TimerCore::given_name() const {
  AdaptiveMutexLock lock(&stripe_->mu);
  return cold_ != nullptr ? cold_->name : std::string();
}

TimerStatistics TimerCore::Statistics() const {
  AdaptiveMutexLock lock(&stripe_->mu);
  TimerStatistics s;
  s.percentiles = latency_percentiles_;
  if (record_ == nullptr) return s;  // nothing recorded yet
  const Counters& c = record_->counters;
  s.fires = c.fires;
  s.overruns = c.overruns;
  s.missed_periods = c.missed_periods;
  s.exceptions = c.exceptions;
  s.dispatch_refusals = c.dispatch_refusals;
  s.early_fires = c.early_fires;
  s.lateness_max = absl::Nanoseconds(c.lateness_max_ns);
  s.run_time_max = absl::Nanoseconds(c.run_time_max_ns);
  if (const Histograms* h = record_->histograms.get()) {
    s.lateness_p50 = h->lateness.Percentile(0.50);
    s.lateness_p99 = h->lateness.Percentile(0.99);
    s.run_time_p99 = h->run_time.Percentile(0.99);
  }
  return s;
}

void TimerCore::OnExpired(uint32_t arm_seq) {
  uint32_t token;
  Route route;
  Dispatcher* dispatcher;
  {
    AdaptiveMutexLock lock(&stripe_->mu);
    if (arm_seq == 0 || arm_seq != armed_seq_) return;  // stale
    armed_seq_ = 0;
    const State before = state_;
    TransitionLocked(Event::kExpire);
    switch (before) {
      case State::kArmed:
        break;
      case State::kQueued: {
        // Processed ahead of its instant (early hand-over, timer_system.h)
        // while the call may still begin before it: nothing is missed yet.
        // Watch again from the instant itself (armed the lead after it, so
        // processed at or after it), or the periods a starved call misses
        // would show only when it runs. Not armed "for next": if the call
        // begins meanwhile, its end arms the next period for its instant.
        Instant now;
        const absl::Duration lead = system_->hand_over_lead();
        if (lead > absl::ZeroDuration() && system_->TryNow(&now) &&
            now < ExpectedLocked(schedule_.call() + 1)) {
          TryArmLocked(ExpectedLocked(schedule_.call() + 1) + lead)
              .IgnoreError();
          return;
        }
      }
        // The provisional arming came due and the call still has not begun
        // (its processor is busy with higher priorities, or the process was
        // stalled): that period is missed. Count it now, so starvation
        // shows, and let the queued call stand for the next one (under
        // kSkip: for the latest one due).
        schedule_.Advance();
        ++missed_since_last_;
        ++RecordLocked().counters.missed_periods;
        SkipToLatestDueLocked(system_->ProcessedInstant());
        if (!ArmNextLocked().ok()) TransitionLocked(Event::kArmFailed);
        return;
      default:  // kRunning: an overrun, the call's end re-arms
        return;
    }
    // Dispatched late (the tick thread was stalled, or processed a batch of
    // ticks at once): under kSkip this call stands for the latest due period.
    SkipToLatestDueLocked(system_->ProcessedInstant());
    token = ++queued_token_;
    if (!rules_.oneshot) {
      // Provisionally arm the next period now, on the tick thread, so the
      // tick thread plans its next sleep with it; the call's own re-arm
      // then lands on the same tick and needs no extra wake-up. A failure
      // only ends the next period: the state stays kQueued.
      ArmNextLocked().IgnoreError();
    }
    route = Route{priority_, group_};
    dispatcher = system_->dispatcher();
  }
  // The task is two words (std::function keeps it inline: no allocation);
  // the dispatcher holds the core alive beside it until it has run.
  if (!dispatcher->Dispatch([core = this, token] { core->Run(token); },
                            route, shared_from_this())) {
    HandleRefusal(token);
  }
}

void TimerCore::HandleRefusal(uint32_t token) {
  // Refused (queue full or shutting down): never silently, never busily.
  AdaptiveMutexLock lock(&stripe_->mu);
  const uint64_t refusals = ++RecordLocked().counters.dispatch_refusals;
  if (state_ != State::kQueued || token != queued_token_) return;  // stopped
  TransitionLocked(Event::kDispatchRefused);
  if (rules_.oneshot) {
    const absl::Duration backoff =
        std::min(system_->tick() * (int64_t{1} << refusals_in_a_row_),
                 kMaxRefusalBackoff);
    if (refusals_in_a_row_ < 20) ++refusals_in_a_row_;  // 2^20 ticks > 1 s
    AERROR_EVERY(100) << "timer \"" << NameLocked()
                      << "\": dispatcher refused the callback; retrying in "
                      << absl::FormatDuration(backoff) << " (refusals: "
                      << refusals << ")";
    // From the tick being processed (not the clock), so that a simulation
    // sees the same retries whatever the clock did meanwhile.
    ArmLocked(system_->ProcessedInstant() + backoff).IgnoreError();
  } else {
    AERROR_EVERY(100) << "timer \"" << NameLocked()
                      << "\": dispatcher refused the callback; skipping to "
                         "the next period (refusals: "
                      << refusals << ")";
    schedule_.Advance();
    ++missed_since_last_;
    ++RecordLocked().counters.missed_periods;
    ArmLocked(ExpectedLocked(schedule_.call())).IgnoreError();
  }
}

void TimerCore::Run(uint32_t token) {
  TimerEvent event;
  // The callback, moved out of the core for the call (see the header
  // comment).
  Callback callback;
  bool oneshot;
  uint64_t epoch;
  {
    AdaptiveMutexLock lock(&stripe_->mu);
    if (state_ != State::kQueued || token != queued_token_) return;  // dropped
    if (!system_->TryNow(&event.actual_time)) {
      // The timer system shut down while this call was queued.
      CancelLocked();
      TransitionLocked(Event::kSystemShutDown);
      AWARN << "timer \"" << NameLocked()
            << "\": its timer system shut down; the timer stopped";
      return;
    }
    // A oneshot is done once its call begins: a Start() from now on (from
    // its own callback too) begins a new schedule.
    // Begun late (a busy processor, or a stall while it was queued): under
    // kSkip it stands for the latest period due by now.
    SkipToLatestDueLocked(event.actual_time);
    oneshot = rules_.oneshot;
    TransitionLocked(oneshot ? Event::kOneshotCallBegins : Event::kCallBegins);
    runner_ = CurrentExecutionId();
    refusals_in_a_row_ = 0;
    // Configure() from the callback cannot destroy it now.
    callback = std::move(callback_);
    epoch = config_epoch_;
    event.expected_time = ExpectedLocked(schedule_.call());
    event.missed_periods = missed_since_last_;
    event.last_run_duration =
        absl::Nanoseconds(record_ != nullptr ? record_->last_run_ns : 0);
    missed_since_last_ = 0;
  }

  // The user's code: no lock held; exceptions do not escape, except the
  // dispatcher's own cancellation, which is passed on after the bookkeeping.
  const char* failure = nullptr;
  std::string what;
  std::exception_ptr cancelled;
  try {
    if (callback.index() == 1) {
      std::get<1>(callback)(event);
    } else {
      std::get<0>(callback)();
    }
  } catch (const ExecutionCancelled&) {
    cancelled = std::current_exception();
  } catch (const std::exception& e) {
    failure = "threw";
    what = e.what();
  } catch (...) {
    failure = "threw a non-std::exception";
  }

  {
    AdaptiveMutexLock lock(&stripe_->mu);
    Instant end;
    const bool system_up = system_->TryNow(&end);
    if (!system_up) end = event.actual_time;
    const bool same_config = epoch == config_epoch_;
    if (same_config) {
      // Back where the next call finds it (it cannot begin before this).
      callback_ = std::move(callback);
      RecordCallLocked(event, end - event.actual_time);
      if (failure != nullptr) ++RecordLocked().counters.exceptions;
    }
    if (failure != nullptr) {
      AERROR << "timer \"" << NameLocked() << "\": callback " << failure
             << (what.empty() ? "" : ": ") << what << " (exceptions so far: "
             << (record_ != nullptr ? record_->counters.exceptions : 0) << ")"
             << (oneshot ? "" : "; the timer keeps running");
    }
    runner_ = nullptr;
    ++calls_ended_;
    // Retired implies kRetiring here: never kept on.
    const bool keep_on = (state_ == State::kRunning ||
                          state_ == State::kRunningRestartPending) &&
                         stop_waiters_ == 0 && !cancelled && system_up;
    if (!keep_on) {
      CancelLocked();
      TransitionLocked(Event::kCallEndsStop);
    } else if (state_ == State::kRunningRestartPending) {
      TransitionLocked(Event::kCallEndsKeepOn);
      ArmLocked(ExpectedLocked(schedule_.call())).IgnoreError();  // late calls fire at once
    } else {
      TransitionLocked(Event::kCallEndsKeepOn);
      ScheduleNextLocked(end);
    }
    stripe_->call_ended.WakeAll();
  }
  if (cancelled) std::rethrow_exception(cancelled);
}

void TimerCore::RecordCallLocked(const TimerEvent& event,
                                 absl::Duration run_time) {
  CallRecord& r = RecordLocked();
  Counters& c = r.counters;
  ++c.fires;
  const absl::Duration lateness = event.actual_time - event.expected_time;
  if (lateness < absl::ZeroDuration()) ++c.early_fires;  // a bug
  c.lateness_max_ns =
      std::max(c.lateness_max_ns, absl::ToInt64Nanoseconds(lateness));
  r.last_run_ns = absl::ToInt64Nanoseconds(run_time);
  c.run_time_max_ns = std::max(c.run_time_max_ns, r.last_run_ns);
  if (latency_percentiles_) {
    if (r.histograms == nullptr) r.histograms = std::make_unique<Histograms>();
    r.histograms->lateness.Record(lateness);
    r.histograms->run_time.Record(run_time);
  }
}

void TimerCore::SkipToLatestDueLocked(Instant due_by) {
  const int64_t skipped = schedule_.SkipToLatestDue(due_by, rules_);
  if (skipped == 0) return;  // the common case
  missed_since_last_ += skipped;
  RecordLocked().counters.missed_periods += static_cast<uint64_t>(skipped);
  armed_for_next_ = false;  // an arming for the old next call is early now
}

void TimerCore::ScheduleNextLocked(Instant end) {
  // Every periodic call is armed for its exact instant (periodic_schedule.h).
  const PeriodicSchedule::Next next = schedule_.AfterRun(end, rules_);
  if (!next.overrun) {  // on time: the common case
    // Armed for this call already (the provisional arming at the expiry
    // that queued the call just ended, still in the wheel): nothing to do,
    // and the fire touched the wheel's lock once.
    if (armed_seq_ != 0 && armed_for_next_) {
      armed_for_next_ = false;  // it is armed for the current call now
      return;
    }
    ArmLocked(ExpectedLocked(schedule_.call())).IgnoreError();
    return;
  }
  Counters& c = RecordLocked().counters;
  ++c.overruns;
  missed_since_last_ += next.skipped;
  c.missed_periods += static_cast<uint64_t>(next.skipped);
  ArmLocked(ExpectedLocked(schedule_.call())).IgnoreError();
}

}  // namespace timer
}  // namespace cyber
