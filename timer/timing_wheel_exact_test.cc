// Exact deadlines on the timing wheel (TimingWheel::ArmExact): an entry
// expires at the first advance whose instant reaches its deadline, never
// before; deadlines between ticks need no wake-up of their own at the tick
// before; a deadline already passed expires at the next advance.

#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace timer {
namespace {

constexpr absl::Duration kTick = absl::Milliseconds(2);

Instant At(absl::Duration d) { return Instant() + d; }

// Collects what advances expire.
struct Expired {
  std::vector<WheelEntry*> entries;
  void To(TimingWheel& wheel, Instant now) {
    wheel.AdvanceToInstant(now, [this](WheelEntry* e) { entries.push_back(e); });
  }
  void ToTick(TimingWheel& wheel, Tick tick) {
    wheel.AdvanceTo(tick, [this](WheelEntry* e) { entries.push_back(e); });
  }
};

TEST(TimingWheelExactTest, ADeadlineBetweenTicksExpiresAtItselfNotAtTheTick) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry e;
  const Instant deadline = At(absl::Microseconds(5300));  // between 4 and 6 ms
  auto armed = wheel.ArmExact(&e, deadline);
  ASSERT_TRUE(armed.ok()) << armed.status();
  EXPECT_EQ(armed->expires, 3u);  // the tick at or after it
  EXPECT_TRUE(armed->wake_needed);
  // The next event is the deadline itself, not the tick before it (4 ms) or
  // after it (6 ms).
  EXPECT_EQ(wheel.NextEvent(), deadline);
  EXPECT_EQ(wheel.PlanWake(), deadline);
  Expired x;
  x.To(wheel, deadline - absl::Nanoseconds(1));
  EXPECT_TRUE(x.entries.empty()) << "expired before its deadline";
  EXPECT_TRUE(wheel.IsArmed(&e));
  EXPECT_EQ(wheel.NextEvent(), deadline);  // now held, still due at itself
  x.To(wheel, deadline);
  ASSERT_EQ(x.entries.size(), 1u);
  EXPECT_EQ(x.entries[0], &e);
  EXPECT_FALSE(wheel.IsArmed(&e));
  EXPECT_EQ(wheel.size(), 0u);
  EXPECT_EQ(wheel.NextEvent(), Instant::InfiniteFuture());
}

TEST(TimingWheelExactTest, ADeadlineOnATickIsAnOrdinaryEntryOfThatTick) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry exact, plain;
  ASSERT_TRUE(wheel.ArmExact(&exact, At(absl::Milliseconds(6))).ok());
  ASSERT_TRUE(wheel.Arm(&plain, 3).ok());
  EXPECT_EQ(wheel.NextEvent(), At(absl::Milliseconds(6)));
  Expired x;
  x.ToTick(wheel, 2);
  EXPECT_TRUE(x.entries.empty());
  x.ToTick(wheel, 3);
  EXPECT_EQ(x.entries.size(), 2u);
}

TEST(TimingWheelExactTest, ATickEntryBesideExactOnesKeepsTheTickAsTheEvent) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry exact, plain;
  // Exact at 5.3 ms waits at tick 2 (4 ms); a plain entry of tick 2 needs
  // a wake-up at 4 ms.
  ASSERT_TRUE(wheel.ArmExact(&exact, At(absl::Microseconds(5300))).ok());
  EXPECT_EQ(wheel.NextEvent(), At(absl::Microseconds(5300)));
  auto armed = wheel.Arm(&plain, 2);
  ASSERT_TRUE(armed.ok());
  EXPECT_EQ(wheel.NextEvent(), At(absl::Milliseconds(4)));
  // Cancelling the plain entry moves the event back to the deadline.
  ASSERT_TRUE(wheel.PlanWake() == At(absl::Milliseconds(4)));
  bool later = false;
  EXPECT_TRUE(wheel.Cancel(&plain, &later));
  EXPECT_TRUE(later);
  EXPECT_EQ(wheel.planned_wake(), At(absl::Microseconds(5300)));
  wheel.Cancel(&exact);
}

TEST(TimingWheelExactTest, HeldDeadlinesExpireInDeadlineOrder) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry a, b, c;
  // Armed out of order, all within tick (2, 3].
  ASSERT_TRUE(wheel.ArmExact(&b, At(absl::Microseconds(4600))).ok());
  ASSERT_TRUE(wheel.ArmExact(&c, At(absl::Microseconds(5900))).ok());
  ASSERT_TRUE(wheel.ArmExact(&a, At(absl::Microseconds(4100))).ok());
  EXPECT_EQ(wheel.NextEvent(), At(absl::Microseconds(4100)));
  Expired x;
  x.To(wheel, At(absl::Microseconds(4100)));
  ASSERT_EQ(x.entries.size(), 1u);
  EXPECT_EQ(x.entries[0], &a);
  EXPECT_EQ(wheel.NextEvent(), At(absl::Microseconds(4600)));
  // A late wake expires the rest, in deadline order.
  x.To(wheel, At(absl::Milliseconds(7)));
  ASSERT_EQ(x.entries.size(), 3u);
  EXPECT_EQ(x.entries[1], &b);
  EXPECT_EQ(x.entries[2], &c);
}

TEST(TimingWheelExactTest, APassedDeadlineExpiresAtTheNextAdvanceAndWakesTheDriver) {
  TimingWheel wheel(Instant(), kTick);
  Expired x;
  x.To(wheel, At(absl::Microseconds(10300)));
  WheelEntry e;
  wheel.PlanWake();  // empty: nothing planned
  for (absl::Duration d : {absl::Microseconds(10300), absl::Milliseconds(10),
                           absl::Milliseconds(3), -absl::Seconds(5)}) {
    auto armed = wheel.ArmExact(&e, At(d));
    ASSERT_TRUE(armed.ok()) << d;
    EXPECT_LE(wheel.NextEvent(), wheel.processed()) << d;
    // The same instant again is enough: nothing is lost or waits a tick.
    x.To(wheel, At(absl::Microseconds(10300)));
    EXPECT_FALSE(wheel.IsArmed(&e)) << d;
  }
  EXPECT_EQ(x.entries.size(), 4u);
  // A deadline inside the tick being waited for (10.3 < 11 < 12 ms) is
  // held at once, and wakes a driver planning for later.
  WheelEntry f, far;
  ASSERT_TRUE(wheel.Arm(&far, 100).ok());
  wheel.PlanWake();
  auto armed = wheel.ArmExact(&f, At(absl::Milliseconds(11)));
  ASSERT_TRUE(armed.ok());
  EXPECT_TRUE(armed->wake_needed);
  EXPECT_EQ(wheel.planned_wake(), At(absl::Milliseconds(11)));
  wheel.Cancel(&f);
  wheel.Cancel(&far);
}

TEST(TimingWheelExactTest, CancelAndRearmMoveEntriesBetweenModes) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry e;
  ASSERT_TRUE(wheel.ArmExact(&e, At(absl::Microseconds(900))).ok());  // held
  ASSERT_TRUE(wheel.Arm(&e, 5).ok());  // now a tick entry
  EXPECT_EQ(wheel.size(), 1u);
  Expired x;
  x.To(wheel, At(absl::Milliseconds(9)));
  EXPECT_TRUE(x.entries.empty());
  ASSERT_TRUE(wheel.ArmExact(&e, At(absl::Microseconds(9500))).ok());
  EXPECT_TRUE(wheel.Cancel(&e));
  EXPECT_FALSE(wheel.Cancel(&e));
  x.To(wheel, At(absl::Milliseconds(20)));
  EXPECT_TRUE(x.entries.empty());
  EXPECT_EQ(wheel.size(), 0u);
}

TEST(TimingWheelExactTest, FarExactDeadlinesCascadeAndStayExact) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry e;
  // Waiting in level 1 (beyond the work wheel's 2 x 8.19 s), level 2
  // (beyond level 1's 2 x 8.7 min) and level 3.
  for (absl::Duration d : {absl::Seconds(20) + absl::Microseconds(300),
                           absl::Minutes(20) + absl::Microseconds(1),
                           absl::Hours(30) + absl::Microseconds(777)}) {
    auto armed = wheel.ArmExact(&e, wheel.processed() + d);
    ASSERT_TRUE(armed.ok()) << d;
    const Instant deadline = wheel.processed() + d;
    Expired x;
    // Advance in irregular steps up to just before it, then to it.
    Instant t = wheel.processed();
    while (t + absl::Milliseconds(700) < deadline) {
      t += absl::Milliseconds(700);
      x.To(wheel, t);
      ASSERT_TRUE(x.entries.empty()) << "early, " << d;
    }
    EXPECT_EQ(wheel.NextEvent(), deadline) << d;
    x.To(wheel, deadline - absl::Nanoseconds(1));
    ASSERT_TRUE(x.entries.empty()) << "early, " << d;
    x.To(wheel, deadline);
    ASSERT_EQ(x.entries.size(), 1u) << d;
  }
}

TEST(TimingWheelExactTest, AnInfiniteDeadlineIsOutOfRange) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry e;
  auto armed = wheel.ArmExact(&e, Instant::InfiniteFuture());
  EXPECT_EQ(armed.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_FALSE(wheel.IsArmed(&e));
  armed = wheel.ArmExact(&e, At(wheel.max_delay() + kTick * 2));
  EXPECT_EQ(armed.status().code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace timer
}  // namespace cyber
