// WheelLockProbe: how long a thread waits for the timing wheel's lock.
//
// Why: every Arm, Cancel and expiry of every timer in the process takes the
// wheel's one mutex (timer/timing_wheel.h), and the tick thread holds it for
// a whole cascade. Periodic lateness far above the wake-up floor could come
// from the tick thread itself or from waiting for that lock; this probe
// measures the lock directly. Every `spacing` a thread ("scale-probe") times
// one TimingWheel::size() call, which does nothing but take and release the
// lock: its duration is the wait for the lock (plus some 20-50 ns). Waits
// longer than 1 ms are also counted by their position in the cascade cycle
// (cascade_phase.h).
//
// Threads: Start/Stop from the owner; the figures after Stop().

#ifndef TESTS_SCALE_WHEEL_LOCK_PROBE_H_
#define TESTS_SCALE_WHEEL_LOCK_PROBE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/time/time.h"
#include "cyber/time/clock.h"
#include "tests/scale/cascade_phase.h"
#include "tests/scale/latency_recorder.h"
#include "timer/latency_histogram.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace scale {

class WheelLockProbe {
 public:
  // Waits at least this long are counted by cascade phase.
  static constexpr absl::Duration kLongWait = absl::Milliseconds(1);

  WheelLockProbe(const timer::TimingWheel* wheel, Clock* clock,
                 const MeasurementWindow* window, absl::Duration spacing)
      : wheel_(wheel), clock_(clock), window_(window), spacing_(spacing) {}
  ~WheelLockProbe() { Stop(); }
  WheelLockProbe(const WheelLockProbe&) = delete;
  WheelLockProbe& operator=(const WheelLockProbe&) = delete;

  void Start();
  void Stop();  // idempotent

  // REQUIRES: Stop() has returned. Probes that began inside the window.
  const timer::LatencyHistogram& wait() const { return wait_; }
  std::array<uint64_t, kCascadePhaseBins> long_waits_by_phase() const {
    return long_waits_.Snapshot();
  }

 private:
  void Loop();

  const timer::TimingWheel* const wheel_;
  Clock* const clock_;
  const MeasurementWindow* const window_;
  const absl::Duration spacing_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  timer::LatencyHistogram wait_;  // the probe thread only, until joined
  PhaseCounts long_waits_;
};

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_WHEEL_LOCK_PROBE_H_
