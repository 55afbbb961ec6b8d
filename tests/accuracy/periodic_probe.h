// PeriodicProbe: the callback side of a periodic accuracy scenario. It turns
// each TimerEvent into a Fire with its schedule index, says when the one
// planned overrun is due, and tells the scenario when the first call (which
// fixes the schedule's origin) and the last recorded call have happened.
//
// Why the index is derived here: a TimerEvent carries the expected time but
// not k. The schedule is origin + k * period; the first call is k = 1 plus
// the periods skipped before it, so origin = its expected time minus that
// many periods, and every later k follows exactly from its expected time.
// Counting calls instead would hide skipped periods, which are exactly what
// the overrun scenario shows.
//
// The probe records `calls` schedule indices starting at the first call's;
// calls after them only count towards "done". With an overrun planned, the
// first call at or after position `overrun_at` (0-based, from the first
// call) is told to overrun; OnCall never sleeps itself, so no lock is held
// while the callback overruns.
//
// Threads: OnCall from the timer's callback (never concurrent with itself,
// but on any dispatcher thread); the Wait* and Take* methods from the
// scenario's thread.

#ifndef TESTS_ACCURACY_PERIODIC_PROBE_H_
#define TESTS_ACCURACY_PERIODIC_PROBE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/instant.h"
#include "tests/accuracy/fire_record.h"
#include "timer/timer_options.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace accuracy {

class PeriodicProbe {
 public:
  struct Options {
    absl::Duration period;
    int64_t calls = 0;  // schedule indices to record, from the first call's
    std::optional<int64_t> overrun_at;  // position of the overrunning call
  };
  // The first call: the schedule's origin and its index.
  struct Start {
    Instant origin;
    int64_t first_index = 0;
  };

  // `wheel` (may be null): the wheel the timer runs on, for Fire::tick.
  // REQUIRES: options.period > 0, options.calls >= 1.
  PeriodicProbe(Options options, const timer::TimingWheel* wheel);

  // Records the call. Returns true if this call is the one to overrun.
  bool OnCall(const timer::TimerEvent& event);

  // Blocks until the first call or `limit` (steady clock); nullopt on the
  // latter.
  std::optional<Start> WaitForStart(Instant limit);
  // Blocks until a call with the last recorded index (or a later one) has
  // arrived, or `limit`; false on the latter.
  bool WaitUntilDone(Instant limit);

  std::vector<Fire> TakeFires();
  // The index of the call that was told to overrun, if any.
  std::optional<int64_t> overrun_index() const;

 private:
  const Options options_;
  const timer::TimingWheel* const wheel_;

  mutable Mutex mu_;
  CondVar changed_;
  // mu_ protects the following state.
  std::optional<Start> start_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<int64_t> overrun_index_ ABSL_GUARDED_BY(mu_);
  std::vector<Fire> fires_ ABSL_GUARDED_BY(mu_);
};

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_PERIODIC_PROBE_H_
