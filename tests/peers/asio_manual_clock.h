// A clock the peer benchmarks move by hand, and the Boost.Asio timer type
// that runs on it, so Asio's timer queue can be driven through a minute of
// expiries without a minute of wall time. Asio reads the clock through
// basic_waitable_timer's clock parameter exactly as it would read
// std::chrono::steady_clock; only the source of "now" differs.

#ifndef TESTS_PEERS_ASIO_MANUAL_CLOCK_H_
#define TESTS_PEERS_ASIO_MANUAL_CLOCK_H_

#include <chrono>
#include <cstdint>

#include <boost/asio/basic_waitable_timer.hpp>

namespace cyber {
namespace peers {

struct ManualClock {
  using rep = int64_t;
  using period = std::nano;
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<ManualClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept { return current; }
  static inline time_point current{};  // the benchmark's main thread moves it
};

// Asio's epoll reactor looks at its timer queue only when a timerfd, armed
// for the real-time distance to the earliest deadline, fires. These wait
// traits report every distance as zero, so the timerfd is always due and
// each io_context::poll() checks the queue against the manual clock.
struct ImmediateWaitTraits {
  static ManualClock::duration to_wait_duration(const ManualClock::duration&) {
    return ManualClock::duration(0);
  }
  static ManualClock::duration to_wait_duration(
      const ManualClock::time_point&) {
    return ManualClock::duration(0);
  }
};

using ManualAsioTimer =
    boost::asio::basic_waitable_timer<ManualClock, ImmediateWaitTraits>;

}  // namespace peers
}  // namespace cyber

#endif  // TESTS_PEERS_ASIO_MANUAL_CLOCK_H_
