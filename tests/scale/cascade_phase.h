// CascadePhase: where in the timing wheel's cascade cycle an instant falls,
// and counters per position.
//
// Why: the wheel (timer/timing_wheel.h) moves a level-1 slot into the work
// wheel every kWorkWheelSlots ticks (8.19 s at 2 ms), spread over the
// revolution before
// and in lock holds of bounded size. With 10^6 timeouts armed that slot can
// hold a large share of them, so anything that needs the wheel lock near
// such a cascade may wait. Counting late calls
// and long lock waits by their position in that cycle shows whether the
// stalls line up with the cascades: 16 bins of 256 ticks (512 ms), bin 0
// being the 512 ms that start at the cascade tick.
//
// Threads: PhaseCounts is thread-safe (relaxed atomics).

#ifndef TESTS_SCALE_CASCADE_PHASE_H_
#define TESTS_SCALE_CASCADE_PHASE_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "cyber/time/instant.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace scale {

inline constexpr int kCascadePhaseBins = 16;
static_assert(timer::kWorkWheelSlots % kCascadePhaseBins == 0,
              "bins must divide the cascade cycle");

// The time one bin spans, at the process-wide tick.
inline absl::Duration CascadePhaseBinWidth() {
  return timer::kTimerResolution *
         static_cast<int64_t>(timer::kWorkWheelSlots / kCascadePhaseBins);
}

// The bin of the tick that `t` falls in (the last tick at or before t).
inline int CascadePhaseBin(const timer::TimingWheel& wheel, Instant t) {
  const timer::Tick in_cycle = wheel.InstantToTick(t) % timer::kWorkWheelSlots;
  return static_cast<int>(in_cycle /
                          (timer::kWorkWheelSlots / kCascadePhaseBins));
}

class PhaseCounts {
 public:
  void Add(int bin) { counts_[bin].fetch_add(1, std::memory_order_relaxed); }
  std::array<uint64_t, kCascadePhaseBins> Snapshot() const {
    std::array<uint64_t, kCascadePhaseBins> out{};
    for (int b = 0; b < kCascadePhaseBins; ++b) out[b] = counts_[b].load();
    return out;
  }

 private:
  std::array<std::atomic<uint64_t>, kCascadePhaseBins> counts_{};
};

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_CASCADE_PHASE_H_
