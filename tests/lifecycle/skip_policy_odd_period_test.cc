// Contract pinned (the design contract, "Timer: contract"; timer_options.h, kSkip):
// periodic timers are phase-locked (call k expected at origin + k * period,
// served at that instant itself, whatever the period, never early), and an
// overrun is a run that ends after the next expected call. With a period
// that is not a multiple of the tick (2.5 ms) the calls fall between ticks;
// that alone is neither an overrun nor a reason to skip a call:
//   (a) zero-duration callbacks for one second: exactly 400 calls, each at
//       its expected instant, 0 overruns, 0 missed;
//   (b) a run ending at +12.2 ms does not skip the call expected at +12.5 ms,
//       which runs at +12.5 ms.
//
// SimulatedTimerSystem: callbacks run inline at their tick's exact instant;
// a callback "takes time" by advancing the simulated clock. Fully
// deterministic. The schedule origin is the first tick boundary at or after
// Schedule(); the system's clock starts on a tick boundary, so origin = start.

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

constexpr absl::Duration kPeriod = absl::Microseconds(2500);

TimerOptions Recording(std::vector<TimerEvent>* events,
                       std::function<void(const TimerEvent&)> work) {
  TimerOptions o;
  o.name = "odd_period";
  o.period = kPeriod;
  o.overrun_policy = OverrunPolicy::kSkip;  // the default, stated
  o.event_callback = [events, work](const TimerEvent& e) {
    events->push_back(e);
    if (work) work(e);
  };
  return o;
}

TEST(SkipPolicyOddPeriod, ZeroDurationCallbacksNeverOverrunAtTwoPointFiveMs) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  Timer t(Recording(&events, nullptr), &sim.driver());
  const Instant origin = sim.Now();
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(origin + absl::Seconds(1));
  t.Stop();

  // Calls k = 1..400 (the 400th expected at exactly +1 s, on its tick).
  EXPECT_EQ(events.size(), 400u);
  int wrong = 0;  // calls off their exact slot; the first one is shown
  for (size_t i = 0; i < events.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i) + 1;
    const TimerEvent& e = events[i];
    const absl::Duration offset = kPeriod * k;
    const bool right = e.expected_time == origin + offset &&
                       e.actual_time == origin + offset &&
                       e.actual_time >= e.expected_time && e.missed_periods == 0;
    if (!right && wrong++ == 0) {
      ADD_FAILURE() << "call " << k << ": expected +" << (e.expected_time - origin)
                    << " (want +" << offset << "), actual +" << (e.actual_time - origin)
                    << " (want +" << offset << "), missed_periods "
                    << e.missed_periods;
    }
  }
  EXPECT_EQ(wrong, 0) << "calls off their slot";
  const TimerStatistics s = t.GetStatistics();
  EXPECT_EQ(s.fires, 400u);
  EXPECT_EQ(s.overruns, 0u) << "zero-duration runs counted as overruns";
  EXPECT_EQ(s.missed_periods, 0u);
  EXPECT_EQ(s.early_fires, 0u);
}

TEST(SkipPolicyOddPeriod, RunEndingBeforeTheNextExpectedTimeOnTheSameTickSkipsNothing) {
  SimulatedTimerSystem sim;
  std::vector<TimerEvent> events;
  const Instant origin = sim.Now();
  // Call 4 (expected +10 ms, served at the 10 ms tick) runs 2.2 ms: it ends
  // at +12.2 ms, before call 5's expected +12.5 ms.
  Timer t(Recording(&events,
                    [&sim, origin](const TimerEvent& e) {
                      if (e.expected_time == origin + absl::Milliseconds(10)) {
                        sim.clock().Advance(absl::Microseconds(2200));
                      }
                    }),
          &sim.driver());
  ASSERT_TRUE(t.Schedule().ok());
  sim.RunUntil(origin + absl::Milliseconds(30));
  t.Stop();

  const TimerEvent* call5 = nullptr;
  for (const TimerEvent& e : events) {
    if (e.expected_time == origin + absl::Microseconds(12500)) call5 = &e;
  }
  ASSERT_NE(call5, nullptr) << "the call expected at +12.5 ms was skipped";
  EXPECT_EQ(call5->actual_time, origin + absl::Microseconds(12500));
  EXPECT_EQ(call5->missed_periods, 0);
  EXPECT_EQ(call5->last_run_duration, absl::Microseconds(2200));

  // And the whole schedule: calls 1..12 (+2.5 .. +30 ms), none missed.
  ASSERT_EQ(events.size(), 12u);
  for (size_t i = 0; i < events.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i) + 1;
    EXPECT_EQ(events[i].expected_time, origin + kPeriod * k) << "call " << k;
    EXPECT_GE(events[i].actual_time, events[i].expected_time) << "call " << k;
    EXPECT_EQ(events[i].missed_periods, 0) << "call " << k;
  }
  const TimerStatistics s = t.GetStatistics();
  EXPECT_EQ(s.missed_periods, 0u);
  // No run ended after the next expected time.
  EXPECT_EQ(s.overruns, 0u);
}

}  // namespace
}  // namespace timer
}  // namespace cyber
