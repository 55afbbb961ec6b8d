// TimerModel: the obviously-correct reference for one Timer's schedule
// (timer/timer.h, timer/timer_options.h), used by the timer fuzzer
// (tests/fuzz/timer_ops_fuzzer.cc) to check every call a Timer makes.
//
// Why a model: "no early call, no call after Stop(), no lost call, phase
// kept" is only checkable against a precise expectation of *which* call is
// next and *when* it is due. The model is written from the documented
// contract, not from timer_core.cc: plain arithmetic on expected times
// origin + k * period, the three overrun policies in the words of
// timer_options.h and periodic_schedule.h, and the wheel's promises: an
// exact deadline fires at the deadline itself (at once if it has passed), a
// tick deadline at its rounded-up tick, or at the next unprocessed tick if
// that has passed. It has no wheel, no clock, no threads and no locks; the
// caller feeds it what happened (started, stopped, a call began, a run
// ended, a dispatch was refused) with the time and the wheel's last
// processed tick, and asks what must happen next.
//
// Contract, as modelled:
//   - Start() at `now`: a periodic schedule's origin is the first tick
//     boundary at or after now (kTick) or now itself (kExact); a oneshot's
//     origin is now itself. Call k
//     (k = 1, 2, ...) is expected at origin + k * period (a oneshot's
//     "period" is its delay, any value: <= 0 is a deadline already passed,
//     and its call is late by -delay). Start() while running changes
//     nothing.
//   - "Never": a period or delay beyond the wheel's maximum delay (or
//     InfiniteDuration) is accepted; the timer is running, is never called,
//     and Stop() ends it.
//   - Where a call lands (its "due" instant): every periodic call, a kExact
//     oneshot and a oneshot whose delay is <= 0 are armed exactly: due at
//     the expected instant itself (rounded up to a whole nanosecond, as the
//     wheel keeps it), and if that has passed when it is armed,
//     at the tick thread's next pass (at once). A kTick oneshot is due at
//     the first tick at or after its deadline (never early), or at the tick
//     after the last processed one if that is later. A call is never before
//     it is due, and (on a simulated clock, when no callback took time) it
//     begins exactly at max(due, the time it was armed).
//   - A oneshot is done once its call begins: it is no longer running, and a
//     Start() (also from its own callback) begins a new schedule.
//   - After a periodic run ending at `end` (decided on instants,
//     timer/periodic_schedule.h): if call k+1 is expected at or after `end`
//     it is on time. Otherwise calls k+1..j were missed (j: the last one
//     expected before `end`) and, by policy:
//       kSkip:  one late call for j (at once), unless call j+1 is expected
//               less than half a period after `end`, in which case j+1 is
//               next; the other missed calls are skipped;
//       kDelay: the schedule is re-based: origin = end, the next call is
//               one period after the run; all missed calls are skipped;
//       kBurst: the latest max_burst missed calls are made back to back
//               (older ones skipped), then the schedule continues.
//     Skipped calls are counted (missed_periods) and reported by the next
//     call's TimerEvent::missed_periods; a run that ends too late for the
//     next call is an overrun.
//   - A late dispatch or start: under kSkip, a call that begins (or is
//     dispatched) when later periods are due as well stands for the latest
//     of them; the others are skipped (counted, reported as missed).
//   - A refused dispatch: a periodic timer skips that call (counted as
//     missed) and goes on with the next; a oneshot is due again after a
//     back-off of 1, 2, 4, ... ticks (capped at 1 s) counted from the
//     instant the refusing pass processed (exactly, or rounded up to a tick
//     as its precision says), never busily (the back-off restarts with each
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
// a deadline armed on the tick grid fires at the first tick at or after it.
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
  // The instant of the first tick at or after `t`.
  Instant CeilInstant(Instant t) const { return At(Ceil(t)); }

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
    bool exact = false;  // TimerPrecision::kExact
    // The wheel's maximum delay: a longer period or delay is "never".
    absl::Duration max_delay = absl::InfiniteDuration();
  };

  struct Counters {
    uint64_t fires = 0;
    uint64_t overruns = 0;
    uint64_t missed_periods = 0;
    uint64_t exceptions = 0;
    uint64_t dispatch_refusals = 0;
  };

  // What Configure()/Schedule() must answer for `o`: OK, or
  // InvalidArgument (a periodic timer's period not positive, no callback,
  // kBurst with max_burst < 1). Any period beyond the wheel's range is
  // accepted ("never"); a oneshot's delay may be anything.
  static absl::StatusCode ConfigCode(const Options& o) {
    if (!o.oneshot && o.period <= absl::ZeroDuration()) {
      return absl::StatusCode::kInvalidArgument;
    }
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
    origin_ = options_.oneshot || options_.exact ? now : grid_.At(grid_.Ceil(now));
    k_ = 1;
    missed_since_last_ = 0;
    refusals_in_a_row_ = 0;
    // "Never", decided on the duration itself.
    never_ = options_.period > options_.max_delay;
    ArmFor(now, processed);
  }

  void Stop() {
    running_ = false;
    ++generation_;
  }

  // Checks a call that began at `actual`, the wheel having processed up to
  // the instant `processed`, reporting `expected` and `missed` (its
  // TimerEvent; `has_event` false for a plain callback, which reports
  // nothing). `undelayed`: no other callback has taken simulated time since
  // the tick thread woke, so the call must be exactly when it is due.
  // Returns "" if the call is the one the contract allows, else what is
  // wrong.
  std::string CheckCall(bool has_event, Instant expected, int64_t missed,
                        Instant actual, Instant processed, bool undelayed) const {
    std::ostringstream out;
    if (!running_) {
      out << "called while not running (stopped, done, or never started)";
      return out.str();
    }
    if (never_) {
      out << "called, but its " << (options_.oneshot ? "delay " : "period ")
          << absl::FormatDuration(options_.period) << " is beyond the wheel's range: never";
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
    if (actual < due_ || processed < due_) {
      out << "called at " << actual << " (processed " << processed << "), before it is due at "
          << due_ << (exact_ ? " (exact)" : " (its tick)");
      return out.str();
    }
    const Instant exactly = std::max(due_, armed_at_);
    if (undelayed && actual != exactly) {
      out << "late: called at " << actual << " (processed " << processed << "), due at " << due_
          << (exact_ ? " (exact)" : " (its tick)") << ", armed at " << armed_at_
          << ": must begin at " << exactly;
      return out.str();
    }
    if (has_event && missed != missed_since_last_) {
      out << "TimerEvent.missed_periods " << missed << ", expected "
          << missed_since_last_;
      return out.str();
    }
    return "";
  }

  // The pending call is dispatched, or begins, at `due_by` (the instant the
  // wheel processed, or the instant the call begins): under kSkip, if later
  // periods are due by then as well, it stands for the latest of them and
  // the others are skipped (counted). Call before CheckCall().
  void Dispatched(Instant due_by) {
    if (!running_ || never_ || options_.oneshot || options_.policy != Policy::kSkip) return;
    if (Expected(k_ + 1) > due_by) return;
    absl::Duration rem;
    int64_t j = absl::IDivDuration(due_by - origin_, options_.period, &rem);
    while (Expected(j + 1) <= due_by) ++j;  // (never, by the
    while (Expected(j) > due_by) --j;       // arithmetic)
    missed_since_last_ += j - k_;
    counters_.missed_periods += static_cast<uint64_t>(j - k_);
    k_ = j;
  }

  // The call CheckCall() accepted has begun at `actual`. Returns the
  // schedule's generation, for EndRun().
  uint64_t BeginCall(Instant actual) {
    ++counters_.fires;
    call_started_ = actual;
    // Saturating, as the timer's ns statistics: a delay of
    // -InfiniteDuration is infinitely late.
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
    // Decided on instants (every call is armed exactly): call k+1 is on
    // time iff it is expected at or after the end of the run.
    if (Expected(k_ + 1) >= end) {
      ++k_;
      ArmFor(end, processed);
      return;
    }
    ++counters_.overruns;
    // j: the last call expected before `end`.
    absl::Duration rem;
    int64_t j = absl::IDivDuration(end - origin_, p, &rem);
    while (Expected(j + 1) < end) ++j;   // (never, by the
    while (Expected(j) >= end) --j;      // arithmetic)
    const int64_t missed = j - k_;
    int64_t skipped = 0;
    switch (options_.policy) {
      case Policy::kSkip:
        if (Expected(j + 1) - end < p / 2) {
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
    ArmFor(end, processed);
  }

  // The due call was refused by the dispatcher in the tick thread's pass
  // that processed up to the instant `pass` (tick `processed`).
  void Refused(Instant pass, Tick processed) {
    ++counters_.dispatch_refusals;
    if (options_.oneshot) {
      const absl::Duration tick = grid_.At(1) - grid_.At(0);
      const absl::Duration backoff = std::min(
          tick * (int64_t{1} << std::min(refusals_in_a_row_, 20)), absl::Seconds(1));
      ++refusals_in_a_row_;
      // Due again after it; its expected time stays the real deadline, so
      // the call's lateness shows the delay.
      ArmAt(pass + backoff, pass, processed);
      return;
    } else {
      ++k_;
      ++missed_since_last_;
      ++counters_.missed_periods;
    }
    ArmFor(pass, processed);
  }

  // --- Queries ----------------------------------------------------------
  bool running() const { return running_; }
  // Running and never to be called (a period or delay beyond the range).
  bool never() const { return never_; }
  // The pending call, when running: its index, expected time, when it is
  // due, and when it was armed (it begins at the later of the two).
  int64_t k() const { return k_; }
  Instant expected() const { return Expected(k_); }
  Instant due() const { return due_; }
  Instant armed_at() const { return armed_at_; }
  // The instant the tick thread's pass that makes the call is at, on a
  // simulated clock when nothing takes time: max(due, armed at).
  Instant pass() const { return std::max(due_, armed_at_); }
  int64_t missed_since_last() const { return missed_since_last_; }
  const Counters& counters() const { return counters_; }
  // Every call's lateness (actual - expected) and run time, in call order.
  const std::vector<absl::Duration>& lateness() const { return lateness_; }
  const std::vector<absl::Duration>& run_times() const { return run_times_; }
  const Options& options() const { return options_; }

 private:
  Instant Expected(int64_t k) const { return origin_ + options_.period * k; }
  // Armed exactly: every periodic call, a kExact oneshot, a delay <= 0.
  bool Exact() const {
    return !options_.oneshot || options_.exact || options_.period <= absl::ZeroDuration();
  }
  // Arms the pending call (at `now`, the wheel at tick `processed`).
  void ArmFor(Instant now, Tick processed) {
    if (never_) return;
    ArmAt(Expected(k_), now, processed);
  }
  void ArmAt(Instant deadline, Instant now, Tick processed) {
    exact_ = Exact();
    armed_at_ = now;
    due_ = exact_ ? WholeNanosecondAtOrAfter(deadline)
                  : grid_.At(std::max(grid_.Ceil(deadline), processed + 1));
  }
  // The wheel keeps exact deadlines in whole nanoseconds, rounded up (never
  // early): a period that is not a whole number of them (tick / 3) is
  // called up to 1 ns after its expected instant.
  static Instant WholeNanosecondAtOrAfter(Instant t) {
    const absl::Duration since = t.SinceEpoch();
    const absl::Duration floor = absl::Floor(since, absl::Nanoseconds(1));
    return Instant::FromEpoch(floor == since ? since : floor + absl::Nanoseconds(1));
  }

  const TickGrid grid_;
  const Options options_;

  bool running_ = false;
  uint64_t generation_ = 0;
  Instant origin_;
  int64_t k_ = 1;
  bool never_ = false;
  bool exact_ = false;
  Instant due_;
  Instant armed_at_;
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
