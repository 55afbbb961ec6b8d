#include "timer/timer_core.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"

namespace cyber {
namespace timer {

namespace {
// Longest back-off between retries of a refused oneshot.
constexpr absl::Duration kMaxRefusalBackoff = absl::Seconds(1);
}  // namespace

TimerCore::TimerCore(std::shared_ptr<WheelFrontEnd> front, std::string name)
    : fixed_front_(std::move(front)) {
  MutexLock lock(&mu_);
  front_ = fixed_front_;
  name_ = std::move(name);
}

TimerCore::~TimerCore() {
  // Normally never armed here (Stop/Retire cancel); the front end is held,
  // so this cancel is always safe.
  MutexLock lock(&mu_);
  if (front_) front_->Cancel(this);
}

const char* TimerCore::StateName(State state) {
  switch (state) {
    case State::kIdle:
      return "idle";
    case State::kArmed:
      return "armed";
    case State::kQueued:
      return "queued";
    case State::kRunning:
      return "running";
    case State::kFinishing:
      return "finishing";
  }
  return "unknown";
}

Instant TimerCore::ExpectedLocked(int64_t k) const {
  return origin_ + options_->period * k;
}

void TimerCore::CancelLocked() {
  if (armed_seq_ != 0 && front_) front_->Cancel(this);
  armed_seq_ = 0;
}

absl::Status TimerCore::ArmLocked(Instant deadline) {
  auto armed = front_->Arm(this, deadline);
  if (!armed.ok()) {
    armed_seq_ = 0;
    state_ = State::kIdle;
    const absl::Status status(
        armed.status().code(),
        absl::StrCat("timer \"", name_, "\": ", armed.status().message()));
    AERROR << status.message();
    return status;
  }
  armed_seq_ = armed->arm_seq;
  return absl::OkStatus();
}

void TimerCore::Configure(std::shared_ptr<const TimerOptions> options,
                          absl::Status status) {
  Stop();
  MutexLock lock(&mu_);
  // A Start() that raced in after the Stop() is undone: the new options
  // begin with the next Start().
  CancelLocked();
  if (state_ == State::kArmed || state_ == State::kQueued) state_ = State::kIdle;
  if (state_ == State::kRunning) state_ = State::kFinishing;
  restart_pending_ = false;
  // Statistics describe one configuration: they start again at zero (a
  // call of the old one still running is not counted in the new).
  ++config_epoch_;
  counters_ = TimerStatistics();
  histograms_.reset();
  last_run_ = absl::ZeroDuration();
  missed_since_last_ = 0;
  name_ = options->name;
  options_ = std::move(options);
  config_status_ = std::move(status);
  configured_ = true;
}

absl::Status TimerCore::BindLocked(std::shared_ptr<WheelFrontEnd> front) {
  // The options were checked against the default geometry at Configure;
  // check them against this wheel's (cheap when they are fine).
  const absl::Status s =
      ValidateTimerOptions(*options_, front->tick(), front->max_delay());
  if (!s.ok()) return s;
  if (front_ != front) {
    if (front_) front_->Cancel(this);
    front_ = std::move(front);
  }
  priority_ = options_->priority >= 0
                  ? options_->priority
                  : front_->dispatcher()->PriorityFor(name_);
  return absl::OkStatus();
}

absl::Status TimerCore::Start(std::shared_ptr<WheelFrontEnd> front) {
  return Begin(std::move(front), /*reset=*/false);
}

absl::Status TimerCore::Reset(std::shared_ptr<WheelFrontEnd> front) {
  return Begin(std::move(front), /*reset=*/true);
}

absl::Status TimerCore::Begin(std::shared_ptr<WheelFrontEnd> front, bool reset) {
  MutexLock lock(&mu_);
  if (retired_) {
    return absl::FailedPreconditionError(
        absl::StrCat("timer \"", name_, "\": destroyed"));
  }
  if (!configured_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "timer \"", name_,
        "\": Start() before SetTimerOption()/Configure(): no period or "
        "callback set"));
  }
  if (!config_status_.ok()) return config_status_;
  if ((state_ == State::kArmed || state_ == State::kQueued) &&
      front_->closed()) {
    // Its system shut down under it: the schedule is over.
    CancelLocked();
    state_ = State::kIdle;
  }
  switch (state_) {
    case State::kArmed:
    case State::kQueued:
      if (!reset) return absl::OkStatus();  // already on
      // A new countdown: the armed entry is cancelled, a queued run drops
      // out (its token no longer matches), and the schedule starts afresh.
      CancelLocked();
      state_ = State::kIdle;
      break;
    case State::kRunning:
      if (!reset) return absl::OkStatus();  // already on
      // Its call runs: the new schedule is armed when that call ends (as a
      // restart from kFinishing), never beside it.
      CancelLocked();
      break;
    case State::kIdle:
    case State::kFinishing:
      break;
  }
  Instant now;
  if (front == nullptr || !front->TryNow(&now)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "timer \"", name_, "\": the timer system is shut down (",
        front ? "its TickDriver \"" + front->name() + "\" is gone"
              : "cyber::Shutdown() was called; cyber::Init() starts a new one",
        ")"));
  }
  if (state_ == State::kIdle) {
    const absl::Status bound = BindLocked(std::move(front));
    if (!bound.ok()) return bound;
  }
  // A periodic schedule starts on the first tick boundary at or after now,
  // so that periods of whole ticks land exactly on ticks and lose nothing to
  // rounding; the first call is still no earlier than now + period. A
  // oneshot counts from now exactly: its deadline rounds up to a tick.
  origin_ = options_->oneshot ? now : front_->FireInstant(now);
  k_ = 1;
  missed_since_last_ = 0;
  refusals_in_a_row_ = 0;
  if (state_ == State::kFinishing || state_ == State::kRunning) {
    // Its call is still running (it is restarting itself, or was stopped
    // and started again meanwhile, or reset): arm when that call ends, never
    // beside it.
    state_ = State::kRunning;
    restart_pending_ = true;
    return absl::OkStatus();
  }
  state_ = State::kArmed;
  return ArmLocked(ExpectedLocked(k_));
}

void TimerCore::Stop() {
  const void* const me = CurrentExecutionId();
  MutexLock lock(&mu_);
  CancelLocked();
  restart_pending_ = false;
  switch (state_) {
    case State::kIdle:
      return;
    case State::kArmed:
    case State::kQueued:  // its run finds the state changed and drops out
      state_ = State::kIdle;
      return;
    case State::kRunning:
    case State::kFinishing:
      state_ = State::kFinishing;
      break;
  }
  if (runner_ == me) return;  // from the callback itself: no re-arm, no wait
  // Wait for the end of the call in flight; while we wait its end never
  // re-arms (stop_waiters_), whatever the callback does to its timer.
  ++stop_waiters_;
  const uint64_t ended = calls_ended_;
  while (calls_ended_ == ended) call_ended_.Wait(&mu_);
  --stop_waiters_;
}

void TimerCore::Retire() {
  {
    MutexLock lock(&mu_);
    retired_ = true;
  }
  Stop();
}

bool TimerCore::IsRunning() const {
  MutexLock lock(&mu_);
  if (state_ == State::kRunning) return true;
  // Armed or queued on a system that shut down: never going to run.
  return (state_ == State::kArmed || state_ == State::kQueued) &&
         !front_->closed();
}

std::string TimerCore::name() const {
  MutexLock lock(&mu_);
  return name_;
}

TimerStatistics TimerCore::Statistics() const {
  MutexLock lock(&mu_);
  TimerStatistics s = counters_;
  if (histograms_ != nullptr) {
    s.lateness_p50 = histograms_->lateness.Percentile(0.50);
    s.lateness_p99 = histograms_->lateness.Percentile(0.99);
    s.lateness_max = histograms_->lateness.max();
    s.run_time_p99 = histograms_->run_time.Percentile(0.99);
    s.run_time_max = histograms_->run_time.max();
  }
  return s;
}

void TimerCore::OnExpired(uint32_t arm_seq) {
  std::shared_ptr<TimerCore> self;
  uint64_t token;
  int priority;
  Dispatcher* dispatcher;
  {
    MutexLock lock(&mu_);
    if (arm_seq == 0 || arm_seq != armed_seq_) return;  // stale
    armed_seq_ = 0;
    switch (state_) {
      case State::kArmed:
        break;
      case State::kQueued:
        // The provisional arming came due and the call still has not begun
        // (its processor is busy with higher priorities, or the process was
        // stalled): that period is missed. Count it now, so starvation
        // shows, and let the queued call stand for the next one (under
        // kSkip: for the latest one due).
        ++k_;
        ++missed_since_last_;
        ++counters_.missed_periods;
        SkipToLatestDueLocked(front_->ProcessedInstant());
        ArmLocked(ExpectedLocked(k_ + 1)).IgnoreError();
        return;
      case State::kRunning:  // an overrun: the call's end re-arms
      case State::kIdle:
      case State::kFinishing:
        return;
    }
    // Dispatched late (the tick thread was stalled, or processed a batch of
    // ticks at once): under kSkip this call stands for the latest due period.
    SkipToLatestDueLocked(front_->ProcessedInstant());
    state_ = State::kQueued;
    token = ++queued_token_;
    if (!options_->oneshot) {
      // Provisionally arm the next period now, on the tick thread, so the
      // tick thread plans its next sleep with it; the call's own re-arm
      // then lands on the same tick and needs no extra wake-up.
      ArmLocked(ExpectedLocked(k_ + 1)).IgnoreError();
      state_ = State::kQueued;  // (an arm failure only ends the next period)
    }
    priority = priority_;
    dispatcher = front_->dispatcher();
    self = std::static_pointer_cast<TimerCore>(shared_from_this());
  }
  if (!dispatcher->Dispatch([self, token] { self->Run(token); }, priority)) {
    HandleRefusal(token);
  }
}

void TimerCore::HandleRefusal(uint64_t token) {
  // Refused (queue full or shutting down): never silently, never busily.
  MutexLock lock(&mu_);
  ++counters_.dispatch_refusals;
  if (state_ != State::kQueued || token != queued_token_) return;  // stopped
  state_ = State::kArmed;
  if (options_->oneshot) {
    const absl::Duration backoff =
        std::min(front_->tick() * (int64_t{1} << std::min(refusals_in_a_row_, 20)),
                 kMaxRefusalBackoff);
    ++refusals_in_a_row_;
    AERROR_EVERY(100) << "timer \"" << name_
                      << "\": dispatcher refused the callback; retrying in "
                      << absl::FormatDuration(backoff) << " (refusals: "
                      << counters_.dispatch_refusals << ")";
    // From the tick being processed (not the clock), so that a simulation
    // sees the same retries whatever the clock did meanwhile.
    ArmLocked(front_->ProcessedInstant() + backoff).IgnoreError();
  } else {
    AERROR_EVERY(100) << "timer \"" << name_
                      << "\": dispatcher refused the callback; skipping to "
                         "the next period (refusals: "
                      << counters_.dispatch_refusals << ")";
    ++k_;
    ++missed_since_last_;
    ++counters_.missed_periods;
    ArmLocked(ExpectedLocked(k_)).IgnoreError();
  }
}

void TimerCore::Run(uint64_t token) {
  TimerEvent event;
  std::shared_ptr<const TimerOptions> options;
  uint64_t epoch;
  {
    MutexLock lock(&mu_);
    if (state_ != State::kQueued || token != queued_token_) return;  // dropped
    if (!front_->TryNow(&event.actual_time)) {
      // The timer system shut down while this call was queued.
      CancelLocked();
      state_ = State::kIdle;
      AWARN << "timer \"" << name_
            << "\": its timer system shut down; the timer stopped";
      return;
    }
    // A oneshot is done once its call begins: a Start() from now on (from
    // its own callback too) begins a new schedule.
    // Begun late (a busy processor, or a stall while it was queued): under
    // kSkip it stands for the latest period due by now.
    SkipToLatestDueLocked(front_->TickFloor(event.actual_time));
    state_ = options_->oneshot ? State::kFinishing : State::kRunning;
    runner_ = CurrentExecutionId();
    refusals_in_a_row_ = 0;
    options = options_;  // Configure() from the callback cannot free it
    epoch = config_epoch_;
    event.expected_time = ExpectedLocked(k_);
    event.missed_periods = missed_since_last_;
    event.last_run_duration = last_run_;
    missed_since_last_ = 0;
  }

  // The user's code: no lock held; exceptions do not escape, except the
  // dispatcher's own cancellation, which is passed on after the bookkeeping.
  const char* failure = nullptr;
  std::string what;
  std::exception_ptr cancelled;
  try {
    if (options->event_callback) {
      options->event_callback(event);
    } else {
      options->callback();
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
    MutexLock lock(&mu_);
    Instant end;
    const bool system_up = front_->TryNow(&end);
    if (!system_up) end = event.actual_time;
    const bool same_config = epoch == config_epoch_;
    if (same_config) {
      ++counters_.fires;
      if (event.actual_time < event.expected_time) ++counters_.early_fires;  // a bug
      if (histograms_ == nullptr) histograms_ = std::make_unique<Histograms>();
      histograms_->lateness.Record(event.actual_time - event.expected_time);
      last_run_ = end - event.actual_time;
      histograms_->run_time.Record(last_run_);
      if (failure != nullptr) ++counters_.exceptions;
    }
    if (failure != nullptr) {
      AERROR << "timer \"" << name_ << "\": callback " << failure
             << (what.empty() ? "" : ": ") << what << " (exceptions so far: "
             << counters_.exceptions << ")"
             << (options->oneshot ? "" : "; the timer keeps running");
    }
    runner_ = nullptr;
    ++calls_ended_;
    const bool keep_on = state_ == State::kRunning && stop_waiters_ == 0 &&
                         !retired_ && !cancelled && system_up;
    if (!keep_on) {
      CancelLocked();
      state_ = State::kIdle;
      restart_pending_ = false;
    } else if (restart_pending_) {
      restart_pending_ = false;
      state_ = State::kArmed;
      ArmLocked(ExpectedLocked(k_)).IgnoreError();  // late calls fire at once
    } else {
      state_ = State::kArmed;
      ScheduleNextLocked(end);
    }
    call_ended_.WakeAll();
  }
  if (cancelled) std::rethrow_exception(cancelled);
}

void TimerCore::SkipToLatestDueLocked(Instant due_by) {
  if (options_->oneshot || options_->overrun_policy != OverrunPolicy::kSkip) {
    return;
  }
  if (ExpectedLocked(k_ + 1) > due_by) return;  // the common case
  absl::Duration remainder;
  const int64_t j =
      absl::IDivDuration(due_by - origin_, options_->period, &remainder);
  missed_since_last_ += j - k_;
  counters_.missed_periods += static_cast<uint64_t>(j - k_);
  k_ = j;
}

void TimerCore::ScheduleNextLocked(Instant end) {
  // Decided in ticks, where the wheel decides: call k fires on tick
  // T(k) = TickOf(expected(k)). The earliest tick anything armed now can
  // fire on is E = max(tick of `end`, first unprocessed tick). Call k is on
  // time iff T(k) >= E, i.e. expected(k) > instant of tick E - 1.
  const absl::Duration period = options_->period;
  const Tick earliest = front_->EarliestTick(end);
  const Instant last_missable = front_->InstantOf(earliest - 1);
  if (ExpectedLocked(k_ + 1) > last_missable) {  // on time: the common case
    ++k_;
    ArmLocked(ExpectedLocked(k_)).IgnoreError();
    return;
  }
  ++counters_.overruns;
  // j: the last call that cannot fire on its own tick (T(j) < E); calls
  // k_+1 .. j are missed, j+1 is the first on time.
  absl::Duration remainder;
  const int64_t j = absl::IDivDuration(last_missable - origin_, period, &remainder);
  const int64_t m = j - k_;  // >= 1
  int64_t skipped = 0;
  switch (options_->overrun_policy) {
    case OverrunPolicy::kSkip: {
      // One late call for period j at tick E, unless the next on-phase call
      // (j+1, on tick T(j+1) >= E) is less than half a period after it.
      const absl::Duration gap =
          front_->InstantOf(front_->TickOf(ExpectedLocked(j + 1))) -
          front_->InstantOf(earliest);
      if (gap >= period / 2) {
        k_ = j;
        skipped = m - 1;
      } else {
        k_ = j + 1;
        skipped = m;
      }
      break;
    }
    case OverrunPolicy::kDelay:
      origin_ = end;  // re-based: next call one period after this run
      k_ = 1;
      skipped = m;
      break;
    case OverrunPolicy::kBurst:
      if (m > options_->max_burst) skipped = m - options_->max_burst;
      k_ += 1 + skipped;  // catch up from there, back to back
      break;
  }
  missed_since_last_ += skipped;
  counters_.missed_periods += static_cast<uint64_t>(skipped);
  ArmLocked(ExpectedLocked(k_)).IgnoreError();
}

}  // namespace timer
}  // namespace cyber
