// cyber::Time: Cyber RT's point in time (nanoseconds since the Unix epoch),
// for code ported from Cyber RT unchanged:
//
//   msg.set_timestamp_sec(cyber::Time::Now().ToSecond());
//   const cyber::Duration age = cyber::Time::Now() - cyber::Time(stamp_sec);
//
// What each "now" reads, as Cyber RT documents: Time::Now() is the wall
// clock (CLOCK_REALTIME), for timestamps that other machines and logs
// understand; Time::MonoTime() is CLOCK_MONOTONIC. Neither is used for
// scheduling anything in this project: timers, Rate and routine sleeps run
// on a Clock (cyber/time/clock.h), which never jumps.
// In a graph that runs on a simulated clock (cyber/time/current_clock.h),
// both read that clock instead (nanoseconds since its epoch), as Cyber RT's
// Time::Now() reads its mock clock in simulation mode: component code then
// sees the same time as its timers, and no real time leaks into the run.
//
// Threads: a value; no shared state.

#ifndef CYBER_TIME_TIME_H_
#define CYBER_TIME_TIME_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "cyber/time/duration.h"

namespace cyber {

class Time {
 public:
  static const Time MAX;
  static const Time MIN;

  Time() = default;
  explicit Time(uint64_t nanoseconds) : ns_(nanoseconds) {}
  explicit Time(int nanoseconds) : ns_(static_cast<uint64_t>(nanoseconds)) {}
  // Negative seconds are clamped to the epoch.
  explicit Time(double seconds);
  Time(uint32_t seconds, uint32_t nanoseconds)
      : ns_(uint64_t{seconds} * 1000000000 + nanoseconds) {}

  // The wall clock (CLOCK_REALTIME).
  static Time Now();
  // CLOCK_MONOTONIC (since boot).
  static Time MonoTime();
  // Sleeps until the wall clock reads `time`: the remaining span is slept
  // on the steady clock (a routine parks), so a wall-clock step during the
  // sleep does not change its length.
  static void SleepUntil(const Time& time);

  double ToSecond() const { return static_cast<double>(ns_) / 1e9; }
  uint64_t ToNanosecond() const { return ns_; }
  uint64_t ToMicrosecond() const { return ns_ / 1000; }
  bool IsZero() const { return ns_ == 0; }
  // UTC, "2026-11-24 10:15:30.123456789".
  std::string ToString() const;

  Duration operator-(const Time& rhs) const {
    return Duration(static_cast<int64_t>(ns_ - rhs.ns_));
  }
  Time operator+(const Duration& rhs) const {
    return Time(ns_ + static_cast<uint64_t>(rhs.ToNanosecond()));
  }
  Time operator-(const Duration& rhs) const {
    return Time(ns_ - static_cast<uint64_t>(rhs.ToNanosecond()));
  }
  Time& operator+=(const Duration& rhs) { return *this = *this + rhs; }
  Time& operator-=(const Duration& rhs) { return *this = *this - rhs; }
  bool operator==(const Time& rhs) const { return ns_ == rhs.ns_; }
  bool operator!=(const Time& rhs) const { return ns_ != rhs.ns_; }
  bool operator<(const Time& rhs) const { return ns_ < rhs.ns_; }
  bool operator<=(const Time& rhs) const { return ns_ <= rhs.ns_; }
  bool operator>(const Time& rhs) const { return ns_ > rhs.ns_; }
  bool operator>=(const Time& rhs) const { return ns_ >= rhs.ns_; }

 private:
  uint64_t ns_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Time& t);

}  // namespace cyber

#endif  // CYBER_TIME_TIME_H_
