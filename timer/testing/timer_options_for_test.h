// The TimerOptions most timer tests start from: a named oneshot or periodic
// timer with a plain callback. A test sets whatever else it is about.

#ifndef TIMER_TESTING_TIMER_OPTIONS_FOR_TEST_H_
#define TIMER_TESTING_TIMER_OPTIONS_FOR_TEST_H_

#include <functional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "timer/timer_options.h"

namespace cyber {
namespace timer {
namespace timer_test {

inline TimerOptions Oneshot(const std::string& name, absl::Duration delay,
                            std::function<void()> cb = [] {}) {
  TimerOptions o;
  o.name = name;
  o.period = delay;
  o.oneshot = true;
  o.callback = std::move(cb);
  return o;
}

inline TimerOptions Periodic(const std::string& name, absl::Duration period,
                             std::function<void()> cb = [] {}) {
  TimerOptions o;
  o.name = name;
  o.period = period;
  o.callback = std::move(cb);
  return o;
}

}  // namespace timer_test
}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TESTING_TIMER_OPTIONS_FOR_TEST_H_
