// The ambient clock: what Time::Now(), Rate and Duration::Sleep read while a
// simulated graph's code runs, and the real clocks otherwise.

#include "cyber/time/ambient_clock.h"

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

TEST(AmbientClockTest, NoneOutsideAGraph) {
  EXPECT_EQ(AmbientClock(), nullptr);
  EXPECT_EQ(AmbientClockOr(SteadyClock::Get()), SteadyClock::Get());
}

TEST(AmbientClockTest, ScopesNestAndRestore) {
  SimulatedClock a(Instant() + absl::Hours(1));
  SimulatedClock b(Instant() + absl::Hours(2));
  {
    ClockScope outer(&a);
    EXPECT_EQ(AmbientClock(), &a);
    {
      ClockScope inner(&b);
      EXPECT_EQ(AmbientClock(), &b);
      ClockScope none(nullptr);
      EXPECT_EQ(AmbientClock(), nullptr);
    }
    EXPECT_EQ(AmbientClock(), &a);
  }
  EXPECT_EQ(AmbientClock(), nullptr);
}

TEST(AmbientClockTest, PerThread) {
  SimulatedClock sim(Instant() + absl::Hours(1));
  ClockScope scope(&sim);
  Clock* seen = &sim;
  std::thread([&] { seen = AmbientClock(); }).join();
  EXPECT_EQ(seen, nullptr);
}

TEST(AmbientClockTest, TimeNowReadsASimulatedAmbientClock) {
  SimulatedClock sim(Instant() + absl::Seconds(42));
  ClockScope scope(&sim);
  EXPECT_EQ(Time::Now().ToNanosecond(), absl::ToInt64Nanoseconds(absl::Seconds(42)));
  EXPECT_EQ(Time::MonoTime().ToNanosecond(), absl::ToInt64Nanoseconds(absl::Seconds(42)));
  sim.Advance(absl::Milliseconds(3));
  EXPECT_EQ(Time::Now().ToNanosecond(), absl::ToInt64Nanoseconds(absl::Milliseconds(42003)));
}

TEST(AmbientClockTest, TimeNowStaysTheWallClockOnTheSteadyClock) {
  // The process scheduler installs the steady clock: Time::Now() keeps
  // Cyber RT's meaning there (Unix time), which is after 2020.
  ClockScope scope(SteadyClock::Get());
  const absl::Time year_2020 = absl::FromUnixSeconds(1577836800);
  EXPECT_GT(Time::Now().ToNanosecond(), absl::ToUnixNanos(year_2020));
}

TEST(AmbientClockTest, RateAndDurationSleepOnTheAmbientClock) {
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
