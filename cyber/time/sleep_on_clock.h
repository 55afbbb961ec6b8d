// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// SleepOnClock: wait until an instant of a Clock the right way for the
// caller. A scheduler routine parks (its processor runs other routines
// meanwhile) when the clock is the one its timing wheel keeps; a plain
// thread, or a routine whose scheduler runs on another clock, blocks.
//
// Why: Rate::Sleep and the Cyber RT time helpers (Duration::Sleep,
// Time::SleepUntil) are called from both. Blocking a processor thread in a
// routine would stall every other routine of that processor (Cyber RT's own
// Rate does exactly that); parking costs nothing.
//
// Threads: any; no state.

#ifndef CYBER_TIME_SLEEP_ON_CLOCK_H_
#define CYBER_TIME_SLEEP_ON_CLOCK_H_

#include "cyber/time/clock.h"

namespace cyber {

// Returns at or after `deadline` on `clock` (never earlier). In a routine it
// is a cancellation point (the routine's cancellation propagates). The one
// exception: on the thread that moves `clock` (ScopedClockDriver,
// cyber/time/current_clock.h) a blocking sleep could never end, so it logs
// an error and returns at once.
void SleepOnClock(Clock* clock, Instant deadline);

}  // namespace cyber

#endif  // CYBER_TIME_SLEEP_ON_CLOCK_H_
