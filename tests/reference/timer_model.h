// TimerModel: the obviously-correct reference for one Timer's schedule
// (timer/timer.h, timer/timer_options.h), used by the timer fuzzer
// (tests/fuzz/timer_ops_fuzzer.cc) to check every call a Timer makes.
//
// Why a model: "no early call, no call after Stop(), no lost call, phase
// kept" is only checkable against a precise expectation of *which* call is
// next and *when* it is due. The model is written from the documented
// contract, not from timer_core.cc: plain arithmetic on expected times
// origin + k * period, the three overrun policies in the words of
// timer_options.h, and the wheel's promise that a deadline fires at its
// rounded-up tick, or at the next unprocessed tick if that has passed. It has
// no wheel, no clock, no threads and no locks; the caller feeds it what
// happened (started, stopped, a call began, a run ended, a dispatch was
// refused) with the time and the wheel's last processed tick, and asks what
// must happen next.
//
// Contract, as modelled:
//   - Start() at `now`: a periodic schedule's origin is the first tick
//     boundary at or after now; a oneshot's origin is now itself. Call k
//     (k = 1, 2, ...) is expected at origin + k * period. Start() while
//     running changes nothing.
//   - A call is made at the tick its expected time rounds up to, or at the
//     tick after the last processed one if that is later (never early).
//   - A oneshot is done once its call begins: it is no longer running, and a
//     Start() (also from its own callback) begins a new schedule.
//   - After a periodic run ending at `end`, the earliest tick a call can be
//     made at is the first tick at or after `end` not yet processed. If the
//     next call's expected time is at or after it, that call is next.
//     Otherwise calls k+1..j were missed (j: the last one expected before
//     that tick) and, by policy:
//       kSkip:  one late call for j, unless call j+1 is expected less than
//               half a period after that tick, in which case j+1 is next;
//               the other missed calls are skipped;
//       kDelay: the schedule is re-based: origin = end, the next call is
//               one period after the run; all missed calls are skipped;
//       kBurst: the latest max_burst missed calls are made back to back
//               (older ones skipped), then the schedule continues.
//     Skipped calls are counted (missed_periods) and reported by the next
//     call's TimerEvent::missed_periods; a run that ends too late for the
//     next call is an overrun.
//   - A late dispatch or start: under kSkip, a call dispatched when the
//     wheel has processed the ticks of later periods as well, or beginning
//     after their ticks, stands for the latest of them; the others are
//     skipped (counted, reported as missed).
//   - A refused dispatch: a periodic timer skips that call (counted as
//     missed) and goes on with the next; a oneshot is due again after a
//     back-off of 1, 2, 4, ... ticks (capped at 1 s) counted from the tick
//     that was refused, never busily (the back-off restarts with each
//     Start() and each call that begins); its expected time stays the
//     original deadline.
//   - Stop() ends the schedule: no call after it returns (the run in
//     progress, if it called Stop() itself, finishes).
//
// Statistics: the counters above, and every call's lateness and run time,
// so that a caller can check the reported maxima and percentiles.
//
// Single-threaded; one instance per Timer configuration (statistics start at
// zero with each Configure()).

#ifndef TESTS_REFERENCE_TIMER_MODEL_H_
#define TESTS_REFERENCE_TIMER_MODEL_H_

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/time/instant.h"

namespace cyber {
namespace reference {

// The wheel's tick arithmetic, from its documentation: tick 0 is at `epoch`,
// a deadline fires at the first tick at or after it.
class TickGrid {
 public:
  using Tick = uint64_t;
  TickGrid(Instant epoch, absl::Duration tick) : epoch_(epoch), tick_(tick) {}

  // First tick at or after `t` (0 before the epoch).
  Tick Ceil(Instant t) const {
    const absl::Duration since = t - epoch_;
    if (since <= absl::ZeroDuration()) return 0;
    absl::Duration rem;
    const int64_t whole = absl::IDivDuration(since, tick_, &rem);
    return static_cast<Tick>(whole) + (rem > absl::ZeroDuration() ? 1 : 0);
  }
  // Last tick at or before `t`.
  Tick Floor(Instant t) const {
    const absl::Duration since = t - epoch_;
    if (since <= absl::ZeroDuration()) return 0;
    absl::Duration rem;
    return static_cast<Tick>(absl::IDivDuration(since, tick_, &rem));
  }
  Instant At(Tick t) const { return epoch_ + tick_ * static_cast<int64_t>(t); }

 private:
  Instant epoch_;
  absl::Duration tick_;
};

class TimerModel {
 public:
  using Tick = uint64_t;
  enum class Policy { kSkip, kDelay, kBurst };

  struct Options {
    absl::Duration period;  // the delay, for a oneshot
    bool oneshot = false;
    bool has_callback = true;
    Policy policy = Policy::kSkip;
    int max_burst = 3;
  };

  struct Counters {
    uint64_t fires = 0;
    uint64_t overruns = 0;
    uint64_t missed_periods = 0;
    uint64_t exceptions = 0;
    uint64_t dispatch_refusals = 0;
  };

  // What Configure()/Schedule() must answer for `o` on a wheel with the
  // given resolution and maximum delay: OK, InvalidArgument (period not
  // positive or below the resolution, no callback, kBurst with max_burst
  // < 1) or OutOfRange (period above the maximum).
  static absl::StatusCode ConfigCode(const Options& o, absl::Duration resolution,
                                     absl::Duration max_period) {
    if (o.period <= absl::ZeroDuration() || o.period < resolution) {
      return absl::StatusCode::kInvalidArgument;
    }
    if (o.period > max_period) return absl::StatusCode::kOutOfRange;
    if (!o.has_callback) return absl::StatusCode::kInvalidArgument;
    if (o.policy == Policy::kBurst && o.max_burst < 1) {
      return absl::StatusCode::kInvalidArgument;
    }
    return absl::StatusCode::kOk;
  }

  // `grid`: the wheel's ticks.
  // REQUIRES: ConfigCode(options, ...) == kOk.
  TimerModel(const TickGrid& grid, Options options)
      : grid_(grid), options_(options) {}

  const TickGrid& grid() const { return grid_; }

  // --- Events -----------------------------------------------------------
  // Schedule() at `now`, the wheel having processed ticks up to `processed`.
  void Start(Instant now, Tick processed) {
    if (running_) return;
    running_ = true;
    ++generation_;
    origin_ = options_.oneshot ? now : grid_.At(grid_.Ceil(now));
    k_ = 1;
    missed_since_last_ = 0;
    refusals_in_a_row_ = 0;
    ArmFor(processed);
  }

  void Stop() {
    running_ = false;
    ++generation_;
  }

  // Checks a call that began at `actual`, the wheel having processed up to
  // `processed`, reporting `expected` and `missed` (its TimerEvent;
  // `has_event` false for a plain callback, which reports nothing).
  // `undelayed`: no other callback has taken simulated time since the tick
  // thread woke, so the call must be exactly at its tick. Returns "" if the
  // call is the one the contract allows, else what is wrong.
  std::string CheckCall(bool has_event, Instant expected, int64_t missed,
                        Instant actual, Tick processed, bool undelayed) const {
    std::ostringstream out;
    if (!running_) {
      out << "called while not running (stopped, done, or never started)";
      return out.str();
    }
    const Instant want = Expected(k_);
    if (has_event && expected != want) {
      out << "TimerEvent.expected_time " << expected << ", but call " << k_
          << " is expected at " << want << " (origin " << origin_ << ", period "
          << absl::FormatDuration(options_.period) << ")";
      return out.str();
    }
    if (actual < want) {
      out << "early: called at " << actual << ", expected " << want;
      return out.str();
    }
    if (processed < due_tick_) {
      out << "called at tick " << processed << ", before its tick " << due_tick_;
      return out.str();
    }
    if (undelayed && (processed != due_tick_ || actual != grid_.At(due_tick_))) {
      out << "late: called at " << actual << " (tick " << processed
          << "), due at tick " << due_tick_ << " = " << grid_.At(due_tick_);
      return out.str();
    }
    if (has_event && missed != missed_since_last_) {
      out << "TimerEvent.missed_periods " << missed << ", expected "
          << missed_since_last_;
      return out.str();
    }
    return "";
  }

  // The pending call is dispatched, or begins, when ticks up to `processed`
  // have come (the wheel's processed tick, or the tick of the instant the
  // call begins, whichever is later): under kSkip, if later periods are due
  // as well, it stands for the latest of them and the others are skipped
  // (counted). Call before CheckCall().
  void Dispatched(Tick processed) {
    if (!running_ || options_.oneshot || options_.policy != Policy::kSkip) return;
    if (grid_.Ceil(Expected(k_ + 1)) > processed) return;
    absl::Duration rem;
    int64_t j = absl::IDivDuration(grid_.At(processed) - origin_, options_.period, &rem);
    while (grid_.Ceil(Expected(j + 1)) <= processed) ++j;  // (never, by the
    while (grid_.Ceil(Expected(j)) > processed) --j;       // arithmetic)
    missed_since_last_ += j - k_;
    counters_.missed_periods += static_cast<uint64_t>(j - k_);
    k_ = j;
  }

  // The call CheckCall() accepted has begun at `actual`. Returns the
  // schedule's generation, for EndRun().
  uint64_t BeginCall(Instant actual) {
    ++counters_.fires;
    call_started_ = actual;
    lateness_.push_back(std::max(absl::ZeroDuration(), actual - Expected(k_)));
    missed_since_last_ = 0;
    refusals_in_a_row_ = 0;
    if (options_.oneshot) running_ = false;  // done once its call begins
    return generation_;
  }

  // The run of a call of generation `generation` ended at `end` (`threw`:
  // by an exception), the wheel having processed up to `processed`.
  void EndRun(uint64_t generation, Instant end, Tick processed, bool threw) {
    if (threw) ++counters_.exceptions;
    run_times_.push_back(end - call_started_);
    if (generation != generation_ || !running_ || options_.oneshot) return;
    const absl::Duration p = options_.period;
    // Decided in ticks: call k fires on tick Ceil(expected(k)); the first
    // tick anything armed now can fire on is `first_tick`. A call whose
    // tick is at or after it is on time, even if its instant is earlier
    // (a 2.5 ms period: 12.5 ms and a run ending at 12.2 ms share tick 7).
    const Tick first_tick = std::max(grid_.Ceil(end), processed + 1);
    if (grid_.Ceil(Expected(k_ + 1)) >= first_tick) {
      ++k_;
      ArmFor(processed);
      return;
    }
    ++counters_.overruns;
    // j: the last call whose tick is before first_tick.
    absl::Duration rem;
    int64_t j = absl::IDivDuration(grid_.At(first_tick - 1) - origin_, p, &rem);
    while (grid_.Ceil(Expected(j + 1)) < first_tick) ++j;  // (never, by the
    while (grid_.Ceil(Expected(j)) >= first_tick) --j;     // arithmetic)
    const int64_t missed = j - k_;
    int64_t skipped = 0;
    switch (options_.policy) {
      case Policy::kSkip:
        if (grid_.At(grid_.Ceil(Expected(j + 1))) - grid_.At(first_tick) <
            p / 2) {
          k_ = j + 1;
          skipped = missed;
        } else {
          k_ = j;
          skipped = missed - 1;
        }
        break;
      case Policy::kDelay:
        origin_ = end;
        k_ = 1;
        skipped = missed;
        break;
      case Policy::kBurst:
        skipped = std::max<int64_t>(0, missed - options_.max_burst);
        k_ += 1 + skipped;
        break;
    }
    missed_since_last_ += skipped;
    counters_.missed_periods += static_cast<uint64_t>(skipped);
    ArmFor(processed);
  }

  // The due call was refused by the dispatcher at `now`, tick `processed`.
  void Refused(Instant now, Tick processed) {
    ++counters_.dispatch_refusals;
    if (options_.oneshot) {
      const absl::Duration tick = grid_.At(1) - grid_.At(0);
      const absl::Duration backoff = std::min(
          tick * (int64_t{1} << std::min(refusals_in_a_row_, 20)), absl::Seconds(1));
      ++refusals_in_a_row_;
      // Due again after it; its expected time stays the real deadline, so
      // the call's lateness shows the delay.
      due_tick_ = std::max(grid_.Ceil(now + backoff), processed + 1);
      return;
    } else {
      ++k_;
      ++missed_since_last_;
      ++counters_.missed_periods;
    }
    ArmFor(processed);
  }

  // --- Queries ----------------------------------------------------------
  bool running() const { return running_; }
  // The pending call, when running: its index, expected time and tick.
  int64_t k() const { return k_; }
  Instant expected() const { return Expected(k_); }
  Tick due_tick() const { return due_tick_; }
  int64_t missed_since_last() const { return missed_since_last_; }
  const Counters& counters() const { return counters_; }
  // Every call's lateness (actual - expected) and run time, in call order.
  const std::vector<absl::Duration>& lateness() const { return lateness_; }
  const std::vector<absl::Duration>& run_times() const { return run_times_; }
  const Options& options() const { return options_; }

 private:
  Instant Expected(int64_t k) const { return origin_ + options_.period * k; }
  void ArmFor(Tick processed) {
    due_tick_ = std::max(grid_.Ceil(Expected(k_)), processed + 1);
  }

  const TickGrid grid_;
  const Options options_;

  bool running_ = false;
  uint64_t generation_ = 0;
  Instant origin_;
  int64_t k_ = 1;
  Tick due_tick_ = 0;
  int64_t missed_since_last_ = 0;
  int refusals_in_a_row_ = 0;
  Counters counters_;
  Instant call_started_;
  std::vector<absl::Duration> lateness_;
  std::vector<absl::Duration> run_times_;
};

}  // namespace reference
}  // namespace cyber

#endif  // TESTS_REFERENCE_TIMER_MODEL_H_
