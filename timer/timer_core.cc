#include "timer/timer_core.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "cyber/common/log.h"

namespace cyber {
namespace timer {

// Memory budget of a timer that never ran (the histograms come at the first
// call): a robot module keeps thousands of timeouts armed.
static_assert(sizeof(TimerCore) <= 768, "TimerCore grew past its budget");

TimerCore::TimerCore(TickDriver* driver, TimerOptions options)
    : driver_(driver), options_(std::move(options)) {}

TimerCore::~TimerCore() {
  // Normally already cancelled by Retire(); make sure before ~WheelEntry.
  driver_->Cancel(this);
}

std::shared_ptr<TimerCore> TimerCore::SharedSelf() {
  return std::static_pointer_cast<TimerCore>(shared_from_this());
}

Instant TimerCore::ExpectedLocked(int64_t k) const {
  return origin_ + options_.period * k;
}

absl::Status TimerCore::ArmLocked() { return ArmAtLocked(ExpectedLocked(k_)); }

absl::Status TimerCore::ArmAtLocked(Instant deadline) {
  auto armed = driver_->Arm(this, deadline);
  if (!armed.ok()) {
    running_ = false;
    const absl::Status status(
        armed.status().code(),
        "timer \"" + options_.name + "\": " + std::string(armed.status().message()));
    AERROR << status.message();
    return status;
  }
  armed_seq_ = armed->arm_seq;
  return absl::OkStatus();
}

absl::Status TimerCore::Start() {
  MutexLock lock(&mu_);
  if (retired_) {
    return absl::FailedPreconditionError("timer \"" + options_.name +
                                         "\": reconfigured or destroyed");
  }
  if (running_) return absl::OkStatus();
  ++generation_;
  running_ = true;
  const Instant now = driver_->clock()->Now();
  // A periodic schedule starts on the first tick boundary at or after now,
  // so that periods of whole ticks land exactly on ticks and lose nothing to
  // rounding; the first call is still no earlier than now + period. A
  // oneshot counts from now exactly: its deadline rounds up to a tick.
  origin_ = options_.oneshot
                ? now
                : driver_->wheel().TickToInstant(driver_->wheel().DeadlineToTick(now));
  k_ = 1;
  missed_since_last_ = 0;
  return ArmLocked();
}

void TimerCore::Stop() {
  Dispatcher* const dispatcher = driver_->dispatcher();
  const void* const me = dispatcher->CurrentExecution();
  mu_.Lock();
  ++generation_;  // drops runs already handed to the dispatcher
  running_ = false;
  driver_->Cancel(this);
  // Synchronous: wait out a run in progress, unless we are that run (it may
  // have moved to another thread since it started, so executions are
  // compared, not threads). A coroutine waits by yielding: blocking its
  // processor could starve the very callback it waits for.
  while (busy_ && callback_execution_ != me) {
    mu_.Unlock();
    const bool yielded = dispatcher->YieldWhileWaiting();
    mu_.Lock();
    if (!yielded && busy_ && callback_execution_ != me) run_finished_.Wait(&mu_);
  }
  mu_.Unlock();
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
  return running_;
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
  uint64_t generation;
  {
    MutexLock lock(&mu_);
    if (!running_ || arm_seq != armed_seq_) return;  // stopped or re-armed
    if (in_flight_ && in_flight_generation_ == generation_) {
      // The provisional arming (below) came due while this schedule's run is
      // still queued or running: an overrun. That run re-arms per the
      // overrun policy when it ends; never start a second one beside it.
      return;
    }
    if (busy_) {
      // A run of an earlier schedule is still finishing (the timer was
      // restarted from inside its own callback). Never run concurrently with
      // it: try again at the next tick.
      ArmAtLocked(driver_->clock()->Now()).IgnoreError();
      return;
    }
    generation = generation_;
    in_flight_ = true;
    in_flight_generation_ = generation;
    if (!options_.oneshot) {
      // Provisionally arm the next period now, on the tick thread, so the
      // tick thread plans its next sleep with it; the run's own re-arm then
      // lands on the same tick and needs no extra wake-up (one wake per
      // period, not two).
      ArmAtLocked(ExpectedLocked(k_ + 1)).IgnoreError();
    }
  }
  auto self = SharedSelf();
  if (driver_->dispatcher()->Dispatch(
          [self, generation] { self->Run(generation); })) {
    return;
  }
  // Refused (queue full or shutting down): never silently. A periodic timer
  // moves on to its next period; a oneshot retries at the next tick.
  MutexLock lock(&mu_);
  ++counters_.dispatch_refusals;
  if (in_flight_generation_ == generation) in_flight_ = false;
  if (!running_ || generation != generation_) return;
  if (options_.oneshot) {
    AERROR_EVERY(100) << "timer \"" << options_.name
                      << "\": dispatcher refused the callback; retrying at "
                         "the next tick (refusals: "
                      << counters_.dispatch_refusals << ")";
    origin_ = driver_->clock()->Now() - options_.period;  // due now
    k_ = 1;
  } else {
    AERROR_EVERY(100) << "timer \"" << options_.name
                      << "\": dispatcher refused the callback; skipping to "
                         "the next period (refusals: "
                      << counters_.dispatch_refusals << ")";
    ++k_;
    ++missed_since_last_;
    ++counters_.missed_periods;
  }
  ArmLocked().IgnoreError();  // logged inside
}

void TimerCore::Run(uint64_t generation) {
  TimerEvent event;
  {
    MutexLock lock(&mu_);
    if (generation != generation_ || !running_) {  // dropped by Stop
      if (in_flight_generation_ == generation) in_flight_ = false;
      return;
    }
    // A oneshot is done once its call begins: a Start() from now on (from
    // its own callback too) begins a new schedule instead of finding the
    // timer still running and doing nothing.
    if (options_.oneshot) running_ = false;
    busy_ = true;
    callback_execution_ = driver_->dispatcher()->CurrentExecution();
    event.expected_time = ExpectedLocked(k_);
    event.actual_time = driver_->clock()->Now();
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
    if (options_.event_callback) {
      options_.event_callback(event);
    } else {
      options_.callback();
    }
  } catch (const ExecutionCancelled&) {
    cancelled = std::current_exception();
  } catch (const std::exception& e) {
    failure = "threw";
    what = e.what();
  } catch (...) {
    failure = "threw a non-std::exception";
  }
  const Instant end = driver_->clock()->Now();

  {
    MutexLock lock(&mu_);
    ++counters_.fires;
    if (event.actual_time < event.expected_time) ++counters_.early_fires;  // a bug
    if (histograms_ == nullptr) histograms_ = std::make_unique<Histograms>();
    histograms_->lateness.Record(event.actual_time - event.expected_time);
    last_run_ = end - event.actual_time;
    histograms_->run_time.Record(last_run_);
    if (failure != nullptr) {
      ++counters_.exceptions;
      AERROR << "timer \"" << options_.name << "\": callback " << failure
             << (what.empty() ? "" : ": ") << what << " (exceptions so far: "
             << counters_.exceptions << ")"
             << (options_.oneshot ? "" : "; the timer keeps running");
    }
    if (cancelled) {
      running_ = false;  // the dispatcher is going away: no further calls
    } else if (generation == generation_ && running_ && !options_.oneshot) {
      ScheduleNextLocked(end);
    }
    if (in_flight_generation_ == generation) in_flight_ = false;
    busy_ = false;
    callback_execution_ = nullptr;
    run_finished_.SignalAll();
  }
  if (cancelled) std::rethrow_exception(cancelled);
}

void TimerCore::ScheduleNextLocked(Instant end) {
  const absl::Duration period = options_.period;
  const TimingWheel& wheel = driver_->wheel();
  // The earliest instant anything armed now can fire: the first tick at or
  // after the end of the run that the wheel has not processed yet. A call
  // expected before it can no longer happen on time, even if the run itself
  // was short (the dispatch was late): treating that as on time would arm a
  // processed tick, which the wheel moves to the next one, and the timer
  // would then run one period behind for good.
  const Instant earliest = wheel.TickToInstant(
      std::max(wheel.DeadlineToTick(end), wheel.now() + 1));
  if (ExpectedLocked(k_ + 1) >= earliest) {  // on time: the common case
    ++k_;
    ArmLocked().IgnoreError();
    return;
  }
  ++counters_.overruns;
  // j: the latest expected call before `earliest`; calls k+1..j are missed.
  absl::Duration remainder;
  int64_t j = absl::IDivDuration(earliest - origin_, period, &remainder);
  if (remainder == absl::ZeroDuration()) --j;  // expected_j == earliest is on time
  const int64_t m = j - k_;  // >= 1
  int64_t skipped = 0;
  switch (options_.overrun_policy) {
    case OverrunPolicy::kSkip:
      if (ExpectedLocked(j + 1) - earliest >= period / 2) {
        k_ = j;  // one late call, as soon as possible, for period j
        skipped = m - 1;
      } else {
        k_ = j + 1;  // too close to the next on-phase call: skip to it
        skipped = m;
      }
      break;
    case OverrunPolicy::kDelay:
      origin_ = end;  // re-based: next call one period after this run
      k_ = 1;
      skipped = m;
      break;
    case OverrunPolicy::kBurst:
      if (m > options_.max_burst) {
        skipped = m - options_.max_burst;
      }
      k_ += 1 + skipped;  // catch up from there, back to back
      break;
  }
  missed_since_last_ += skipped;
  counters_.missed_periods += static_cast<uint64_t>(skipped);
  ArmLocked().IgnoreError();
}

}  // namespace timer
}  // namespace cyber
