// SoakTimer: one timer of the soak tool (timer_soak.cc) together with its
// ledger — what the soak did to it (when it was scheduled, when Stop()
// returned, which configuration is current) — and the checks that hold every
// call of its callback against the guarantees of timer/timer.h.
//
// What is checked, on every call (in the callback, on the timer's own clock,
// CLOCK_MONOTONIC):
//
//   * never early: `arm` is read *before* Schedule()/Start(), and the timer
//     takes its origin inside that call, so the n-th call of a schedule must
//     come at or after arm + delay (oneshot) or arm + n * period (periodic:
//     every call is for a distinct, increasing k >= n under every overrun
//     policy, and expected_k >= origin + k * period). This bound is
//     conservative: it can never flag a correct timer. With a TimerEvent,
//     also expected_time >= that bound (else the call belongs to an older
//     schedule), expected_time increasing, and actual >= expected;
//   * nothing after Stop()/Configure()/~Timer() returned: the ledger records
//     "stopped" only after Stop() returned, and a configuration id (captured
//     by the callback) only after the call that retired the previous one
//     returned; a call seeing either is a violation. A call of a timer never
//     scheduled since it was (re)configured is one too;
//   * exactly once: a oneshot called again for the same Schedule() is a
//     duplicate. Not missing: the next call is due by  schedule_returned +
//     delay + tick  (oneshot) or  max(schedule_returned, end of the last
//     call) + period + tick  (periodic: under every policy the next call is
//     due at most a period and a tick after the previous run ended). Scan()
//     (the watchdog) notes when it first sees that instant passed, and
//     reports the call lost once the timer system has run for lost_after of
//     alive time since (see soak_context.h: a stall of the whole machine
//     does not count); a call arriving after that is late.
//
// How the checks stay race-free without ever holding a lock across a Timer
// call (Stop() waits for a running callback, and that callback takes this
// ledger's lock): every Timer call is made by exactly one party at a time,
// and the ledger is updated after the call returns.
//
//   * The owner (one churn thread per timer, then the main thread for the
//     final stop) brackets each operation with Claim()/Release(). Claim()
//     fails while a callback is acting on the timer (see below).
//   * A callback may act on its own timer (Stop, Stop + Schedule, Schedule)
//     only if the owner asked for it (RequestSelfAction) and the owner holds
//     no claim at the moment the callback decides; the decision is made under
//     the ledger lock and marks the timer busy, so the owner skips it until
//     the callback has finished. Conversely an owner operation never overlaps
//     a callback's action, but may overlap plain calls — which is fine,
//     because the ledger attributes each call under the lock and the owner's
//     Stop() waits for a running call before the owner records "stopped".
//   * The Timer object is replaced only by the owner, under a claim, so a
//     callback acting on it (which requires no claim) uses a live object.
//
// Threads: Claim() and Scan() from any thread; the owner operations from the
// thread holding the claim; the callback from wherever the dispatcher runs
// it. Destroy the SoakTimer only after its Timer can no longer call back
// (Destroy() does that).

#ifndef TESTS_SOAK_SOAK_TIMER_H_
#define TESTS_SOAK_SOAK_TIMER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/instant.h"
#include "tests/soak/soak_context.h"
#include "timer/timer.h"
#include "timer/timer_options.h"

namespace cyber {
namespace soak {

// How one Timer configuration looks.
struct TimerSpec {
  bool oneshot = true;
  // Built and driven through the Cyber RT surface (period in whole ms,
  // Start()/Stop()/SetTimerOption(), a plain callback) instead of
  // TimerOptions/Schedule()/Configure() with a TimerEvent callback.
  bool compat = false;
  absl::Duration period = absl::Milliseconds(100);  // the delay, for a oneshot
  timer::OverrunPolicy policy = timer::OverrunPolicy::kSkip;
  int max_burst = 3;

  // "periodic 123.456ms kSkip modern", "oneshot 7ms compat".
  std::string Describe() const;
};

// Where the ledger stands for the timer's current configuration.
enum class Phase {
  kIdle,     // (re)configured, not scheduled since
  kArmed,    // Schedule()/Start() called for the current epoch
  kFired,    // a oneshot's call happened (its schedule is over)
  kStopped,  // Stop() returned (or the schedule failed)
};

// What a callback does to its own timer when asked.
enum class SelfAction {
  kNone,
  kStop,     // Stop() from the callback
  kRestart,  // Stop() then Schedule() from the callback
  kRearm,    // oneshot: Schedule() from the callback ("a oneshot can be
             // started again after it fired")
};

class SoakTimer {
 public:
  // `index` names the timer in messages ("soak#index").
  SoakTimer(SoakContext* ctx, size_t index);
  ~SoakTimer();  // Destroy()
  SoakTimer(const SoakTimer&) = delete;
  SoakTimer& operator=(const SoakTimer&) = delete;

  // --- Owner side ------------------------------------------------------
  // Claims the timer for one operation. False if a callback is acting on it
  // (leave it for now).
  bool Claim();
  void Release();

  // The operations below REQUIRE a claim.
  Phase phase() const;
  TimerSpec spec() const;
  // Replaces the Timer object with a new one of `spec` (the old one,
  // possibly running, is destroyed: ~Timer stops it). Also the first
  // creation.
  void Recreate(const TimerSpec& spec);
  // Configure() / SetTimerOption() on the existing object (which stops it).
  void Reconfigure(const TimerSpec& spec);
  // Schedule() / Start() (a new epoch).
  void Arm();
  void Stop();
  // Schedule() / Start() on a running periodic timer: must succeed and must
  // not start a second schedule. No-op for other phases.
  void ScheduleWhileRunning();
  // The next call (if any) performs `action` on its own timer.
  void RequestSelfAction(SelfAction action);
  // The final Stop(): stops and adds the timer's statistics. Keeps nothing
  // from running any more (the claim is kept: call with a claim and do not
  // Release).
  void FinalStop();
  // Destroys the Timer object (waits out a running call).
  void Destroy();

  // --- Watchdog ----------------------------------------------------------
  // Reports a due call that did not come by `now` (see the header comment).
  void Scan(Instant now);

 private:
  // The callback of configuration `config_id`; `event` null for Cyber RT
  // style callbacks.
  void OnCall(uint64_t config_id, const timer::TimerEvent* event);
  // The checks of one call, under the lock. Returns false if the call must
  // not be treated as a call of the current schedule (a violation already
  // reported).
  bool CheckCallLocked(Instant now, uint64_t config_id,
                       const timer::TimerEvent* event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PerformSelfAction(SelfAction action, timer::Timer* timer,
                         uint64_t epoch, const TimerSpec& spec);

  std::unique_ptr<timer::Timer> MakeTimer(const TimerSpec& spec,
                                          uint64_t config_id);
  timer::TimerOptions ModernOptions(const TimerSpec& spec, uint64_t config_id);
  timer::TimerOption CompatOption(const TimerSpec& spec, uint64_t config_id);
  static absl::Status StartTimer(timer::Timer* timer, const TimerSpec& spec);

  // A new epoch: the ledger is set up before the timer is started (a call
  // may come before Start() returns). `by` says who arms it, for messages.
  // Returns the epoch.
  uint64_t BeginArming(Instant arm, const char* by)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After Schedule()/Start() of `epoch` returned `status` at `returned`.
  void FinishArming(uint64_t epoch, const absl::Status& status,
                    Instant returned);
  void RetireStatistics(timer::Timer* timer);
  timer::Timer* timer() const;

  // The latest instant the next call may come, or InfiniteFuture if not
  // known yet (Schedule() has not returned).
  Instant DueByLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string DescribeLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  SoakContext* const ctx_;
  const size_t index_;

  mutable Mutex mu_;
  // The object and what it is configured as.
  std::unique_ptr<timer::Timer> timer_ ABSL_GUARDED_BY(mu_);
  TimerSpec spec_ ABSL_GUARDED_BY(mu_);
  uint64_t config_seq_ ABSL_GUARDED_BY(mu_) = 0;  // last id handed out
  uint64_t config_id_ ABSL_GUARDED_BY(mu_) = 0;   // current configuration
  Instant replaced_at_ ABSL_GUARDED_BY(mu_);      // its predecessor retired
  // The current schedule.
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kIdle;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;       // one per Schedule()
  Instant arm_ ABSL_GUARDED_BY(mu_);              // read before Schedule()
  const char* armed_by_ ABSL_GUARDED_BY(mu_) = "";
  Instant scheduled_ ABSL_GUARDED_BY(mu_);        // Schedule() returned
  Instant stopped_ ABSL_GUARDED_BY(mu_);          // Stop() returned
  int64_t calls_ ABSL_GUARDED_BY(mu_) = 0;        // calls in this epoch
  Instant last_expected_ ABSL_GUARDED_BY(mu_);    // TimerEvent of the
  Instant last_actual_ ABSL_GUARDED_BY(mu_);      // previous call
  Instant last_end_ ABSL_GUARDED_BY(mu_);         // the previous call ended
  // When the watchdog first saw the next call overdue: the alive time
  // (soak_context.h) and the instant; infinite while not overdue.
  absl::Duration overdue_alive_ ABSL_GUARDED_BY(mu_) = absl::InfiniteDuration();
  Instant overdue_seen_ ABSL_GUARDED_BY(mu_);
  bool overdue_reported_ ABSL_GUARDED_BY(mu_) = false;  // lost, reported
  // Who is acting on the Timer.
  bool owner_busy_ ABSL_GUARDED_BY(mu_) = false;  // claimed
  bool in_call_ ABSL_GUARDED_BY(mu_) = false;     // a callback is running
  bool callback_acting_ ABSL_GUARDED_BY(mu_) = false;
  SelfAction requested_ ABSL_GUARDED_BY(mu_) = SelfAction::kNone;
};

}  // namespace soak
}  // namespace cyber

#endif  // TESTS_SOAK_SOAK_TIMER_H_
