// A periodic timer whose calls are held up (its processor busy with higher
// priorities, a stalled process) counts the periods it misses as they pass,
// not when a late call finally runs: a monitor reading its statistics sees
// the starvation within a period. Also on a timer system that hands work
// over early (a dispatcher with a lead, on real time: the scheduler's case),
// where the provisional arming of the next period is processed before its
// instant.
//
// Deterministic: a thread-free timer system on a manual clock and a
// dispatcher that never runs the calls it is given until the test says so.

#include <chrono>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "timer/testing/holding_dispatcher.h"
#include "timer/testing/steady_time_simulated_clock.h"
#include "timer/testing/timer_options_for_test.h"
#include "timer/timer.h"
#include "timer/timer_system.h"

namespace cyber {
namespace timer {
namespace {

using timer_test::Periodic;

constexpr absl::Duration kMs = absl::Milliseconds(1);

// Holds every call; asks for an early hand-over of `lead`.
class LeadDispatcher final : public Dispatcher {
 public:
  explicit LeadDispatcher(absl::Duration lead) : lead_(lead) {}
  using Dispatcher::Dispatch;
  bool Dispatch(std::function<void()> task, int priority) override {
    return held_.Dispatch(std::move(task), priority);
  }
  std::chrono::nanoseconds HandOverLead() const override {
    return absl::ToChronoNanoseconds(lead_);
  }
  void RunHeld() { held_.RunHeld(); }

 private:
  const absl::Duration lead_;
  HoldingDispatcher held_;
};

TimerSystem::Options Opts() {
  TimerSystem::Options o;
  o.name = "starved";
  o.run_thread = false;
  return o;
}

class StarvationTest : public ::testing::TestWithParam<absl::Duration> {};

// 500 ms of a 10 ms timer whose first call never begins: the periods it
// misses show in its statistics as they pass, driven as the tick thread
// drives the system (it wakes the lead before each event).
TEST_P(StarvationTest, MissedPeriodsShowWhileTheCallIsHeldUp) {
  const absl::Duration lead = GetParam();
  SteadyTimeSimulatedClock clock(Instant() + absl::Hours(1));
  LeadDispatcher dispatcher(lead);
  TimerSystem system(&clock, &dispatcher, Opts());
  int calls = 0;
  Timer t(Periodic("starved", 10 * kMs, [&] { ++calls; }), &system);
  ASSERT_TRUE(t.Schedule().ok());
  const Instant start = clock.Now();
  const Instant end = start + 500 * kMs;
  Instant next = system.Step(clock.Now());
  uint64_t seen_missed = 0;
  while (next <= end) {
    // The tick thread's wake: `lead` before the event.
    clock.AdvanceTo(std::max(next - lead, clock.Now()));
    next = system.Step(clock.Now());
    // Within one period of a miss, the statistics say so.
    const absl::Duration since_first_miss = clock.Now() - (start + 20 * kMs);
    if (since_first_miss >= 10 * kMs) {
      const uint64_t missed = t.GetStatistics().missed_periods;
      EXPECT_GE(missed, static_cast<uint64_t>(since_first_miss / (10 * kMs)))
          << "at " << (clock.Now() - start);
      EXPECT_GE(missed, seen_missed);
      seen_missed = missed;
    }
  }
  clock.AdvanceTo(end);
  system.Step(clock.Now());
  EXPECT_EQ(calls, 0);
  TimerStatistics s = t.GetStatistics();
  EXPECT_EQ(s.fires, 0u);
  // Calls 2..49 are due by 490 ms and none began: at least 48 missed (the
  // queued call stands for the latest one due).
  EXPECT_GE(s.missed_periods, 48u);
  EXPECT_LE(s.missed_periods, 50u);

  // The held-up call finally runs: it counts as one fire, and the periods
  // already counted are not counted again.
  const uint64_t missed_before = s.missed_periods;
  dispatcher.RunHeld();
  s = t.GetStatistics();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(s.fires, 1u);
  EXPECT_EQ(s.missed_periods, missed_before);
  t.Stop();
  system.Shutdown();
}

INSTANTIATE_TEST_SUITE_P(Leads, StarvationTest,
                         ::testing::Values(absl::ZeroDuration(),
                                           absl::Microseconds(200),
                                           absl::Microseconds(500)));

}  // namespace
}  // namespace timer
}  // namespace cyber
