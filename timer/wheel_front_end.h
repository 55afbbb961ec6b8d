// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// TimerSystem: the side of a timer system that timers hold — the timing
// wheel, the tick arithmetic and maximum-delay rule, the wake-up of the tick
// thread, and the clock reads of timers — shared by std::shared_ptr.
//
// Why shared: a timer's core can outlive both its Timer handle and the
// TickDriver (a run already handed to a dispatcher holds the core). A core
// that pointed at the driver would then cancel into freed memory. Here every
// core holds the front end alive, so its wheel entry can always be
// cancelled, whatever order the driver, the timers and their queued runs
// go away in (ownership, not declaration order). When the driver shuts
// down it Close()s the front end: arms are refused from then on and no
// timer reads the clock again (TryNow fails), so the clock only has to
// outlive the driver, as the driver's own thread requires anyway.
//
// One owner of tick arithmetic: a deadline maps to the first tick at or
// after it (never early); the maximum delay counts from the clock's present
// (not from an idle wheel's stale tick). Timers ask here and never reach
// into the wheel.
//
// Threads: every method from any thread.

#ifndef TIMER_TIMER_SYSTEM_H_
#define TIMER_TIMER_SYSTEM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

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
// No virtual functions: 56 bytes instead of 96. The one call goes through
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
static_assert(sizeof(ExpiryTarget) == 56,
              "entry, owner link and one function pointer: under a cache line");

class TimerSystem : public std::enable_shared_from_this<TimerSystem> {
 public:
  // `clock` and `dispatcher` must stay valid until Close() returns.
  TimerSystem(std::string name, Clock* clock, Dispatcher* dispatcher,
                absl::Duration tick);
  TimerSystem(const TimerSystem&) = delete;
  TimerSystem& operator=(const TimerSystem&) = delete;

  // Arms `target` for the first tick at or after `deadline` (re-arms if
  // armed), waking the tick thread if that is earlier than its plan.
  // Errors: FailedPrecondition once closed; OutOfRange beyond max_delay()
  // from the clock's present.
  absl::StatusOr<TimingWheel::ArmResult> Arm(ExpiryTarget* target,
                                             Instant deadline);
  bool Cancel(ExpiryTarget* target) { return wheel_.Cancel(target); }

  // The clock's present, or false once closed (the clock may be gone).
  bool TryNow(Instant* now) const;
  // The instant of the tick a deadline fires on (never before it).
  Instant FireInstant(Instant deadline) const {
    return wheel_.TickToInstant(wheel_.DeadlineToTick(deadline));
  }
  // The earliest tick anything armed now can fire on, given that it is at
  // least `t` now: a processed tick can no longer fire.
  Tick EarliestTick(Instant t) const;
  // The instant of the last tick at or before `t`.
  Instant TickFloor(Instant t) const {
    return wheel_.TickToInstant(wheel_.InstantToTick(t));
  }
  // The instant of the last tick the tick thread processed.
  Instant ProcessedInstant() const { return wheel_.TickToInstant(wheel_.now()); }
  Tick TickOf(Instant deadline) const { return wheel_.DeadlineToTick(deadline); }
  Instant InstantOf(Tick tick) const { return wheel_.TickToInstant(tick); }
  absl::Duration tick() const { return wheel_.tick(); }
  absl::Duration max_delay() const { return wheel_.max_delay(); }

  // Refuses arms from now on and waits for clock reads in progress.
  // Idempotent. Armed targets stay armed (never expire); owners cancel them.
  void Close();
  bool closed() const { return closed_.load(std::memory_order_acquire); }

  const std::string& name() const { return name_; }
  Clock* clock() const { return clock_; }
  Dispatcher* dispatcher() const { return dispatcher_; }
  TimingWheel& wheel() { return wheel_; }
  const TimingWheel& wheel() const { return wheel_; }
  WakeupEvent* wakeup() { return &wakeup_; }
  // Wakes of the tick thread requested so far (arms that beat its plan,
  // AwaitIdle's extra pass, Shutdown), for TickDriver::AwaitIdle. The count
  // and the pending flag change in one critical section of the event: a
  // plan made after reading N requests, with no notification pending when
  // it is recorded, covers every one of those N.
  uint64_t wake_requests() const { return wakeup_.notifications(); }
  // One more pass of the tick thread, counted.
  void RequestWake() { wakeup_.Notify(); }

 private:
  const std::string name_;
  Clock* const clock_;
  Dispatcher* const dispatcher_;
  TimingWheel wheel_;
  WakeupEvent wakeup_;
  std::atomic<bool> closed_{false};
  mutable std::atomic<int> clock_readers_{0};
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_SYSTEM_H_
