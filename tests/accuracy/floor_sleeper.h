// FloorSleeper: the machine's wake-up floor. A bare thread sleeps with
// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) (SteadyClock::SleepUntil)
// to a list of absolute deadlines and records how late each wake-up is.
//
// Why: a timer can be no more punctual than a thread that does nothing but
// sleep to the same deadlines on the same machine at the same time. The
// accuracy scenarios run one of these beside each timer, so the report can
// say how much the timer adds rather than how noisy the machine is.
//
// The thread does nothing between wake-ups except append to its own vector
// (reserved up front, so no allocation while measuring). Deadlines already
// past when their turn comes are slept to anyway (clock_nanosleep returns at
// once) and recorded as late. The thread reads its own CPU clock
// (CLOCK_THREAD_CPUTIME_ID) as it ends, so a scenario can tell the floor's
// share of the process's CPU time.
//
// Threads: Start(), Join() and cpu() from one thread (the scenario's). The
// fires and the CPU time are written only by the sleeper thread until Join()
// returns.

#ifndef TESTS_ACCURACY_FLOOR_SLEEPER_H_
#define TESTS_ACCURACY_FLOOR_SLEEPER_H_

#include <cstdint>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "cyber/time/instant.h"
#include "cyber/time/steady_clock.h"
#include "tests/accuracy/fire_record.h"

namespace cyber {
namespace accuracy {

struct Deadline {
  int64_t index = 0;  // becomes Fire::index
  Instant at;
};

class FloorSleeper {
 public:
  explicit FloorSleeper(SteadyClock* clock) : clock_(clock) {}
  ~FloorSleeper();  // joins a started thread
  FloorSleeper(const FloorSleeper&) = delete;
  FloorSleeper& operator=(const FloorSleeper&) = delete;

  // Starts the thread. REQUIRES: `deadlines` sorted by `at`; not started yet.
  void Start(std::vector<Deadline> deadlines);
  // Waits for the last deadline's wake-up and returns every fire, in order.
  std::vector<Fire> Join();
  // The CPU time the sleeper thread used in its whole life (user + system).
  // REQUIRES: Join() has returned.
  absl::Duration cpu() const { return cpu_; }

 private:
  SteadyClock* const clock_;
  std::thread thread_;
  std::vector<Fire> fires_;  // the sleeper thread's until Join()
  absl::Duration cpu_;       // the sleeper thread's until Join()
};

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_FLOOR_SLEEPER_H_
