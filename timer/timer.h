// Timer: periodic and oneshot timers on the process's timing wheel.
//
// Two surfaces on one class:
//
//  * Cyber RT compatible — code written for apollo::cyber::Timer compiles
//    with the include path and namespace changed:
//
//      cyber::Timer timer(100, [] { PollLidar(); }, false);  // period in ms
//      timer.Start();
//      ...
//      timer.Stop();
//
//    Errors (period 0 — for a oneshot too, as in Cyber RT —, an empty
//    callback, Start() before SetTimerOption()) are logged with AERROR,
//    naming the timer and the value; the timer then does not run. Any
//    positive period runs: Timer(1, cb, false) at 1 kHz exactly,
//    Timer(1, cb, true) on the next tick.
//
//  * Modern — absl::Duration periods, absl::Status results, callbacks that
//    may receive a TimerEvent, an overrun policy, statistics, and an explicit
//    TimerSystem (so tests and simulators can use their own clock):
//
//      cyber::TimerOptions o;
//      o.name = "imu_poll";
//      o.period = absl::Milliseconds(10);
//      o.event_callback = [](const cyber::TimerEvent& e) { ... };
//      cyber::Timer imu(o);
//      absl::Status s = imu.Schedule();
//
// Guarantees (see timer_core.h for the state machine that enforces them): a
// timer never fires before its expected time. A periodic schedule starts on
// the first 2 ms tick boundary at or after Schedule(), and call k is armed
// for start + k * period itself, whatever the period (1 ms and 500 us run at
// their exact rate, 5 ms on its own phase, not rounded to ticks): each call
// comes at its instant plus wake-up and dispatch latency, and drift does
// not accumulate. A oneshot's delay counts from Schedule(): with the default
// TimerPrecision::kTick it fires on the first tick at or after the deadline
// (at most one tick late; timeouts due in one tick share one wake-up), with
// kExact at the deadline itself. Any delay is accepted: <= 0 runs at once
// (counted late), beyond the wheel's range (~99 days) or InfiniteDuration
// is "never" (armed, cancellable, never fires). A callback never runs concurrently with itself,
// whatever it does to its own timer (Stop, Start, Configure, destroy it). A
// callback that throws is caught, logged with the timer's name and counted;
// a periodic timer keeps running.
//
// What Stop() guarantees when it returns — the same from every caller:
//   * no call of this timer is running (except the caller itself, when
//     Stop() is called from the timer's own callback: that call finishes
//     normally and is the last one), and no call begins after it, queued
//     calls being dropped, unless somebody starts the timer again after
//     Stop() returned; IsRunning() is false;
//   * from a plain thread it blocks until a running call has finished;
//   * from a scheduler routine of any priority it parks the routine (the
//     processor runs other routines, including the callback it waits for)
//     and is woken when the call ends: it never spins or yields in a loop;
//   * while it waits, a Start() from the running callback (a watchdog
//     re-arming itself) is overridden: the stop wins.
// Two callbacks must not Stop() each other's timers at the same time (each
// would wait for the other), and Stop() must not be called holding a lock
// the callback needs (it would wait for ever). Such a stop is not silent: a
// Stop() that has waited longer than --timer_stop_warn_after (default 1s,
// steady clock) for the running call logs a warning naming the timer, the
// caller (thread or routine, and the component the launcher is shutting
// down) and the wait so far, again at 2, 4, 8... times the threshold, and
// "returned after" once it returns; StopsInProgress() lists the stops
// waiting now (timer_stop_registry.h). The destructor stops, the same way; it may run
// while another thread is still inside a Stop() of the same timer (the
// waiting Stop() holds what it uses).
//
// Start() after Stop() starts a new schedule; a oneshot stops running when
// its call begins, so it can be started again from then on, also from its
// own callback (the new countdown starts at that Start()).
//
// Queries and outcomes (docs/timer.md has the table with the peers' names):
//   * Cancel() is Stop() returning whether it prevented a call (rclcpp
//     cancel(), folly cancelTimeout(), Netty Timeout.cancel(), Asio
//     cancel()'s count). It is decided under the timer's lock against the
//     queued call's begin, so a request is owned by exactly one of its
//     reply (Cancel() returned true) and its timeout (the callback ran):
//
//       if (timeout.Cancel()) Complete(request);   // else the timeout has it
//
//   * phase(): kNotStarted, kScheduled, kRunning, kFired (a oneshot's call
//     ran), kCancelled (the last stop prevented a call); rclcpp
//     is_canceled(), Netty isCancelled()/isExpired().
//   * TimeUntilNextCall(): rclcpp time_until_trigger(), folly
//     getTimeRemaining(); IsReady(): rclcpp is_ready().
//   * TimerOptions::on_cancel: folly callbackCanceled(); once per cancel
//     that prevented a call (Stop, Cancel, Configure, the destructor,
//     TimerSystem::CancelAll), on the cancelling thread, no lock held,
//     after the stop is complete (so it may use its timer, except when
//     the destructor is what cancelled it).
//   * clock(), IsSteady(): rclcpp get_clock(), is_steady().
//   * On the TimerSystem: PendingTimers(), a max_pending_timers cap (Netty
//     pendingTimeouts(), maxPendingTimeouts), CancelAll() (folly
//     cancelAll()), ShutdownAndCancelAll() (Netty stop()) and a default
//     timeout for oneshots that ask for it (folly setDefaultTimeout(),
//     TimerOptions::use_default_timeout).
//   * After its timer system shut down, a timer's schedule is over:
//     phase() kCancelled, TimeUntilNextCall() infinite, and a Cancel()
//     false with no on_cancel (the shutdown, not the cancel, ended it).
//
// Where a timer runs (its timer system). A Timer given a TimerSystem runs
// there for its whole life; it may outlive the driver (then Schedule()
// fails with FailedPrecondition). A Timer without one binds, at each
// Schedule()/Start() from the idle state (never at construction), to the
// timer system of the runtime its caller belongs to (the rule of
// cyber/common/runtime_scope.h):
//   * in a runtime's code (a routine, a component's Init()): that runtime's,
//     e.g. a simulated graph's, on its clock;
//   * elsewhere: the process runtime's (cyber/runtime/process_runtime.h,
//     made on first use or by cyber::Init()), callbacks on its scheduler's
//     coroutine pool, however early the Timer was constructed;
//   * after cyber::Shutdown() (until the next Init()): Schedule() returns
//     FailedPrecondition naming the timer, Start() logs it (AERROR), and
//     nothing runs or retries. Init() again gives working timers, also to
//     Timer objects made before or during the shutdown.
//
// Threads: all methods are thread-safe and may be called from any thread
// or routine, including the timer's own callback.

#ifndef TIMER_TIMER_H_
#define TIMER_TIMER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/time/clock.h"
#include "timer/timer_system.h"
#include "timer/timer_options.h"

namespace cyber {
namespace timer {

class TimerCore;

class Timer {
 public:
  // --- Cyber RT compatible --------------------------------------------
  Timer();
  explicit Timer(TimerOption opt);
  Timer(uint32_t period, std::function<void()> callback, bool oneshot);
  void SetTimerOption(TimerOption opt);
  void Start();
  void Stop();

  // --- Modern -----------------------------------------------------------
  // `driver` null: the process timer system, bound at each Schedule().
  explicit Timer(TimerOptions options, TimerSystem* driver = nullptr);
  // Replaces the configuration, stopping the timer first (synchronously, as
  // Stop(); from the timer's own callback it does not wait, and the running
  // call finishes with the old callback). Start it again to use the new one.
  // Errors: as ValidateTimerOptions.
  absl::Status Configure(TimerOptions options);
  // Starts the schedule now. On a timer that is already running it does
  // nothing and returns OK: a periodic schedule keeps its phase and a
  // oneshot keeps its deadline (the countdown is NOT restarted; Start()
  // behaves the same, as in Cyber RT). Use Reset() to restart it.
  // Errors: the configuration error; FailedPrecondition if never
  // configured or the timer system is shut down.
  absl::Status Schedule();
  // Restarts the countdown from now, keeping the options (ROS 2's reset()):
  // a oneshot's deadline becomes now + period, a periodic schedule starts
  // again from now (first call at the first tick boundary at or after now,
  // plus the period). On a stopped timer it is Schedule(). It never waits:
  // if a call is running (from another thread, or Reset() is called by the
  // callback itself) that call finishes and the new schedule is armed when
  // it ends, so the callback never runs beside itself. A Stop() that is
  // waiting for that call still wins. The watchdog pattern:
  //   watchdog.Reset();   // on every message: the timeout counts from here
  // Errors: as Schedule().
  absl::Status Reset();

  bool IsRunning() const;
  TimerStatistics GetStatistics() const;
  std::string name() const;

  // --- Queries and outcomes (see the header comment) --------------------
  // Stop(), with the same guarantees and the same waiting, returning true
  // iff this call prevented a call of the callback: the schedule was on
  // (armed, queued, a periodic timer between or during its calls, a
  // restart pending) when it took effect. False for a oneshot whose call
  // has begun, a stopped or never started timer, a second Cancel().
  // Decided under the timer's lock against the call's own begin: of a
  // Cancel() and the call it races with, exactly one wins.
  bool Cancel();
  // What the timer is doing, or how its last schedule ended.
  TimerPhase phase() const;
  // The next call's expected instant minus its clock's now: <= 0 when due
  // or queued; while a periodic call runs, the time until the one after
  // it by the schedule (kDelay re-bases it when the call ends);
  // InfiniteDuration when nothing is scheduled (not started, stopped, a
  // oneshot whose call has begun, its system shut down) or the timer is
  // armed for "never".
  absl::Duration TimeUntilNextCall() const;
  // Due but not yet called (rclcpp's is_ready()): the next call's
  // expected instant has come (TimeUntilNextCall() <= 0) and that call has
  // not begun — armed and due, or queued for its processor. False when
  // nothing is scheduled.
  bool IsReady() const;
  // The clock of the timer system it runs on: its TimerSystem's; for a
  // Timer without one, the system it is bound to (since its last Start()),
  // or the steady clock before that (nothing is looked up or created).
  Clock* clock() const;
  // Whether clock() is real steady time (a SimulatedClock is not).
  bool IsSteady() const;

  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

 private:
  // Configure(); `cyber_option`: from SetTimerOption (Cyber RT's rules).
  absl::Status ConfigureAs(TimerOptions options, bool cyber_option);

  // The one core, for the Timer's whole life (see timer_core.h).
  const std::shared_ptr<TimerCore> core_;
};

}  // namespace timer

// Cyber RT spells these cyber::Timer, cyber::TimerOption.
using timer::OverrunPolicy;
using timer::Timer;
using timer::TimerEvent;
using timer::TimerOption;
using timer::TimerOptions;
using timer::TimerPhase;
using timer::TimerPrecision;
using timer::TimerStatistics;
using timer::TIMER_RESOLUTION_MS;

}  // namespace cyber

#endif  // TIMER_TIMER_H_
