// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// TimerSystemCore: a whole timer system in one type — the timing wheel, all
// tick arithmetic and the maximum-delay rule, the tick thread (or, for a
// simulation, a thread-free Step()), the tick thread's wake-up, and the
// clock reads of timers. Timers hold it by std::shared_ptr; a TimerSystem
// (timer/timer_system.h) owns one and shuts it down when destroyed.
//
// Why shared: a timer's core can outlive both its Timer handle and the
// TimerSystem (a run already handed to a dispatcher holds the core). A core
// that pointed at the driver would then cancel into freed memory. Here every
// core holds the system alive, so its wheel entry can always be cancelled,
// whatever order the driver, the timers and their queued runs go away in
// (ownership, not declaration order). Shutdown() stops and joins the tick
// thread and closes the system: arms are refused from then on and no timer
// reads the clock again (TryNow fails), so the clock only has to outlive
// the Shutdown(), as the tick thread requires anyway.
//
// The tick thread is tickless: it sleeps until the wheel's next event (an
// expiry or a cascade), blocks indefinitely on an empty wheel, and is woken
// when an arm makes the next event earlier. It sleeps on absolute deadlines
// of its Clock (CLOCK_MONOTONIC for SteadyClock), and on each wake advances
// the wheel to the tick the clock *measures*: a late wake processes every
// skipped tick in order, none lost. On expiry it takes a reference to the
// target (under the wheel's lock, where an armed target is alive), releases
// the lock and calls target->Expire(arm_seq); the expiries of one pass are
// one dispatcher batch (Dispatcher::BeginBatch). Without a thread
// (Options::run_thread false) the owner calls Step() instead: with a
// SimulatedClock the whole system runs deterministically.
//
// One owner of tick arithmetic: a deadline maps to the first tick at or
// after it (never early); the maximum delay counts from the clock's present
// (not from an idle wheel's stale tick). Timers ask here and never reach
// into the wheel.
//
// Announcements. On a clock that is real steady time (Clock::ToSteadyTime)
// the system tells its dispatcher when work is expected
// (Dispatcher::ExpectWork): the instant of the wheel's plan, the tick the
// tick thread will next wake for. The tick thread announces after planning
// each sleep (AnnouncePlan); an Arm due before the tick thread's sleep ends
// wakes it (and it announces); any other Arm or Cancel that moves the plan
// announces on its own thread (later, or earlier but not before that
// sleep: after cancels moved the plan later): cancelling a timeout never
// leaves a stale expectation, and never wakes the tick thread, and arming
// the next one wakes it only if it is due before it wakes anyway (one
// request timeout armed and cancelled per call costs no wake-up per call).
// Announcements are
// serialized and each reads the plan afresh, so the last one made holds the
// latest plan. Close() announces "nothing expected" and ends them.
//
// Early hand-over. If the dispatcher takes work ahead of its time
// (Dispatcher::HandOverLead, capped at a quarter tick) and the clock is real
// steady time, the tick thread sleeps until `lead` before the next event,
// not until the event: the event's expiries are processed then, while the
// clock is still short of the event, and the pass hands their work over in
// an early batch whose not-before instant is the event (DispatchBatch): the
// dispatcher holds it until then. The tick thread's wake-up latency is
// hidden in the lead; the wake-up of whoever runs the call is the only one
// left at the event. The wheel then runs ahead of the clock by at most the
// lead; an Arm() for a tick processed that way whose instant has not come
// is armed for that tick's instant exactly (ArmExact) instead of being
// moved to the tick after it, so it is not served a tick late. Never
// early: a pass's batch is not-before the instant it advanced the wheel
// to, which is at or after every deadline the pass expires. (A periodic
// timer whose next arming is processed early while its call still waits
// counts no missed period for it yet: timer_core.cc, OnExpired.)
// On a simulated clock none of this happens (a simulation stays as it
// was, event for event).
//
// Threads: every method from any thread, including from Expire(), except
// Step() (one caller at a time, no tick thread) and Shutdown() (not from
// the tick thread).

#ifndef TIMER_TIMER_SYSTEM_CORE_H_
#define TIMER_TIMER_SYSTEM_CORE_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/clock.h"
#include "cyber/time/wakeup_event.h"
#include "timer/dispatcher.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace timer {

// Something the tick thread can expire. REQUIRES: owned by std::shared_ptr
// whenever it is armed. Derive from ExpiryTargetOf<T> below.
//
// No virtual functions: 64 bytes instead of 104. The one call goes through
// a function pointer stored after the entry, and the owner (a shared_ptr
// made for the derived type) deletes the right type.
class ExpiryTarget : public WheelEntry,
                     public std::enable_shared_from_this<ExpiryTarget> {
 public:
  using ExpiredFn = void (*)(ExpiryTarget* target, uint32_t arm_seq);

  // Called on the tick thread, without any lock held, for the arming whose
  // arm_seq() was `arm_seq` (a target re-armed since may see a stale one):
  // runs the derived class's OnExpired(arm_seq).
  void Expire(uint32_t arm_seq) { on_expired_(this, arm_seq); }

 protected:
  explicit ExpiryTarget(ExpiredFn on_expired) : on_expired_(on_expired) {}
  ~ExpiryTarget() = default;

 private:
  const ExpiredFn on_expired_;
};

// The base of an expiry target of type T, which has a public
// `void OnExpired(uint32_t arm_seq)`.
template <typename T>
class ExpiryTargetOf : public ExpiryTarget {
 protected:
  ExpiryTargetOf()
      : ExpiryTarget([](ExpiryTarget* target, uint32_t arm_seq) {
          static_cast<T*>(target)->OnExpired(arm_seq);
        }) {}
  ~ExpiryTargetOf() = default;
};
static_assert(sizeof(ExpiryTarget) == 64,
              "entry, owner link and one function pointer: one cache line");

class TimerSystemCore : public std::enable_shared_from_this<TimerSystemCore> {
 public:
  struct Options {
    absl::Duration tick = kTimerResolution;
    std::string name = "timer-tick";  // thread name (<= 15 chars kept)
    // false: no tick thread; the owner advances the system with Step()
    // (SimulatedTimerSystem, SimulatedGraph: no thread at all).
    bool run_thread = true;
    // The most user timers whose schedule may be on at once (Netty's
    // maxPendingTimeouts); 0: no cap. A Start() that would exceed it is
    // refused with ResourceExhausted. Settable later:
    // set_max_pending_timers().
    size_t max_pending_timers = 0;
    // The delay of oneshots that use the default timeout
    // (TimerOptions::use_default_timeout); none: such a Schedule() fails.
    // Settable later: set_default_timeout().
    std::optional<absl::Duration> default_timeout;
  };
  struct Stats {
    uint64_t wakeups = 0;  // returns from the tick thread's sleep
    uint64_t expired = 0;  // targets handed Expire()
    // Passes that handed work over ahead of its time (early hand-over).
    uint64_t early_passes = 0;
  };

  // The wheel's epoch is clock->Now(). `clock` and `dispatcher` must stay
  // valid until Shutdown() returns. Start() starts the tick thread.
  TimerSystemCore(Clock* clock, Dispatcher* dispatcher, Options options);
  ~TimerSystemCore();  // REQUIRES: shut down (or never started)
  TimerSystemCore(const TimerSystemCore&) = delete;
  TimerSystemCore& operator=(const TimerSystemCore&) = delete;

  // Starts the tick thread (Options::run_thread); once, by the owner.
  void Start();
  // Stops and joins the tick thread, then closes the system (idempotent).
  // Armed targets stay armed but will not expire; their owners cancel them.
  void Shutdown();

  // Arms `target` for the first tick at or after `deadline` (re-arms if
  // armed), waking the tick thread if that is earlier than its plan.
  // Errors: FailedPrecondition once closed; OutOfRange beyond max_delay()
  // from the clock's present (a deadline at most max_delay() after
  // clock()->Now() is always accepted, also after an idle wheel has not
  // advanced for a long time).
  absl::StatusOr<TimingWheel::ArmResult> Arm(ExpiryTarget* target,
                                             Instant deadline);
  // As Arm, but for the instant `deadline` itself (TimingWheel::ArmExact):
  // the tick thread wakes for it. A deadline already passed expires at the
  // tick thread's next pass (woken for it).
  absl::StatusOr<TimingWheel::ArmResult> ArmExact(ExpiryTarget* target,
                                                  Instant deadline);
  bool Cancel(ExpiryTarget* target) {
    bool plan_later = false;
    const bool was_armed = wheel_.Cancel(target, &plan_later);
    if (plan_later) AnnouncePlan();
    return was_armed;
  }
  // Tells the dispatcher the wheel's plan if it changed since the last
  // announcement (see the header comment). No-op unless the clock is real
  // steady time, and once closed.
  void AnnouncePlan();

  // Thread-free driving (Options::run_thread false): expires, in tick order,
  // everything due at `now` (Expire on the calling thread), and returns the
  // instant the next event is due (InfiniteFuture if none). The tick thread
  // runs exactly this, then sleeps until the instant it returned (less the
  // early hand-over's lead: with one, an event at most the lead after `now`
  // is processed too, its work handed over early).
  // REQUIRES: no tick thread; one caller at a time.
  Instant Step(Instant now);

  // For simulations and tests: blocks until the tick thread has handled
  // everything due at the clock's current time (including what it handed to
  // an inline dispatcher) and sleeps until a later instant. With a
  // SimulatedClock, advancing time only after this makes every expiry happen
  // at exactly its tick's instant. The tick thread records its sleeps only
  // once somebody has called this (the first call wakes it once to start),
  // so a production loop takes no lock of its own. Without a thread:
  // returns at once.
  void AwaitIdle() const;
  // The instant the tick thread sleeps until, or the last Step() returned
  // (InfiniteFuture if none); with a thread only meaningful after
  // AwaitIdle().
  Instant PlannedWake() const;
  Stats stats() const;

  // The clock's present, or false once closed (the clock may be gone).
  bool TryNow(Instant* now) const;
  // The instant of the tick a deadline fires on (never before it).
  Instant FireInstant(Instant deadline) const {
    return wheel_.TickToInstant(wheel_.DeadlineToTick(deadline));
  }
  // The latest instant the tick thread (or Step) processed: every deadline
  // at or before it has expired.
  Instant ProcessedInstant() const { return wheel_.processed(); }
  Tick TickOf(Instant deadline) const { return wheel_.DeadlineToTick(deadline); }
  Instant InstantOf(Tick tick) const { return wheel_.TickToInstant(tick); }
  absl::Duration tick() const { return wheel_.tick(); }
  absl::Duration max_delay() const { return wheel_.max_delay(); }

  bool closed() const { return closed_.load(std::memory_order_acquire); }

  // --- User timers: their count, its cap, and cancelling them all.
  //
  // The timers (timer_core.h) count themselves here where their schedule
  // turns on and off (ScheduleOn in timer_state.h), with one atomic add:
  // no lock of the system's. The scheduler's sleeps, which arm wheel
  // entries too, are not counted (TimingWheel::size() counts those).
  //
  // The user timers whose schedule is on (Netty's pendingTimeouts()). A
  // snapshot: timers on other threads may start or stop meanwhile.
  size_t pending_timers() const {
    return pending_.count.load(std::memory_order_relaxed);
  }
  // 0: no cap. Lowering it below pending_timers() stops nothing; it
  // refuses starts until enough timers stopped.
  size_t max_pending_timers() const {
    return pending_.cap.load(std::memory_order_relaxed);
  }
  void set_max_pending_timers(size_t cap) {
    pending_.cap.store(cap, std::memory_order_relaxed);
  }
  // Counts one more pending timer unless that would exceed the cap; false
  // (counting nothing) then, with the count and the cap it met in
  // `*pending` and `*cap`. Exact: of two callers racing for the last slot,
  // one gets it; and a refusal is decided on timers actually counted (a
  // compare-and-swap, never a slot taken and given back, which would let
  // a refused caller's passing increment refuse a third while a slot is
  // free).
  bool TryAddPendingTimer(size_t* pending, size_t* cap) {
    *cap = pending_.cap.load(std::memory_order_relaxed);
    *pending = pending_.count.load(std::memory_order_relaxed);
    do {
      if (*cap != 0 && *pending >= *cap) return false;
    } while (!pending_.count.compare_exchange_weak(
        *pending, *pending + 1, std::memory_order_relaxed));
    return true;
  }
  // One more, whatever the cap (a schedule that keeps its slot).
  void AddPendingTimer() {
    pending_.count.fetch_add(1, std::memory_order_relaxed);
  }
  void RemovePendingTimer() {
    pending_.count.fetch_sub(1, std::memory_order_relaxed);
  }
  // How the timer layer cancels every pending timer of a system: the
  // system knows its timers only by their count, the timer layer (which
  // sits above it) knows where they are. Installed by each timer that
  // binds to the system (the same function every time); until one has,
  // there is nothing to cancel.
  using PendingTimerCanceller =
      size_t (*)(TimerSystemCore* system, std::vector<std::string>* cancelled);
  void InstallPendingTimerCanceller(PendingTimerCanceller canceller) {
    canceller_.store(canceller, std::memory_order_release);
  }
  // Cancels every pending user timer of this system as Timer::Cancel()
  // does; returns how many calls that prevented. See TimerSystem::CancelAll.
  // `cancelled` (if not null) gets the names of the timers whose calls it
  // prevented.
  size_t CancelAllTimers(std::vector<std::string>* cancelled = nullptr) {
    const PendingTimerCanceller canceller =
        canceller_.load(std::memory_order_acquire);
    return canceller != nullptr ? canceller(this, cancelled) : 0;
  }

  // The delay of oneshots whose options set use_default_timeout (folly's
  // HHWheelTimer default timeout); none until set (Options::
  // default_timeout or set_default_timeout). Any thread.
  std::optional<absl::Duration> default_timeout() const {
    const int64_t ns = default_timeout_ns_.load(std::memory_order_relaxed);
    if (ns == kNoDefaultTimeout) return std::nullopt;
    if (ns == kInfiniteDefaultTimeout) return absl::InfiniteDuration();
    return absl::Nanoseconds(ns);
  }
  void set_default_timeout(absl::Duration delay) {
    default_timeout_ns_.store(DefaultTimeoutNs(delay),
                              std::memory_order_relaxed);
  }

  const std::string& name() const { return options_.name; }
  Clock* clock() const { return clock_; }
  // Whether clock() is real steady time (Clock::ToSteadyTime), as decided
  // at construction: readable without touching the clock.
  bool clock_is_steady() const { return announces_; }
  // How long before an event the tick thread processes it (early hand-over;
  // zero: at the event).
  absl::Duration hand_over_lead() const { return lead_; }
  Dispatcher* dispatcher() const { return dispatcher_; }
  TimingWheel& wheel() { return wheel_; }
  const TimingWheel& wheel() const { return wheel_; }
  // Wakes of the tick thread requested so far (arms that beat its plan,
  // AwaitIdle's extra pass, Shutdown), for AwaitIdle. The count and the
  // pending flag change in one critical section of the event: a plan made
  // after reading N requests, with no notification pending when it is
  // recorded, covers every one of those N.
  uint64_t wake_requests() const { return wakeup_.notifications(); }
  // One more pass of the tick thread, counted.
  void RequestWake() const { wakeup_.Notify(); }

 private:
  struct Due {
    std::shared_ptr<ExpiryTarget> target;
    uint32_t arm_seq;
  };
  // Refuses arms from now on and waits for clock reads in progress.
  void Close();
  void Loop();
  Instant StepWith(Instant now, std::vector<Due>* due);
  absl::StatusOr<TimingWheel::ArmResult> ArmWith(ExpiryTarget* target,
                                                 Instant deadline, bool exact);

  const Options options_;
  Clock* const clock_;
  Dispatcher* const dispatcher_;
  TimingWheel wheel_;
  // Mutable: a synchronization object, notified from const AwaitIdle().
  mutable WakeupEvent wakeup_;
  std::atomic<bool> closed_{false};
  mutable std::atomic<int> clock_readers_{0};
  // Whether the clock is real steady time: announcements are made.
  const bool announces_;
  // The clock is the process's SteadyClock, which is never destroyed:
  // TryNow() needs no reader count (two atomic read-modify-writes on a line
  // every Start() and every call would share).
  const bool clock_immortal_;
  // The early hand-over's lead (zero: none; see the header comment).
  const absl::Duration lead_;
  // Serializes announcements with each other and with Close().
  Mutex announce_mu_;
  // The plan last announced (InfiniteFuture: nothing expected).
  Instant announced_ ABSL_GUARDED_BY(announce_mu_) = Instant::InfiniteFuture();

  // The pending user timers and their cap, on a line of their own: every
  // arm and cancel of a timer writes the count.
  struct alignas(64) PendingTimers {
    std::atomic<size_t> count{0};
    std::atomic<size_t> cap{0};
  };
  PendingTimers pending_;
  std::atomic<PendingTimerCanceller> canceller_{nullptr};
  // default_timeout() in ns: kNoDefaultTimeout when none; an infinite
  // delay is kInfiniteDefaultTimeout; others are clamped to the ns range.
  static constexpr int64_t kNoDefaultTimeout =
      std::numeric_limits<int64_t>::min();
  static constexpr int64_t kInfiniteDefaultTimeout =
      std::numeric_limits<int64_t>::max();
  static int64_t DefaultTimeoutNs(absl::Duration delay) {
    if (delay == absl::InfiniteDuration()) return kInfiniteDefaultTimeout;
    const int64_t ns = absl::ToInt64Nanoseconds(delay);
    if (ns == kNoDefaultTimeout) return ns + 1;
    return ns == kInfiniteDefaultTimeout ? ns - 1 : ns;
  }
  std::atomic<int64_t> default_timeout_ns_{kNoDefaultTimeout};

  // The tick thread's side.
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> wakeups_{0};
  std::atomic<uint64_t> expired_{0};
  std::atomic<uint64_t> early_passes_{0};
  Mutex shutdown_mu_;  // serializes Shutdown()
  // Set by the first AwaitIdle(): the loop then records its sleeps.
  mutable std::atomic<bool> track_idle_{false};
  std::vector<Due> step_due_;  // Step()'s, reused
  // Whether the tick thread is in its sleep, and until when (see AwaitIdle).
  mutable Mutex idle_mu_;
  mutable CondVar idle_changed_;
  bool sleeping_ ABSL_GUARDED_BY(idle_mu_) = false;
  Instant sleeping_until_ ABSL_GUARDED_BY(idle_mu_);
  // How many wake requests the current plan includes.
  uint64_t planned_requests_ ABSL_GUARDED_BY(idle_mu_) = 0;
  std::thread thread_;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_SYSTEM_CORE_H_
