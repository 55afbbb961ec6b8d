// The current clock: what Time::Now(), Rate and Duration::Sleep read while a
// simulated graph's code runs, and the real clocks otherwise.

#include "cyber/time/current_clock.h"

#include "cyber/common/runtime_scope.h"

#include <thread>

#include "absl/time/clock.h"
#include "cyber/time/rate.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/time/steady_clock.h"
#include "cyber/time/time.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

// A runtime scope that names only a clock, installed for its lifetime.
class ClockScope {
 public:
  explicit ClockScope(Clock* clock) : scope_("clock_scope"), installed_(&scope_) {
    scope_.clock.store(clock);
  }

 private:
  RuntimeScope scope_;
  ScopedRuntime installed_;
};

TEST(CurrentClockTest, SteadyOutsideAGraph) {
  EXPECT_EQ(CurrentClock(), SteadyClock::Get());
}

TEST(CurrentClockTest, ScopesNestAndRestore) {
  SimulatedClock a(Instant() + absl::Hours(1));
  SimulatedClock b(Instant() + absl::Hours(2));
  {
    ClockScope outer(&a);
    EXPECT_EQ(CurrentClock(), &a);
    {
      ClockScope inner(&b);
      EXPECT_EQ(CurrentClock(), &b);
      ClockScope none(nullptr);
      EXPECT_EQ(CurrentClock(), SteadyClock::Get());
    }
    EXPECT_EQ(CurrentClock(), &a);
  }
  EXPECT_EQ(CurrentClock(), SteadyClock::Get());
}

TEST(CurrentClockTest, PerThread) {
  SimulatedClock sim(Instant() + absl::Hours(1));
  ClockScope scope(&sim);
  Clock* seen = &sim;
  std::thread([&] { seen = CurrentClock(); }).join();
  EXPECT_EQ(seen, SteadyClock::Get());  // the scope is this thread's
}

TEST(CurrentClockTest, TimeNowReadsASimulatedCurrentClock) {
  SimulatedClock sim(Instant() + absl::Seconds(42));
  ClockScope scope(&sim);
  EXPECT_EQ(Time::Now().ToNanosecond(), absl::ToInt64Nanoseconds(absl::Seconds(42)));
  EXPECT_EQ(Time::MonoTime().ToNanosecond(), absl::ToInt64Nanoseconds(absl::Seconds(42)));
  sim.Advance(absl::Milliseconds(3));
  EXPECT_EQ(Time::Now().ToNanosecond(), absl::ToInt64Nanoseconds(absl::Milliseconds(42003)));
}

TEST(CurrentClockTest, TimeNowStaysTheWallClockOnTheSteadyClock) {
  // The process scheduler installs the steady clock: Time::Now() keeps
  // Cyber RT's meaning there (Unix time), which is after 2020.
  ClockScope scope(SteadyClock::Get());
  const absl::Time year_2020 = absl::FromUnixSeconds(1577836800);
  EXPECT_GT(Time::Now().ToNanosecond(), absl::ToUnixNanos(year_2020));
}

TEST(CurrentClockTest, RateAndDurationSleepOnTheCurrentClock) {
  SimulatedClock sim(Instant() + absl::Hours(1));
  ClockScope scope(&sim);
  Rate rate(100.0);  // 10 ms on the simulated clock
  EXPECT_EQ(rate.ExpectedCycleTime().ToNanosecond(),
            absl::ToInt64Nanoseconds(absl::Milliseconds(10)));
  // A thread sleeping on the simulated clock returns when the simulation
  // reaches the deadline, not after 10 ms of real time.
  std::thread advancer([&] {
    sim.AwaitSleepers(1);
    sim.Advance(absl::Milliseconds(10));
  });
  rate.Sleep();
  advancer.join();
  EXPECT_EQ(sim.Now(), Instant() + absl::Hours(1) + absl::Milliseconds(10));
}

}  // namespace
}  // namespace cyber
