#include "cyber/time/rate.h"

#include <random>
#include <thread>
#include <vector>

#include "cyber/time/simulated_clock.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

constexpr absl::Duration kPeriod = absl::Milliseconds(10);

TEST(RateTest, RejectsBadPeriodAndNullClock) {
  SimulatedClock clock;
  for (absl::Duration bad : {absl::ZeroDuration(), absl::Milliseconds(-1),
                             absl::InfiniteDuration()}) {
    auto rate = Rate::Create(bad, &clock);
    ASSERT_FALSE(rate.ok());
    EXPECT_EQ(rate.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(rate.status().message().find(absl::FormatDuration(bad)),
              std::string::npos)
        << rate.status();
  }
  EXPECT_FALSE(Rate::Create(kPeriod, nullptr).ok());
}

// The loop wakes late by a random amount each cycle (up to half a period, as a
// loaded machine would), yet every deadline stays on start + k * period and
// the average period over 1,000 cycles is exact.
TEST(RateTest, KeepsExactAveragePeriodOverThousandCyclesDespiteLateWakes) {
  SimulatedClock clock(Instant() + absl::Seconds(3));
  const Instant start = clock.Now();
  auto rate = Rate::Create(kPeriod, &clock);
  ASSERT_TRUE(rate.ok()) << rate.status();
  constexpr int kCycles = 1000;

  std::vector<Instant> returns;
  returns.reserve(kCycles);
  std::thread loop([&] {
    for (int k = 0; k < kCycles; ++k) {
      rate->Sleep();
      returns.push_back(clock.Now());
    }
  });

  std::mt19937 rng(7);
  std::uniform_int_distribution<int> late_us(0, 5000);
  std::vector<absl::Duration> lateness(kCycles);
  for (int k = 0; k < kCycles; ++k) {
    clock.AwaitSleepers(1);  // the loop is parked in Sleep() for cycle k
    const Instant deadline = start + (k + 1) * kPeriod;
    // Creep up to the deadline: nothing may be released before it.
    clock.AdvanceTo(deadline - absl::Nanoseconds(1));
    ASSERT_EQ(clock.NumSleepers(), 1) << "released early at cycle " << k;
    lateness[k] = absl::Microseconds(late_us(rng));
    clock.AdvanceTo(deadline + lateness[k]);
  }
  loop.join();

  ASSERT_EQ(returns.size(), static_cast<size_t>(kCycles));
  for (int k = 0; k < kCycles; ++k) {
    EXPECT_EQ(returns[k], start + (k + 1) * kPeriod + lateness[k]) << k;
  }
  // Average period measured between deadlines is exact; the only error in
  // the end-to-end span is the last cycle's own lateness, never accumulated.
  const absl::Duration span = returns.back() - start;
  EXPECT_EQ(span - lateness.back(), kCycles * kPeriod);
  EXPECT_EQ(rate->MissedCycles(), 0);
}

TEST(RateTest, OverrunSkipsMissedCyclesAndKeepsPhase) {
  SimulatedClock clock;
  auto rate = Rate::Create(kPeriod, &clock);
  ASSERT_TRUE(rate.ok());
  // The loop body took 35 ms: deadlines 10 and 20 are missed, 30 is late.
  clock.Advance(absl::Milliseconds(35));
  rate->Sleep();  // returns at once, no sleep
  EXPECT_EQ(clock.Now(), Instant() + absl::Milliseconds(35));
  EXPECT_EQ(rate->MissedCycles(), 2);
  EXPECT_EQ(rate->Overruns(), 1);  // it returned at once: counted
  // Back on phase: the next deadline is 40 ms, not 35 + 10 ms.
  EXPECT_EQ(rate->NextDeadline(), Instant() + absl::Milliseconds(40));
}

TEST(RateTest, SlightlyLateCycleIsNotCountedAsMissed) {
  SimulatedClock clock;
  auto rate = Rate::Create(kPeriod, &clock);
  ASSERT_TRUE(rate.ok());
  clock.Advance(absl::Milliseconds(15));
  rate->Sleep();
  EXPECT_EQ(rate->MissedCycles(), 0);
  EXPECT_EQ(rate->Overruns(), 1);  // returned at once at 15 ms
  EXPECT_EQ(rate->NextDeadline(), Instant() + absl::Milliseconds(20));
}

TEST(RateTest, ResetRestartsScheduleFromNow) {
  SimulatedClock clock;
  auto rate = Rate::Create(kPeriod, &clock);
  ASSERT_TRUE(rate.ok());
  clock.Advance(absl::Milliseconds(3));
  rate->Reset();
  EXPECT_EQ(rate->NextDeadline(), Instant() + absl::Milliseconds(13));
}

TEST(RateTest, ReportsActualCycleTime) {
  SimulatedClock clock;
  auto rate = Rate::Create(kPeriod, &clock);
  ASSERT_TRUE(rate.ok());
  clock.Advance(absl::Milliseconds(12));
  rate->Sleep();  // returns at 12 ms (late)
  EXPECT_EQ(rate->actual_cycle(), absl::ZeroDuration());
  clock.Advance(absl::Milliseconds(8));
  rate->Sleep();  // deadline 20 ms reached exactly
  EXPECT_EQ(rate->actual_cycle(), absl::Milliseconds(8));
}

TEST(RateTest, RealClockNeverReturnsBeforeDeadline) {
  // Real time: only lower bounds are asserted; scheduling noise can only
  // make a return later, never earlier, so this cannot flake.
  SteadyClock* clock = SteadyClock::Get();
  auto rate = Rate::Create(absl::Milliseconds(2), clock);
  ASSERT_TRUE(rate.ok());
  for (int k = 0; k < 20; ++k) {
    const Instant deadline = rate->NextDeadline();
    rate->Sleep();
    EXPECT_GE(clock->Now(), deadline);
  }
}

}  // namespace
}  // namespace cyber

namespace cyber {
namespace {

TEST(RateCyberTest, ConstructorsTakeHzNanosecondsOrADuration) {
  EXPECT_EQ(Rate(100.0).ExpectedCycleTime(), Duration(0.01));
  EXPECT_EQ(Rate(uint64_t{20000000}).ExpectedCycleTime(), Duration(0.02));
  EXPECT_EQ(Rate(Duration(0.5)).period(), absl::Milliseconds(500));
  EXPECT_TRUE(Rate(100.0).ok());
  EXPECT_TRUE(Rate(100.0).CycleTime().IsZero());  // before the second Sleep()
}

TEST(RateCyberTest, AnUnusableValueIsNotOkAndSleepReturnsAtOnce) {
  for (Rate rate : {Rate(0.0), Rate(-5.0), Rate(1.0 / 0.0), Rate(uint64_t{0}),
                    Rate(Duration(-0.1))}) {
    EXPECT_FALSE(rate.ok());
    rate.Sleep();  // logged, returns (a blocked test would time out)
  }
}

TEST(RateCyberTest, SleepPacesALoopOnTheSteadyClock) {
  Rate rate(500.0);  // 2 ms
  const Instant start = SteadyClock::Get()->Now();
  for (int i = 0; i < 5; ++i) rate.Sleep();
  EXPECT_GE(SteadyClock::Get()->Now() - start, absl::Milliseconds(10));
  EXPECT_GT(rate.CycleTime(), Duration());
}

}  // namespace
}  // namespace cyber
