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
//    Errors (period 0, below the 2 ms resolution, above the maximum, empty
//    callback, Start() before SetTimerOption()) are logged with AERROR,
//    naming the timer and the value; the timer then does not run.
//
//  * Modern — absl::Duration periods, absl::Status results, callbacks that
//    may receive a TimerEvent, an overrun policy, statistics, and an explicit
//    TickDriver (so tests and simulators can use their own clock):
//
//      cyber::TimerOptions o;
//      o.name = "imu_poll";
//      o.period = absl::Milliseconds(10);
//      o.event_callback = [](const cyber::TimerEvent& e) { ... };
//      cyber::Timer imu(o);
//      absl::Status s = imu.Schedule();
//
// Guarantees (see timer_core.h for how): a timer never fires before its
// expected time and at most one tick (plus dispatch latency) after it. A
// periodic schedule starts on the first 2 ms tick boundary at or after
// Schedule(), so periods of whole ticks are served on the tick itself; a
// oneshot's delay counts from Schedule() and rounds up to a tick;
// periodic timers are phase-locked to start + k * period, so drift does not
// accumulate; a callback never runs concurrently with itself; Stop() is
// synchronous (when it returns the callback is not running and will not run
// again, queued calls are dropped) and may be called from the callback
// itself; the destructor stops; Start() after Stop() starts a new schedule;
// a oneshot stops running when its call begins, so it can be started again
// from then on, also from its own callback. A callback that throws is
// caught, logged with the timer's name and counted; a periodic timer keeps
// running.
//
// What a callback may do: anything with its own or other timers (Start, Stop,
// destroy, create and start new ones). It runs where the dispatcher puts it
// (a scheduler coroutine after cyber::Init, else the fallback callback
// executor), never on the tick thread and never under a timer lock.
//
// Threads: all methods are thread-safe. A Timer must not outlive its
// TickDriver (the process default lives until cyber::Shutdown()).

#ifndef TIMER_TIMER_H_
#define TIMER_TIMER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "cyber/common/mutex.h"
#include "timer/tick_driver.h"
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
  // `driver` null: the process-wide default (DefaultTickDriver()).
  explicit Timer(TimerOptions options, TickDriver* driver = nullptr);
  // Replaces the configuration (stopping the timer first).
  // Errors: as ValidateTimerOptions.
  absl::Status Configure(TimerOptions options);
  // Starts the schedule now; OK if already running.
  // Errors: the configuration error, FailedPrecondition if never configured
  // or the timer system is shut down.
  absl::Status Schedule();

  bool IsRunning() const;
  TimerStatistics GetStatistics() const;
  std::string name() const;
  TickDriver* driver() const { return driver_; }

  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

 private:
  std::shared_ptr<TimerCore> core() const;

  TickDriver* const driver_;
  mutable Mutex mu_;
  std::string name_ ABSL_GUARDED_BY(mu_);
  bool configured_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status config_status_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<TimerCore> core_ ABSL_GUARDED_BY(mu_);  // null if invalid
};

}  // namespace timer

// Cyber RT spells these cyber::Timer, cyber::TimerOption.
using timer::OverrunPolicy;
using timer::Timer;
using timer::TimerEvent;
using timer::TimerOption;
using timer::TimerOptions;
using timer::TimerStatistics;
using timer::TIMER_RESOLUTION_MS;

}  // namespace cyber

#endif  // TIMER_TIMER_H_
