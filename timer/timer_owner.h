// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// TimerOwner: the timers configured on behalf of an owner (a component),
// listed with their statistics — so that mainboard's summary shows every
// timer a component made itself in Init(), not only the one a
// TimerComponent is given.
//
// Why here: a timer is configured many ways (Cyber RT's Timer(ms, cb,
// oneshot), Timer() then SetTimerOption(), Timer(TimerOptions),
// Configure()), and all of them pass through Timer's one configuration
// path; only the timer layer sees them all. The owner sits above (the
// component layer) and says when its code runs: a ScopedTimerOwner around
// a component's Init(). Every timer configured by that execution (the
// thread, or the routine, that made the scope) while the scope lives is
// adopted by the owner, once (a timer configured again keeps its place,
// with its new period).
//
// What is adopted and kept: the timer's core (timer_core.h), so its
// statistics stay readable, final, after its Timer is destroyed (a Clear()
// that resets its timer still shows what the timer did); the cores live as
// long as the owner. Timers configured elsewhere (a per-message timeout in
// a Proc()) are not adopted: they are many, and short-lived.
//
// Cost: a Timer's configuration reads one thread-local (no owner: nothing
// more); an adopted timer adds one record to its owner, under its lock.
//
// Threads: Timers() from any thread. A ScopedTimerOwner is made and
// destroyed on one thread, by code that does not move between threads
// meanwhile (a launcher starting components: a plain thread).

#ifndef TIMER_TIMER_OWNER_H_
#define TIMER_TIMER_OWNER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "timer/timer_options.h"

namespace cyber {
namespace timer {

// One adopted timer, as its owner lists it.
struct OwnedTimer {
  std::string name;       // given, or the automatic "timer#<n>"
  absl::Duration period;  // a oneshot's delay
  bool oneshot = false;
  TimerStatistics statistics;  // now (final once the timer is gone)
};

class TimerOwner {
 public:
  TimerOwner() = default;
  TimerOwner(const TimerOwner&) = delete;
  TimerOwner& operator=(const TimerOwner&) = delete;

  // The adopted timers, in the order they were first configured, with
  // their name and statistics as they are now.
  std::vector<OwnedTimer> Timers() const;

  // For the timer layer (Timer's configuration path). The owner the
  // calling execution installed (ScopedTimerOwner), or null: one
  // thread-local read when there is none.
  static TimerOwner* Current();
  // A timer identified by `identity` was configured with `period` and
  // `oneshot`; `describe` reads its name and statistics (and holds what it
  // reads). Listed once: configured again, it keeps its place.
  using Describe = std::function<OwnedTimer()>;
  void Adopt(const void* identity, absl::Duration period, bool oneshot, Describe describe);

 private:
  struct Record {
    const void* identity;
    absl::Duration period;
    bool oneshot;
    Describe describe;
  };

  mutable Mutex mu_;
  std::vector<Record> records_ ABSL_GUARDED_BY(mu_);
};

// Makes `owner` the owner of the timers the calling execution configures
// while this lives. Nests (the innermost owns); null: none.
class ScopedTimerOwner {
 public:
  explicit ScopedTimerOwner(TimerOwner* owner);
  ~ScopedTimerOwner();
  ScopedTimerOwner(const ScopedTimerOwner&) = delete;
  ScopedTimerOwner& operator=(const ScopedTimerOwner&) = delete;

 private:
  TimerOwner* const previous_owner_;
  const void* const previous_execution_;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_OWNER_H_
