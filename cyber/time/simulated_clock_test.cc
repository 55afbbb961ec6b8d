#include "cyber/time/simulated_clock.h"

#include <atomic>
#include <thread>
#include <vector>

#include "cyber/common/mutex.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

constexpr absl::Duration kMs = absl::Milliseconds(1);

TEST(SimulatedClockTest, StartsWhereToldAndMovesOnlyWhenAdvanced) {
  SimulatedClock clock(Instant() + absl::Seconds(10));
  EXPECT_EQ(clock.Now(), Instant() + absl::Seconds(10));
  EXPECT_EQ(clock.Now(), Instant() + absl::Seconds(10));
  clock.Advance(3 * kMs);
  EXPECT_EQ(clock.Now(), Instant() + absl::Seconds(10) + 3 * kMs);
  clock.AdvanceTo(Instant() + absl::Seconds(11));
  EXPECT_EQ(clock.Now(), Instant() + absl::Seconds(11));
  clock.AdvanceTo(Instant() + absl::Seconds(11));  // same instant: allowed
  EXPECT_EQ(clock.Now(), Instant() + absl::Seconds(11));
}

TEST(SimulatedClockTest, SleeperWakesExactlyWhenTimeReachesItsDeadline) {
  SimulatedClock clock;
  const Instant deadline = Instant() + 10 * kMs;
  std::atomic<bool> woke{false};
  Instant woke_at;
  std::thread sleeper([&] {
    clock.SleepUntil(deadline);
    woke_at = clock.Now();
    woke = true;
  });
  clock.AwaitSleepers(1);
  clock.AdvanceTo(deadline - absl::Nanoseconds(1));
  // Advance returns only after due sleepers left; this one was not due.
  EXPECT_FALSE(woke);
  EXPECT_EQ(clock.NumSleepers(), 1);
  clock.AdvanceTo(deadline);
  sleeper.join();  // released by the advance; time does not move meanwhile
  EXPECT_TRUE(woke);
  EXPECT_EQ(woke_at, deadline);
  EXPECT_EQ(clock.NumSleepers(), 0);
}

TEST(SimulatedClockTest, ManySleepersOnManyThreadsEachWakeAtTheirInstant) {
  SimulatedClock clock;
  constexpr int kThreads = 8;
  constexpr int kSleepsPerThread = 25;

  // Sleeper i sleeps until (k * kThreads + i + 1) ms for k = 0..24, so every
  // millisecond step wakes exactly one thread. Each records the time it saw
  // and reports back; the driver checks it before moving time again.
  Mutex mu;
  CondVar reported;
  int reports = 0;  // guarded by mu
  std::vector<std::vector<Instant>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < kSleepsPerThread; ++k) {
        clock.SleepUntil(Instant() + (k * kThreads + i + 1) * kMs);
        seen[i].push_back(clock.Now());
        MutexLock lock(&mu);
        ++reports;
        reported.SignalAll();
      }
    });
  }
  for (int step = 1; step <= kThreads * kSleepsPerThread; ++step) {
    // Park every thread that still has sleeps left before moving time, so
    // each wake-up is a release of a parked thread. Thread i's last deadline
    // is at step (kSleepsPerThread - 1) * kThreads + i + 1.
    int still_sleeping = 0;
    for (int i = 0; i < kThreads; ++i) {
      if ((kSleepsPerThread - 1) * kThreads + i + 1 >= step) ++still_sleeping;
    }
    clock.AwaitSleepers(still_sleeping);
    clock.AdvanceTo(Instant() + step * kMs);
    MutexLock lock(&mu);
    while (reports < step) reported.Wait(&mu);
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_EQ(seen[i].size(), static_cast<size_t>(kSleepsPerThread));
    for (int k = 0; k < kSleepsPerThread; ++k) {
      EXPECT_EQ(seen[i][k], Instant() + (k * kThreads + i + 1) * kMs)
          << "thread " << i << " sleep " << k;
    }
  }
}

TEST(SimulatedClockTest, OneAdvanceReleasesEveryDueSleeperAndNoOther) {
  SimulatedClock clock;
  std::atomic<int> woken{0};
  std::vector<std::thread> threads;
  for (int i = 1; i <= 6; ++i) {
    threads.emplace_back([&, i] {
      clock.SleepUntil(Instant() + i * kMs);
      ++woken;
    });
  }
  clock.AwaitSleepers(6);
  EXPECT_EQ(clock.NextSleeperDeadline(), Instant() + kMs);
  clock.AdvanceTo(Instant() + 4 * kMs);
  // Sleepers 5 and 6 are still parked; the four due ones have left.
  EXPECT_EQ(clock.NumSleepers(), 2);
  EXPECT_EQ(clock.NextSleeperDeadline(), Instant() + 5 * kMs);
  clock.Advance(2 * kMs);
  for (auto& t : threads) t.join();
  EXPECT_EQ(woken, 6);
  EXPECT_EQ(clock.NextSleeperDeadline(), Instant::InfiniteFuture());
}

TEST(SimulatedClockTest, PastDeadlineReturnsImmediately) {
  SimulatedClock clock(Instant() + absl::Seconds(1));
  clock.SleepUntil(Instant());  // must not block
  WakeupEvent event;
  EXPECT_EQ(clock.WaitUntil(Instant() + absl::Seconds(1), &event),
            WakeReason::kDeadline);
}

TEST(SimulatedClockTest, NotifyInterruptsAWaitWithoutMovingTime) {
  SimulatedClock clock;
  WakeupEvent event;
  WakeReason reason = WakeReason::kDeadline;
  std::thread waiter([&] {
    reason = clock.WaitUntil(Instant() + absl::Hours(1), &event);
  });
  clock.AwaitSleepers(1);
  event.Notify();
  waiter.join();
  EXPECT_EQ(reason, WakeReason::kNotified);
  EXPECT_EQ(clock.Now(), Instant());
}

TEST(SimulatedClockTest, InfiniteWaitEndsOnlyByNotification) {
  SimulatedClock clock;
  WakeupEvent event;
  WakeReason reason = WakeReason::kDeadline;
  std::thread waiter([&] {
    reason = clock.WaitUntil(Instant::InfiniteFuture(), &event);
  });
  clock.AwaitSleepers(1);
  clock.Advance(absl::Hours(24 * 365));
  EXPECT_EQ(clock.NumSleepers(), 1);
  event.Notify();
  waiter.join();
  EXPECT_EQ(reason, WakeReason::kNotified);
}

TEST(SimulatedClockTest, ConcurrentAdvancesCompose) {
  SimulatedClock clock;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&clock] {
      for (int i = 0; i < 1000; ++i) clock.Advance(kMs);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(clock.Now(), Instant() + 4000 * kMs);
}

TEST(SimulatedClockDeathTest, TimeNeverGoesBackwards) {
  SimulatedClock clock(Instant() + absl::Seconds(5));
  EXPECT_DEATH(clock.AdvanceTo(Instant() + absl::Seconds(4)),
               "never goes backwards");
  EXPECT_DEATH(clock.Advance(-kMs), "must be finite and not negative");
}

}  // namespace
}  // namespace cyber
