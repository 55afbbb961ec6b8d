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
// A probe's duration also holds any time the probe thread itself spent
// preempted (on a busy 2-core machine, a runnable thread can wait
// milliseconds for a CPU), which is not a wait for the lock. Each probe
// therefore reads the thread's involuntary context switches before and
// after (getrusage(RUSAGE_THREAD)): the probes with none are also recorded
// apart (wait_unpreempted()), and the long waits are counted by whether
// the probe was preempted. A probe that slept on the lock and then waited
// for a CPU after its wake-up has no involuntary switch: that delay stays
// in both figures (they do not flatter the lock).
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
  // The probes during which the probe thread was not preempted.
  const timer::LatencyHistogram& wait_unpreempted() const {
    return wait_unpreempted_;
  }
  // Waits of at least kLongWait, and how many of them had the probe thread
  // preempted.
  uint64_t long_waits() const { return long_waits_total_; }
  uint64_t long_waits_preempted() const { return long_waits_preempted_; }
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
  // The probe thread only, until joined.
  timer::LatencyHistogram wait_;
  timer::LatencyHistogram wait_unpreempted_;
  uint64_t long_waits_total_ = 0;
  uint64_t long_waits_preempted_ = 0;
  PhaseCounts long_waits_;
};

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_WHEEL_LOCK_PROBE_H_
