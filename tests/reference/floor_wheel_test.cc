// FloorWheel must be right, or the benchmark's ratios against it lie: every
// expiry is checked against WheelModel (tests/reference/wheel_model.h), the
// ordered-map reference TimingWheel is checked against, run with the same
// Arm / Cancel / AdvanceTo rules.

#include "tests/reference/floor_wheel.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/reference/wheel_model.h"

namespace cyber {
namespace reference {
namespace {

using Tick = FloorWheel::Tick;

// (entry index, tick) of every expiry, in the order AdvanceTo reported them.
struct Fired {
  std::vector<std::pair<int, Tick>> fires;
};

// Advances `wheel` to `to`, recording each expiry with the tick it came at.
void AdvanceRecording(FloorWheel& wheel, std::vector<FloorEntry>& entries,
                      Tick to, Fired& fired) {
  wheel.AdvanceTo(to, [&](FloorEntry* e) {
    fired.fires.push_back({static_cast<int>(e - entries.data()), wheel.now()});
  });
}

// Ticks on either side of every level boundary, and a few far ones.
std::vector<Tick> InterestingDelays() {
  std::vector<Tick> delays = {1, 2, 3, 100};
  for (int bits = FloorWheel::kLevelBits; bits < 64;
       bits += FloorWheel::kLevelBits) {
    const Tick b = Tick{1} << bits;
    for (Tick d : {b - 2, b - 1, b, b + 1, b + 2, 3 * b + 7}) delays.push_back(d);
  }
  delays.push_back(30000);             // 60 s at 2 ms
  delays.push_back(Tick{1} << 32);     // ~99 days at 2 ms
  return delays;
}

// Starting points: on and around digit boundaries, so that a delay crosses
// one, two or more of them.
std::vector<Tick> InterestingStarts() {
  return {0,     1,           254,          255,         256,
          257,   65535,       65536,        65537,       (Tick{1} << 24) - 1,
          12345, (Tick{1} << 40) - 3};
}

TEST(FloorWheelTest, ExpiresExactlyAtItsTickAcrossLevelBoundaries) {
  for (Tick start : InterestingStarts()) {
    for (Tick delay : InterestingDelays()) {
      SCOPED_TRACE(testing::Message() << "start " << start << " delay " << delay);
      FloorWheel wheel;
      wheel.AdvanceTo(start, [](FloorEntry*) { FAIL() << "empty wheel fired"; });
      ASSERT_EQ(wheel.now(), start);
      FloorEntry e;
      const Tick due = start + delay;
      wheel.Arm(&e, due);
      ASSERT_EQ(e.expires(), due);
      // Jumping from event to event (as the tickless driver does) never
      // passes the due tick, and nothing fires before it.
      int fired = 0;
      Tick fired_at = 0;
      for (Tick t = wheel.NextEventTick(); t != FloorWheel::kNoTick;
           t = wheel.NextEventTick()) {
        ASSERT_LE(t, due);
        ASSERT_GT(t, wheel.now());
        wheel.AdvanceTo(t, [&](FloorEntry* x) {
          ASSERT_EQ(x, &e);
          ++fired;
          fired_at = wheel.now();
        });
      }
      EXPECT_EQ(fired, 1);
      EXPECT_EQ(fired_at, due);
      EXPECT_FALSE(e.armed());
      EXPECT_EQ(wheel.size(), 0u);
    }
  }
}

TEST(FloorWheelTest, OneBigStepAndTickByTickAgreeOnTheDueTick) {
  for (Tick start : {Tick{0}, Tick{250}, Tick{65530}}) {
    for (Tick delay : {Tick{1}, Tick{6}, Tick{255}, Tick{256}, Tick{300},
                       Tick{65536}, Tick{65540}}) {
      SCOPED_TRACE(testing::Message() << "start " << start << " delay " << delay);
      const Tick due = start + delay;
      {
        // Advancing to just before the due tick fires nothing; to it, fires.
        FloorWheel wheel;
        wheel.AdvanceTo(start, [](FloorEntry*) {});
        FloorEntry e;
        wheel.Arm(&e, due);
        int fired = 0;
        wheel.AdvanceTo(due - 1, [&](FloorEntry*) { ++fired; });
        EXPECT_EQ(fired, 0);
        wheel.AdvanceTo(due, [&](FloorEntry*) { ++fired; });
        EXPECT_EQ(fired, 1);
      }
      {
        // One tick at a time.
        FloorWheel wheel;
        wheel.AdvanceTo(start, [](FloorEntry*) {});
        FloorEntry e;
        wheel.Arm(&e, due);
        Tick fired_at = 0;
        for (Tick t = start + 1; t <= due + 2; ++t) {
          wheel.AdvanceTo(t, [&](FloorEntry*) { fired_at = t; });
        }
        EXPECT_EQ(fired_at, due);
      }
    }
  }
}

TEST(FloorWheelTest, PastTickIsClampedToTheNextTick) {
  FloorWheel wheel;
  wheel.AdvanceTo(1000, [](FloorEntry*) {});
  FloorEntry e;
  wheel.Arm(&e, 5);
  EXPECT_EQ(e.expires(), 1001u);
  wheel.Arm(&e, 1000);
  EXPECT_EQ(e.expires(), 1001u);
  int fired = 0;
  wheel.AdvanceTo(1001, [&](FloorEntry*) { ++fired; });
  EXPECT_EQ(fired, 1);
}

TEST(FloorWheelTest, CancelledEntryNeverFires) {
  FloorWheel wheel;
  FloorEntry a, b, c;
  wheel.Arm(&a, 10);
  wheel.Arm(&b, 10);
  wheel.Arm(&c, 70000);
  EXPECT_TRUE(wheel.Cancel(&a));
  EXPECT_FALSE(wheel.Cancel(&a));
  EXPECT_TRUE(wheel.Cancel(&c));
  EXPECT_EQ(wheel.size(), 1u);
  std::vector<FloorEntry*> fired;
  wheel.AdvanceTo(100000, [&](FloorEntry* e) { fired.push_back(e); });
  EXPECT_EQ(fired, std::vector<FloorEntry*>{&b});
  // The emptied slots' bits were cleared: nothing left to visit.
  EXPECT_EQ(wheel.NextEventTick(), FloorWheel::kNoTick);
}

TEST(FloorWheelTest, ReArmMovesTheEntryEarlierOrLater) {
  FloorWheel wheel;
  FloorEntry e;
  wheel.Arm(&e, 70000);  // level 2
  wheel.Arm(&e, 300);    // level 1
  wheel.Arm(&e, 7);      // level 0
  wheel.Arm(&e, 1000);   // back up to level 1
  EXPECT_EQ(wheel.size(), 1u);
  Tick fired_at = 0;
  int fired = 0;
  while (wheel.NextEventTick() != FloorWheel::kNoTick) {
    wheel.AdvanceTo(wheel.NextEventTick(), [&](FloorEntry*) {
      ++fired;
      fired_at = wheel.now();
    });
  }
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(fired_at, 1000u);
}

TEST(FloorWheelTest, CallbackMayReArmItselfAndCancelOthersOfItsTick) {
  FloorWheel wheel;
  std::vector<FloorEntry> entries(8);
  for (FloorEntry& e : entries) wheel.Arm(&e, 40);
  std::vector<Tick> fires_of_first;
  int fired = 0;
  auto on_expired = [&](FloorEntry* e) {
    ++fired;
    if (e == &entries[0]) {
      fires_of_first.push_back(wheel.now());
      if (fires_of_first.size() < 3) wheel.Arm(e, wheel.now() + 256);
    } else {
      // Cancel every other entry still due at this tick.
      for (FloorEntry& other : entries) {
        if (&other != &entries[0] && &other != e) wheel.Cancel(&other);
      }
    }
  };
  wheel.AdvanceTo(10000, on_expired);
  EXPECT_EQ(fires_of_first, (std::vector<Tick>{40, 296, 552}));
  // entries[0] three times, and exactly one other before it cancelled the
  // rest (whichever came first at tick 40).
  EXPECT_EQ(fired, 4);
  EXPECT_EQ(wheel.size(), 0u);
}

// Many entries, random arms (delays up to ~2^20 ticks and occasionally far
// beyond), re-arms, cancels and advances of random length, against the model.
TEST(FloorWheelTest, ManyEntriesAgreeWithTheModel) {
  constexpr int kEntries = 5000;
  constexpr int kSteps = 200000;
  // tick_ns 1: the model's instants are the ticks themselves, so far ticks
  // do not overflow its nanoseconds.
  WheelModel model(/*tick_ns=*/1);
  FloorWheel wheel;
  std::vector<FloorEntry> entries(kEntries);
  std::mt19937_64 rng(25);
  auto delay = [&rng]() -> Tick {
    const int kind = static_cast<int>(rng() % 100);
    if (kind < 60) return rng() % 300;             // level 0/1, incl. 0 (clamped)
    if (kind < 90) return rng() % 70000;           // across level 1/2
    if (kind < 99) return rng() % (Tick{1} << 20);
    return rng() % (Tick{1} << 34);                // levels 3 and 4
  };
  Fired fired;
  for (int step = 0; step < kSteps; ++step) {
    const int id = static_cast<int>(rng() % kEntries);
    const int op = static_cast<int>(rng() % 100);
    if (op < 50) {
      // Sometimes a tick already passed.
      const Tick d = delay();
      const Tick at = (rng() % 20 == 0 && wheel.now() > d) ? wheel.now() - d
                                                           : wheel.now() + d;
      wheel.Arm(&entries[id], at);
      const Tick used = model.Arm(id, at);
      ASSERT_EQ(entries[id].expires(), used);
    } else if (op < 70) {
      ASSERT_EQ(wheel.Cancel(&entries[id]), model.Cancel(id));
    } else {
      Tick to;
      const int how = static_cast<int>(rng() % 10);
      if (how < 4) {
        to = wheel.now() + 1;
      } else if (how < 7) {
        to = wheel.now() + rng() % 600;
      } else if (how < 9) {
        const Tick next = wheel.NextEventTick();
        to = next == FloorWheel::kNoTick ? wheel.now() + 1 : next;
      } else {
        to = wheel.now() + rng() % 200000;
      }
      fired.fires.clear();
      AdvanceRecording(wheel, entries, to, fired);
      std::vector<WheelModel::Fire> expected = model.AdvanceTo(to);
      ASSERT_EQ(wheel.now(), model.now());
      // Same entries at the same ticks; ticks in order; order within a tick
      // unspecified.
      for (size_t i = 1; i < fired.fires.size(); ++i) {
        ASSERT_LE(fired.fires[i - 1].second, fired.fires[i].second);
      }
      std::vector<std::pair<Tick, int>> got, want;
      for (const auto& f : fired.fires) got.push_back({f.second, f.first});
      for (const auto& f : expected) want.push_back({f.tick, f.id});
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      ASSERT_EQ(got, want) << "at step " << step << ", advancing to " << to;
    }
    ASSERT_EQ(wheel.size(), model.size());
  }
  // Drain both, past the longest delay: everything left fires at its tick.
  const Tick end = wheel.now() + (Tick{1} << 35);
  fired.fires.clear();
  AdvanceRecording(wheel, entries, end, fired);
  std::vector<WheelModel::Fire> expected = model.AdvanceTo(end);
  std::vector<std::pair<Tick, int>> got, want;
  for (const auto& f : fired.fires) got.push_back({f.second, f.first});
  for (const auto& f : expected) want.push_back({f.tick, f.id});
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(wheel.size(), 0u);
  EXPECT_EQ(wheel.NextEventTick(), FloorWheel::kNoTick);
}

}  // namespace
}  // namespace reference
}  // namespace cyber
