// TimeoutLoad: a million request timeouts, armed per request and nearly all
// cancelled by the answer, on the process's default timer system.
//
// Why: robot modules arm a oneshot timeout for every request they send and
// cancel it when the answer arrives; only lost requests let one fire. The
// scale run needs that pattern at 10^6 live timeouts to show what it costs
// the tick thread (cancelled timers should cost it nothing), how much memory
// a Timer takes, and that the contract holds under load: no timeout fires
// before its deadline, none fires after its cancellation (Stop()) returned,
// none is lost.
//
// The model. There are `timeouts` slots, each with its own cyber::Timer
// (oneshot, its delay fixed when the slot is made) that is always armed
// except for the instant between one request and the next: a slot's request
// ends, the slot's Timer is stopped, and a new request re-arms it with
// Schedule(). So about `timeouts` timeouts are live at every moment of the
// steady state. Per request:
//   * with probability `cancel_fraction` it is answered after
//     U[0, max_answer_fraction) x delay, and the answer cancels the timeout
//     (Stop()) and starts the slot's next request;
//   * otherwise it is lost: the timeout fires, its callback checks it and
//     hands the slot back to its request thread, which starts the next one.
// Delays: a Timer's delay is part of its configuration (changing it would
// allocate a new timer core per request), so each slot keeps one. Slot
// delays have density proportional to the delay on [min_delay, max_delay];
// since a slot with delay d starts requests at a rate proportional to 1/d,
// the requests themselves then have delays uniform in [min_delay,
// max_delay], and the live timeouts at any instant have the
// delay-proportional density.
//
// Request threads ("scale-req-N") own slot i when i % threads == N. Each
// keeps its pending answers in a calendar of `step` buckets (the load
// generator's own small wheel) and wakes every step; its lag (how late it
// processes a due answer) is recorded, because a lagging generator cancels
// late and lets answered requests time out.
//
// Checks (each counted; the tool's caller decides what is fatal):
//   early               fired before armed_at + delay (armed_at: this
//                       tool's own clock reading before Schedule()), or
//                       before the event's own expected time;
//   fired_after_cancel  a callback for an arming whose Stop() had returned
//                       (seen as a stale expected time, or a slot already
//                       cancelled or retired);
//   duplicate           a second call for one arming;
//   lost                an unanswered timeout not fired 5 s after its
//                       deadline when the run ends.
//
// Threads: CreateTimers/Start/Stop/destructor from one owner thread (after
// cyber::Init); counters(), lateness(), lag() from any thread.

#ifndef TESTS_SCALE_TIMEOUT_LOAD_H_
#define TESTS_SCALE_TIMEOUT_LOAD_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"
#include "tests/scale/latency_recorder.h"
#include "timer/timer.h"

namespace cyber {
namespace scale {

struct TimeoutLoadOptions {
  int64_t timeouts = 1'000'000;
  absl::Duration min_delay = absl::Milliseconds(100);
  absl::Duration max_delay = absl::Seconds(10);
  double cancel_fraction = 0.97;
  double max_answer_fraction = 0.9;
  int threads = 1;
  absl::Duration step = absl::Milliseconds(1);
  uint64_t seed = 1;
};

struct TimeoutCounters {
  uint64_t armed = 0;              // Schedule() calls that succeeded
  uint64_t cancelled = 0;          // answered: Stop() before the timeout fired
  uint64_t fired = 0;              // timeouts that fired (all kinds)
  uint64_t fired_unanswered = 0;   // ... of requests that were lost
  uint64_t fired_before_answer = 0;  // ... of answered requests whose answer
                                     // came late (request thread lagging)
  uint64_t schedule_errors = 0;
  int64_t live = 0;                // armed and neither cancelled nor fired
  // Violations.
  uint64_t early = 0;
  uint64_t fired_after_cancel = 0;
  uint64_t duplicate = 0;
  uint64_t lost = 0;               // known only after Stop()
  // After Stop(): the timers' own statistics, summed.
  uint64_t timer_early_fires = 0;
  uint64_t timer_dispatch_refusals = 0;
  uint64_t withdrawn_at_end = 0;   // still armed when the run ended
  uint64_t answers_clamped = 0;    // answers planned sooner than drawn
                                   // because a request thread lagged > 30 s
};

class TimeoutLoad {
 public:
  // `clock` must be the clock of the default timer system (SteadyClock).
  TimeoutLoad(const TimeoutLoadOptions& options, Clock* clock,
              const MeasurementWindow* window);
  // Stops (if running) and destroys every Timer.
  ~TimeoutLoad();
  TimeoutLoad(const TimeoutLoad&) = delete;
  TimeoutLoad& operator=(const TimeoutLoad&) = delete;

  // Makes every slot and its Timer (not armed yet).
  // Errors: the first Timer configuration error.
  absl::Status CreateTimers();
  // Starts the request threads; each arms all its slots at once, then runs
  // the request model.
  void Start();
  // Joins the request threads, stops every Timer and runs the final checks.
  // Idempotent.
  void Stop();

  TimeoutCounters counters() const;
  // Fired timeouts in the window: actual time - (armed_at + delay).
  const LatencyRecorder& lateness() const { return lateness_; }
  // Request threads, per step in the window: how late the oldest due answer
  // of that step was processed.
  const LatencyRecorder& lag() const { return lag_; }
  const TimeoutLoadOptions& options() const { return options_; }
  // The largest lag (as lag() records it, but at any time) since the last
  // call; for progress lines.
  absl::Duration TakeMaxLag();

 private:
  struct Slot;
  struct Requester;

  void RequestLoop(int index);
  void OnFired(uint32_t slot, const TimerEvent& event);

  const TimeoutLoadOptions options_;
  Clock* const clock_;
  const MeasurementWindow* const window_;
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::unique_ptr<Requester>> requesters_;
  std::atomic<bool> stopping_{false};
  bool stopped_ = false;  // owner thread only

  // Counted by the request threads.
  alignas(64) std::atomic<uint64_t> armed_{0};
  std::atomic<uint64_t> cancelled_{0};
  std::atomic<uint64_t> schedule_errors_{0};
  // Counted by the callbacks.
  alignas(64) std::atomic<uint64_t> fired_unanswered_{0};
  std::atomic<uint64_t> fired_before_answer_{0};
  std::atomic<uint64_t> early_{0};
  std::atomic<uint64_t> fired_after_cancel_{0};
  std::atomic<uint64_t> duplicate_{0};
  // Both.
  alignas(64) std::atomic<int64_t> live_{0};
  std::atomic<int64_t> max_lag_ns_{0};
  // Final checks (written in Stop()).
  std::atomic<uint64_t> lost_{0};
  std::atomic<uint64_t> timer_early_fires_{0};
  std::atomic<uint64_t> timer_dispatch_refusals_{0};
  std::atomic<uint64_t> withdrawn_at_end_{0};
  std::atomic<uint64_t> answers_clamped_{0};

  LatencyRecorder lateness_;
  LatencyRecorder lag_;
};

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_TIMEOUT_LOAD_H_
