// SoakContext: what every soak timer's ledger (soak_timer.h) shares — the
// clock the checks read, the bounds they apply, the violation log, and the
// run's counters and lateness histogram.
//
// Why one object: timer callbacks run on scheduler coroutines, churn threads
// on plain threads; all of them report into the same place, and the main
// thread reads it for progress lines and the summary. Counters are relaxed
// atomics (they are statistics, never used to order anything); the lateness
// histogram has its own lock because LatencyHistogram is not thread-safe.
//
// Threads: every method is thread-safe.

#ifndef TESTS_SOAK_SOAK_CONTEXT_H_
#define TESTS_SOAK_SOAK_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"
#include "cyber/time/instant.h"
#include "tests/soak/violation_log.h"
#include "timer/latency_histogram.h"
#include "timer/timer_options.h"

namespace cyber {
namespace soak {

// Counts of what the soak did and saw. Relaxed atomics: statistics only.
struct SoakCounters {
  std::atomic<uint64_t> calls{0};           // callbacks entered
  std::atomic<uint64_t> arms{0};            // Schedule()/Start() of an idle timer
  std::atomic<uint64_t> stops{0};           // Stop() calls
  std::atomic<uint64_t> reconfigures{0};    // Configure()/SetTimerOption()
  std::atomic<uint64_t> recreates{0};       // ~Timer() + a new Timer
  std::atomic<uint64_t> self_actions{0};    // Stop/Schedule from the callback
  std::atomic<uint64_t> redundant_schedules{0};  // Schedule() while running
  std::atomic<uint64_t> busy_skips{0};      // churn picks left alone: the
                                            // timer's callback was acting on it
  // kSkip calls closer than half a period to the previous call (see the
  // summary: informational, not a violation).
  std::atomic<uint64_t> close_skip_calls{0};
  // Summed from TimerStatistics of every Timer configuration retired.
  std::atomic<uint64_t> stats_fires{0};
  std::atomic<uint64_t> stats_overruns{0};
  std::atomic<uint64_t> stats_missed_periods{0};
  std::atomic<uint64_t> stats_dispatch_refusals{0};
};

class SoakContext {
 public:
  struct Bounds {
    // A due call not seen for this much *alive time* (below) after the
    // latest instant it may come (the tick after its deadline) counts as
    // lost; one that comes later than that counts as late.
    absl::Duration lost_after = absl::Seconds(2);
    // Alive time: each gap between two heartbeat calls counts up to this.
    absl::Duration max_heartbeat_gap = absl::Milliseconds(100);
    // The wheel's resolution: a deadline rounds up to the next tick.
    absl::Duration tick = timer::kTimerResolution;
  };
  // A bug planted in the soak's own bookkeeping, to show the checks catch
  // it (--inject_fault); kNone in every real run.
  enum class Fault {
    kNone,
    kEarly,  // arms are recorded as made 2 ticks after they were
    kLost,   // one owner arm in 1000 is recorded but Schedule() not called
    kLeak,   // each call leaks 64 bytes
  };

  // `clock` is the clock the timers run on (the process default system's
  // SteadyClock); `start` is the soak's t = 0 for messages.
  SoakContext(Clock* clock, ViolationLog* log, Bounds bounds, Instant start,
              Fault fault = Fault::kNone)
      : clock_(clock), log_(log), bounds_(bounds), start_(start), fault_(fault) {}
  SoakContext(const SoakContext&) = delete;
  SoakContext& operator=(const SoakContext&) = delete;

  Instant Now() const { return clock_->Now(); }
  const Bounds& bounds() const { return bounds_; }
  Fault fault() const { return fault_; }
  ViolationLog& log() { return *log_; }
  SoakCounters& counters() { return counters_; }

  // `t` as seconds since the soak started ("12.345678s"), "never" if
  // infinite.
  std::string At(Instant t) const;

  // Lateness of one call: actual (read in the callback) - expected
  // (TimerEvent::expected_time).
  void RecordLateness(absl::Duration lateness) {
    MutexLock lock(&lateness_mu_);
    lateness_.Record(lateness);
  }
  timer::LatencyHistogram Lateness() const {
    MutexLock lock(&lateness_mu_);
    return lateness_;
  }

  // --- Alive time -------------------------------------------------------
  // Why: on a shared machine the whole process (or VM) can be descheduled
  // for seconds; afterwards the watchdog may run before the tick thread and
  // would see every timer overdue. So "lost" is measured in time the timer
  // system demonstrably ran: a periodic heartbeat timer on the same timer
  // system calls Heartbeat(), and alive time advances by each gap between
  // its calls, capped at max_heartbeat_gap. A lost call never comes however
  // long the wait, so the cap only delays detection; a stall cannot forge
  // it. A heartbeat that stops altogether is checked separately (a hang).
  void Heartbeat(Instant actual);
  absl::Duration alive() const {
    return absl::Nanoseconds(alive_ns_.load(std::memory_order_acquire));
  }
  // Infinite future before the first heartbeat.
  Instant last_heartbeat() const;
  absl::Duration max_heartbeat_gap_seen() const {
    return absl::Nanoseconds(max_gap_ns_.load(std::memory_order_relaxed));
  }
  uint64_t heartbeats() const { return heartbeats_.load(std::memory_order_relaxed); }

  // From the final Stop() on, callbacks no longer act on their timers.
  void BeginFinalStop() { final_stop_.store(true, std::memory_order_release); }
  bool final_stop() const { return final_stop_.load(std::memory_order_acquire); }

  // Prints the first few observations worth a look that break no guarantee
  // ("NOTE ..."); the rest are only counted by their callers.
  void Note(const std::string& what);

  // Adds the statistics of a Timer configuration that is about to be
  // retired; `who` names it in a violation (early_fires or exceptions > 0).
  void AddRetiredStatistics(const timer::TimerStatistics& s,
                            const std::string& who);

 private:
  Clock* const clock_;
  ViolationLog* const log_;
  const Bounds bounds_;
  const Instant start_;
  const Fault fault_;
  SoakCounters counters_;
  std::atomic<bool> final_stop_{false};
  // Heartbeat calls never overlap (a timer's calls never do); the atomics
  // are for the readers.
  std::atomic<int64_t> alive_ns_{0};
  std::atomic<int64_t> last_heartbeat_ns_{0};  // since the clock's epoch; 0: none
  std::atomic<int64_t> max_gap_ns_{0};
  std::atomic<uint64_t> heartbeats_{0};
  Mutex note_mu_;
  int notes_ ABSL_GUARDED_BY(note_mu_) = 0;
  mutable Mutex lateness_mu_;
  timer::LatencyHistogram lateness_ ABSL_GUARDED_BY(lateness_mu_);
};

}  // namespace soak
}  // namespace cyber

#endif  // TESTS_SOAK_SOAK_CONTEXT_H_
