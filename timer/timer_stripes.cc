#include "timer/timer_stripes.h"

#include <cstdint>

namespace cyber {
namespace timer {

TimerStripe* StripeFor(const void* core) {
  // Never destroyed: a core may be freed on any thread at exit.
  static TimerStripe* const stripes = new TimerStripe[kTimerStripes];
  // Cores are heap blocks (at least 16-byte aligned): drop the low bits and
  // mix the rest, so neighbouring cores land on different stripes.
  uint64_t x = reinterpret_cast<uintptr_t>(core) >> 4;
  x *= 0x9E3779B97F4A7C15ull;
  return &stripes[x >> (64 - kTimerStripeBits)];
}

}  // namespace timer
}  // namespace cyber
