// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// TimerStripe: the lock and the stop-waiters list that a timer uses, shared
// with the other timers whose cores hash to the same stripe.
//
// Why shared. A per-timer std::mutex is 40 bytes and a wait list 8 more, on
// every one of the hundreds of thousands of timeouts a robot module keeps
// armed, while a timer's lock is held for a few dozen nanoseconds and a
// Stop() waits for a running call only rarely. A fixed table of
// cache-line-sized stripes gives each timer a lock at the cost of one
// pointer. Two timers on one stripe only serialise their (short) critical
// sections; a Stop() waiting on a stripe may be woken by another timer's
// call ending and simply waits again (it re-checks its own timer's count).
//
// The stripe also lists the timers of the stripe (intrusive, linked
// through the cores: see TimerCore), so that TimerSystem::CancelAll() finds
// every pending timer by walking the table one stripe lock at a time. A
// core is listed for its whole life, from construction to destruction
// (which take the stripe's lock anyway), not while its schedule is on:
// arming and cancelling then touch no other core (unlinking would write
// two neighbours, cold cache lines in a big set of timeouts), and the rare
// CancelAll() skips the cores that are not pending.
//
// Lock order: a stripe's mutex is a timer's own lock (timer_core.h). No code
// holds two stripes at once, so timers sharing a stripe cannot deadlock.

#ifndef TIMER_TIMER_STRIPES_H_
#define TIMER_TIMER_STRIPES_H_

#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "cyber/common/adaptive_mutex.h"
#include "cyber/time/wait_list.h"

namespace cyber {
namespace timer {

class TimerCore;

struct alignas(64) TimerStripe {
  // Spin-then-futex (adaptive_mutex.h): held for tens of nanoseconds per
  // Start/Stop/expiry, the common case costs two atomic instructions.
  AdaptiveMutex mu;
  // Stop()s waiting for a call of a timer of this stripe to end.
  WaitList call_ended ABSL_GUARDED_BY(mu);
  // The first of this stripe's timers (live cores), or null; the rest
  // follow through the cores' links.
  TimerCore* cores ABSL_GUARDED_BY(mu) = nullptr;
};
static_assert(sizeof(TimerStripe) == 64, "one stripe, one cache line");

// Stripes in the table: 2^10 x 64 B = 64 KiB per process.
inline constexpr int kTimerStripeBits = 10;
inline constexpr size_t kTimerStripes = size_t{1} << kTimerStripeBits;
static_assert(kTimerStripes == 1024, "the table is 1024 stripes");

// The stripe of the timer whose core is at `core`; the same for the core's
// whole life.
TimerStripe* StripeFor(const void* core);

// The stripe at `index` of the table (0 <= index < kTimerStripes), for a
// walk over every timer (TimerSystem::CancelAll).
TimerStripe* TimerStripeAt(size_t index);

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_STRIPES_H_
