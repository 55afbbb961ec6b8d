#include "timer/timer_stripes.h"

#include <cstdint>

namespace cyber {
namespace timer {

namespace {
TimerStripe* Table() {
  // Never destroyed: a core may be freed on any thread at exit.
  static TimerStripe* const stripes = new TimerStripe[kTimerStripes];
  return stripes;
}
}  // namespace

TimerStripe* TimerStripeAt(size_t index) { return &Table()[index]; }

TimerStripe* StripeFor(const void* core) {
  TimerStripe* const stripes = Table();
  // Cores are heap blocks (at least 16-byte aligned): drop the low bits and
  // mix the rest, so neighbouring cores land on different stripes.
  uint64_t x = reinterpret_cast<uintptr_t>(core) >> 4;
  x *= 0x9E3779B97F4A7C15ull;
  return &stripes[x >> (64 - kTimerStripeBits)];
}

}  // namespace timer
}  // namespace cyber
