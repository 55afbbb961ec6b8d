// WakeupFloor: what this machine can do at best, measured beside the timers.
//
// A bare thread sleeps with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)
// to deadlines spaced one timer tick (2 ms) apart and records how late each
// wake-up is. No timer code is involved, so its lateness is the floor that
// any sleeping thread on this machine pays right now (scheduler wake-up,
// vCPU wake-up, interference from other processes); a timer callback cannot
// beat it, only add to it. The scale run's lateness target is stated against
// it: periodic p99 <= one tick + floor p99.
//
// A wake-up later than the next deadline skips the deadlines already passed
// (counted) instead of sleeping to them with zero delay, so one long stall
// counts once, as it would for a sleeping thread.
//
// Threads: Start/Stop from one thread (the owner); the figures after Stop().

#ifndef TESTS_SCALE_WAKEUP_FLOOR_H_
#define TESTS_SCALE_WAKEUP_FLOOR_H_

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/time/time.h"
#include "timer/latency_histogram.h"

namespace cyber {
namespace scale {

class WakeupFloor {
 public:
  explicit WakeupFloor(absl::Duration spacing) : spacing_(spacing) {}
  ~WakeupFloor() { Stop(); }
  WakeupFloor(const WakeupFloor&) = delete;
  WakeupFloor& operator=(const WakeupFloor&) = delete;

  // Starts the sleeping thread (named "scale-floor").
  void Start();
  // Stops and joins it (idempotent).
  void Stop();

  // REQUIRES: Stop() has returned.
  const timer::LatencyHistogram& lateness() const { return lateness_; }
  uint64_t skipped() const { return skipped_; }
  uint64_t early() const { return early_; }
  absl::Duration spacing() const { return spacing_; }

 private:
  void Loop();

  const absl::Duration spacing_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  // Written by the thread only, read after join.
  timer::LatencyHistogram lateness_;
  uint64_t skipped_ = 0;
  uint64_t early_ = 0;
};

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_WAKEUP_FLOOR_H_
