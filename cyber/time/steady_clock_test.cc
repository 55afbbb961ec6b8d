#include "cyber/time/steady_clock.h"

#include <thread>

#include "gtest/gtest.h"

namespace cyber {
namespace {

TEST(SteadyClockTest, IsMonotonic) {
  SteadyClock* clock = SteadyClock::Get();
  Instant prev = clock->Now();
  for (int i = 0; i < 200000; ++i) {
    const Instant now = clock->Now();
    ASSERT_GE(now, prev);
    prev = now;
  }
}

TEST(SteadyClockTest, SharesTheEpochOfStdSteadyClock) {
  // Both read CLOCK_MONOTONIC; converting must round-trip to the same
  // timeline. A descheduling between the two reads can separate them, so the
  // bound is loose (one second), yet any epoch mix-up (wall clock, boot time
  // offset) is off by far more.
  const auto before = std::chrono::steady_clock::now();
  const auto ours = SteadyClock::ToTimePoint(SteadyClock::Get()->Now());
  const auto after = std::chrono::steady_clock::now();
  EXPECT_LE(before, ours);
  EXPECT_LE(ours, after + std::chrono::seconds(1));
}

TEST(SteadyClockTest, SleepUntilNeverReturnsEarly) {
  // Real time: only the lower bound is asserted, which no scheduling noise
  // can break (a loaded machine only makes the wake later).
  SteadyClock* clock = SteadyClock::Get();
  for (int i = 0; i < 20; ++i) {
    const Instant deadline = clock->Now() + absl::Microseconds(500 + 100 * i);
    clock->SleepUntil(deadline);
    EXPECT_GE(clock->Now(), deadline);
  }
}

TEST(SteadyClockTest, WaitUntilReturnsAtDeadlineWithoutNotification) {
  SteadyClock* clock = SteadyClock::Get();
  WakeupEvent event;
  const Instant deadline = clock->Now() + absl::Milliseconds(2);
  EXPECT_EQ(clock->WaitUntil(deadline, &event), WakeReason::kDeadline);
  EXPECT_GE(clock->Now(), deadline);
}

TEST(SteadyClockTest, NotifyWakesAnInfiniteWait) {
  // The wait has no deadline, so only the notification can end it: the test
  // cannot pass by timing luck.
  WakeupEvent event;
  std::thread notifier([&event] { event.Notify(); });
  EXPECT_EQ(SteadyClock::Get()->WaitUntil(Instant::InfiniteFuture(), &event),
            WakeReason::kNotified);
  notifier.join();
}

TEST(SteadyClockTest, NotificationBeforeTheWaitIsNotLost) {
  WakeupEvent event;
  event.Notify();
  EXPECT_EQ(SteadyClock::Get()->WaitUntil(Instant::InfiniteFuture(), &event),
            WakeReason::kNotified);
  // It was consumed: a second wait runs to its (already past) deadline.
  EXPECT_EQ(SteadyClock::Get()->WaitUntil(Instant(), &event),
            WakeReason::kDeadline);
}

}  // namespace
}  // namespace cyber
