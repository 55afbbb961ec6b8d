// What a periodic timer owes its user across a stall of the whole process
// (SIGSTOP ... SIGCONT), checked from the TimerEvents its callback received.
//
// Why a separate checker: the fault test (sigstop_timers_test.cc) runs the
// timers in a child process and judges them there; keeping the judgement a
// pure function of the recorded calls lets stall_invariants_test.cc show,
// with hand-made call sequences, that every rule here can fail (a check
// that cannot fail proves nothing) and that the sequences the timer is
// documented to produce pass.
//
// Every rule is exact, independent of load and of dispatch latency: it
// follows from the guarantees in timer/timer.h, timer/timer_options.h and
// timer/timer_core.h, using only what was observed (the event's times and
// the callback's own clock readings at its start and end, which bracket the
// run the timer itself measures). No rule has a timing margin. The rules:
//
//  never early   actual >= expected, and the callback's own first clock
//                reading >= expected; expected strictly increasing; a call
//                starts only after the previous one ended (never
//                concurrently with itself).
//  phase         kSkip, kBurst: every expected time is first expected + an
//                integral number of periods. kDelay re-bases: consecutive
//                expected times are >= one period apart, and after a run
//                that certainly overran (it ended after the next expected
//                time) the next call is expected >= one period after that
//                run ended ("next = end + period").
//  missed        kSkip, kBurst: missed_periods of each call == whole periods
//                between its expected time and the previous call's, minus
//                one. Every policy: the sum over the calls ==
//                TimerStatistics::missed_periods (exact because the timer was
//                stopped from its own last call, so nothing was skipped after
//                it); fires == calls; early_fires == 0; no exceptions.
//  latest first  kSkip serves only the latest missed period ("one late call
//                ... for the latest missed period"): a call's expected time
//                + period >= the end of the previous run. kBurst serves at
//                most the max_burst latest ("older ones are skipped"):
//                expected + max_burst * period >= the previous run's end.
//  no burst      kSkip ("never schedules two calls closer than half a
//                period"): a call starts >= period/2 after the earliest
//                instant the previous call can have been scheduled for,
//                which is max(its expected time, the end of the run
//                before it) — a late call is armed when that run ends, an
//                on-phase call for its expected time. Dispatch latency is
//                excused exactly as the header excuses it: a call that
//                *started* late can be followed sooner by the next one, but
//                never a call *scheduled* within half a period of the
//                previous one's schedule.
//  stall backlog Of the calls that start after the resume, those expected
//                before it (periods that fell into the stall) number at most
//                kSkip: 2 (the call that was due or queued when the process
//                stopped, then the one late call), kDelay: 1, kBurst:
//                1 + max_burst.
//  resumed       nothing ran while the process was stopped; some call is
//                expected at or after the resume; the largest gap between
//                two calls is the one that spans the stall; no call after
//                the timer's own Stop(); the record did not overflow.
//
// Times are int64 nanoseconds on the timers' clock (CLOCK_MONOTONIC).

#ifndef TESTS_FAULTS_STALL_INVARIANTS_H_
#define TESTS_FAULTS_STALL_INVARIANTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "timer/timer_options.h"

namespace cyber {
namespace faults {

// One call of a timer's callback, as the callback recorded it.
struct CallRecord {
  int64_t expected_ns = 0;  // TimerEvent::expected_time
  int64_t actual_ns = 0;    // TimerEvent::actual_time
  int64_t entry_ns = 0;     // the clock, first thing in the callback
  int64_t end_ns = 0;       // the clock, last thing in the callback
  int64_t missed = 0;       // TimerEvent::missed_periods
};

// One timer of the scenario and everything observed about it.
struct ObservedTimer {
  std::string name;
  int64_t period_ns = 0;
  timer::OverrunPolicy policy = timer::OverrunPolicy::kSkip;
  int max_burst = 0;  // kBurst only
  absl::Span<const CallRecord> calls;
  bool overflowed = false;        // more calls than the record holds
  uint64_t calls_after_stop = 0;  // calls after its own Stop() returned
  timer::TimerStatistics stats;   // read after the final Stop()
};

// The fault: the process was stopped no later than `stopped_ns` (the parent
// saw it stopped) and continued no earlier than `resumed_ns` (the parent
// read the clock, then sent SIGCONT).
struct StallWindow {
  int64_t stopped_ns = 0;
  int64_t resumed_ns = 0;
};

struct TimerFindings {
  std::vector<std::string> violations;
  // For the summary.
  uint64_t calls = 0;
  int64_t missed = 0;                   // summed over the calls
  uint64_t calls_after_resume = 0;      // started after the resume
  int stall_calls = 0;                  // of those, expected before it
  // Start of the second of them - start of the first (-1 if fewer than 2).
  int64_t stall_second_call_after_ns = -1;
  int64_t resume_latency_ns = -1;       // first call after resume - resume
  int64_t max_lateness_ns = -1;         // over calls expected after resume
  // The same over calls expected before the stop (the steady state), and
  // over calls expected 1 s or more after the resume (settled again?).
  int64_t max_lateness_before_ns = -1;
  int64_t max_lateness_settled_ns = -1;
  int64_t stall_missed = 0;             // missed reported after the resume
  // kSkip pairs after the resume whose start times are closer than half a
  // period (allowed by the header when the first one started late):
  int close_to_next_on_phase = 0;  // ... the second is the next on-phase call
  int close_other = 0;             // ... any other pair (see example)
  std::string close_other_example;
};

TimerFindings CheckStalledTimer(const ObservedTimer& timer,
                                const StallWindow& stall);

// "expected=+12.000ms actual=+13.100ms missed=0 run=[+13.104ms,+13.110ms]",
// times relative to `origin_ns`.
std::string DescribeCall(const CallRecord& call, int64_t origin_ns);

}  // namespace faults
}  // namespace cyber

#endif  // TESTS_FAULTS_STALL_INVARIANTS_H_
