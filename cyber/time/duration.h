// cyber::Duration: Cyber RT's signed time span (nanoseconds), for code
// ported from Cyber RT unchanged:
//
//   cyber::Duration d(0.5);           // seconds
//   AINFO << d.ToSecond();            // 0.5
//   cyber::Duration(0.01).Sleep();    // parks a routine, blocks a thread
//
// New code uses absl::Duration; ToAbsl()/FromAbsl() convert. A thin value
// type over int64 nanoseconds: arithmetic wraps like Cyber RT's (no
// saturation), comparisons are exact.
//
// Threads: a value; no shared state.

#ifndef CYBER_TIME_DURATION_H_
#define CYBER_TIME_DURATION_H_

#include <cstdint>
#include <ostream>

#include "absl/time/time.h"

namespace cyber {

class Duration {
 public:
  Duration() = default;
  explicit Duration(int64_t nanoseconds) : ns_(nanoseconds) {}
  explicit Duration(int nanoseconds) : ns_(nanoseconds) {}
  explicit Duration(double seconds);
  Duration(uint32_t seconds, uint32_t nanoseconds)
      : ns_(int64_t{seconds} * 1000000000 + nanoseconds) {}

  static Duration FromAbsl(absl::Duration d) {
    return Duration(absl::ToInt64Nanoseconds(d));
  }
  absl::Duration ToAbsl() const { return absl::Nanoseconds(ns_); }

  double ToSecond() const { return static_cast<double>(ns_) / 1e9; }
  int64_t ToNanosecond() const { return ns_; }
  bool IsZero() const { return ns_ == 0; }
  // Sleeps this long on the steady clock, or on the simulated clock of the
  // graph whose code calls it (a negative or zero span returns at once); a
  // routine parks instead of blocking its processor.
  void Sleep() const;

  Duration operator+(const Duration& rhs) const { return Duration(ns_ + rhs.ns_); }
  Duration operator-(const Duration& rhs) const { return Duration(ns_ - rhs.ns_); }
  Duration operator-() const { return Duration(-ns_); }
  Duration operator*(double scale) const;
  Duration& operator+=(const Duration& rhs) { ns_ += rhs.ns_; return *this; }
  Duration& operator-=(const Duration& rhs) { ns_ -= rhs.ns_; return *this; }
  Duration& operator*=(double scale) { return *this = *this * scale; }
  bool operator==(const Duration& rhs) const { return ns_ == rhs.ns_; }
  bool operator!=(const Duration& rhs) const { return ns_ != rhs.ns_; }
  bool operator<(const Duration& rhs) const { return ns_ < rhs.ns_; }
  bool operator<=(const Duration& rhs) const { return ns_ <= rhs.ns_; }
  bool operator>(const Duration& rhs) const { return ns_ > rhs.ns_; }
  bool operator>=(const Duration& rhs) const { return ns_ >= rhs.ns_; }

 private:
  int64_t ns_ = 0;
};

// Seconds with nanosecond precision, e.g. "0.500000000".
std::ostream& operator<<(std::ostream& os, const Duration& d);

}  // namespace cyber

#endif  // CYBER_TIME_DURATION_H_
