#include "timer/timing_wheel.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/reference/wheel_model.h"

namespace cyber {
namespace timer {
namespace {

using reference::WheelModel;
using Fire = WheelModel::Fire;

constexpr absl::Duration kTick = absl::Milliseconds(2);
// One unit (slot) of level 2: 64 work revolutions, 8.7 min at 2 ms.
constexpr Tick kLevel2Unit = UpperLevelGranularity(2);

// N entries with ids 0..N-1, driven in lock step on a wheel and the model.
class WheelHarness {
 public:
  explicit WheelHarness(int n) : wheel_(Instant(), kTick), entries_(n) {}
  ~WheelHarness() {
    for (auto& e : entries_) wheel_.Cancel(&e);
  }

  int Id(WheelEntry* e) const { return static_cast<int>(e - entries_.data()); }

  void Arm(int id, Tick expires) {
    auto result = wheel_.Arm(&entries_[id], expires);
    ASSERT_TRUE(result.ok()) << result.status();
    const Tick model_expires = model_.Arm(id, expires);
    ASSERT_EQ(result->expires, model_expires);
    requested_[id] = expires;
  }
  void Cancel(int id) {
    ASSERT_EQ(wheel_.Cancel(&entries_[id]), model_.Cancel(id)) << id;
  }
  // Advances both; checks identical fires and that none is early.
  std::vector<Fire> AdvanceTo(Tick to) {
    std::vector<Fire> got;
    wheel_.AdvanceTo(to, [&](WheelEntry* e) {
      got.push_back({Id(e), e->expires()});
    });
    std::vector<Fire> want = model_.AdvanceTo(to);
    // The order among entries of one tick is unspecified: compare sorted.
    auto by_tick_then_id = [](const Fire& a, const Fire& b) {
      return a.tick != b.tick ? a.tick < b.tick : a.id < b.id;
    };
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end(),
                               [](const Fire& a, const Fire& b) {
                                 return a.tick < b.tick;
                               }))
        << "expiries must come in tick order";
    std::sort(got.begin(), got.end(), by_tick_then_id);
    std::sort(want.begin(), want.end(), by_tick_then_id);
    EXPECT_EQ(got.size(), want.size()) << "advance to " << to;
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
      EXPECT_EQ(got[i].id, want[i].id) << "fire #" << i << " advancing to " << to;
      EXPECT_EQ(got[i].tick, want[i].tick) << "id " << got[i].id;
      EXPECT_GE(got[i].tick, requested_[got[i].id]) << "fired early: id "
                                                    << got[i].id;
      EXPECT_LE(got[i].tick, to);
    }
    EXPECT_EQ(wheel_.now(), model_.now());
    EXPECT_EQ(wheel_.size(), model_.size());
    return got;
  }

  TimingWheel& wheel() { return wheel_; }
  WheelModel& model() { return model_; }
  WheelEntry& entry(int id) { return entries_[id]; }

 private:
  TimingWheel wheel_;
  std::vector<WheelEntry> entries_;
  WheelModel model_;
  std::unordered_map<int, Tick> requested_;
};

TEST(TimingWheelTest, DeadlineRoundsUpToWholeTicks) {
  TimingWheel wheel(Instant() + absl::Seconds(1), kTick);
  const Instant epoch = wheel.epoch();
  EXPECT_EQ(wheel.DeadlineToTick(epoch), 0u);
  EXPECT_EQ(wheel.DeadlineToTick(epoch - absl::Seconds(1)), 0u);
  EXPECT_EQ(wheel.DeadlineToTick(epoch + absl::Nanoseconds(1)), 1u);
  EXPECT_EQ(wheel.DeadlineToTick(epoch + absl::Milliseconds(2)), 1u);
  EXPECT_EQ(wheel.DeadlineToTick(epoch + absl::Milliseconds(5)), 3u);
  EXPECT_EQ(wheel.InstantToTick(epoch + absl::Milliseconds(5)), 2u);
  EXPECT_EQ(wheel.TickToInstant(3), epoch + absl::Milliseconds(6));
  EXPECT_EQ(wheel.DeadlineToTick(Instant::InfiniteFuture()), kNoTick);
  // Never early, at most one tick late, for arbitrary deadlines.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    const Instant d = epoch + absl::Nanoseconds(rng() % 100000000000ULL);
    const Instant fire = wheel.TickToInstant(wheel.DeadlineToTick(d));
    ASSERT_GE(fire, d);
    ASSERT_LT(fire - d, kTick);
  }
}

TEST(TimingWheelTest, FiresAtTheRoundedUpTickAndNotBefore) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry e;
  ASSERT_TRUE(wheel.Arm(&e, wheel.DeadlineToTick(Instant() + absl::Milliseconds(5))).ok());
  int fired = 0;
  wheel.AdvanceTo(2, [&](WheelEntry*) { ++fired; });
  EXPECT_EQ(fired, 0);
  EXPECT_TRUE(wheel.IsArmed(&e));
  wheel.AdvanceTo(3, [&](WheelEntry* x) {
    EXPECT_EQ(x, &e);
    ++fired;
  });
  EXPECT_EQ(fired, 1);
  EXPECT_FALSE(wheel.IsArmed(&e));
  EXPECT_EQ(wheel.size(), 0u);
}

TEST(TimingWheelTest, PastDeadlineIsClampedToTheNextTick) {
  TimingWheel wheel(Instant(), kTick);
  wheel.AdvanceTo(100, [](WheelEntry*) {});
  WheelEntry e;
  auto r = wheel.Arm(&e, 40);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->expires, 101u);
  int fired = 0;
  wheel.AdvanceTo(101, [&](WheelEntry*) { ++fired; });
  EXPECT_EQ(fired, 1);
}

// Found by the wheel fuzzer: exact entries waiting at tick c-1 expired in
// arming order while that tick was processed, when the advance had already
// passed their deadlines: before the later-armed entries of tick c-1 (out
// of tick order) and regardless of their deadlines (out of time order).
TEST(TimingWheelTest, ExactEntriesPassedByOneAdvanceExpireInTimeOrder) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry late, early, on_tick;
  const Instant t5 = wheel.TickToInstant(5);
  ASSERT_TRUE(wheel.ArmExact(&late, t5 + kTick * 3 / 4).ok());
  ASSERT_TRUE(wheel.ArmExact(&early, t5 + kTick / 4).ok());
  ASSERT_TRUE(wheel.Arm(&on_tick, 5).ok());
  std::vector<WheelEntry*> order;
  wheel.AdvanceToInstant(wheel.TickToInstant(10),
                         [&](WheelEntry* e) { order.push_back(e); });
  EXPECT_EQ(order, (std::vector<WheelEntry*>{&on_tick, &early, &late}));
}

TEST(TimingWheelTest, CancelAndRearm) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry e;
  EXPECT_FALSE(wheel.Cancel(&e));
  ASSERT_TRUE(wheel.Arm(&e, 10).ok());
  EXPECT_TRUE(wheel.Cancel(&e));
  EXPECT_FALSE(wheel.Cancel(&e));
  ASSERT_TRUE(wheel.Arm(&e, 10).ok());
  auto r = wheel.Arm(&e, 20000);  // re-arm moves it (work -> level 1)
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->arm_seq, 3u);
  EXPECT_EQ(wheel.size(), 1u);
  std::vector<Tick> fired;
  wheel.AdvanceTo(19999, [&](WheelEntry* x) { fired.push_back(x->expires()); });
  EXPECT_TRUE(fired.empty());
  wheel.AdvanceTo(20000, [&](WheelEntry* x) { fired.push_back(x->expires()); });
  EXPECT_EQ(fired, std::vector<Tick>{20000});
}

TEST(TimingWheelTest, BoundaryDelays) {
  // Each delay is checked from several starting phases, so that the work
  // wheel's last slot wraps to its first, and the wraps and unit
  // boundaries of every upper level are crossed at different offsets:
  // delays on, just before and just after each level's granularity and
  // window, up to the maximum.
  constexpr Tick S = kWorkWheelSpan;
  std::vector<Tick> delays = {1, 2, S - 1, S, S + 1, 2 * S - 1, 2 * S, 2 * S + 1,
                              43200000 /* 24 h at 2 ms */, kMaxDelayTicks - 1,
                              kMaxDelayTicks};
  for (int level = 1; level <= kUpperLevels; ++level) {
    for (const Tick edge : {UpperLevelGranularity(level) * kUpperWheelSlots,
                            UpperLevelGranularity(level) * kUpperWheelLists}) {
      if (edge > kMaxDelayTicks) continue;
      for (const Tick d : {edge - 1, edge, edge + 1}) {
        if (d <= kMaxDelayTicks) delays.push_back(d);
      }
    }
  }
  const Tick starts[] = {0,
                         1,
                         S - 2,
                         S - 1,
                         S,
                         kLevel2Unit - 1,
                         kLevel2Unit,
                         1000003,
                         UpperLevelGranularity(3) - 1,
                         UpperLevelGranularity(3),
                         UpperLevelGranularity(4) - S - 1,
                         (Tick{1} << 33) + 77};
  for (Tick start : starts) {
    for (Tick delay : delays) {
      WheelHarness h(1);
      h.AdvanceTo(start);
      h.Arm(0, start + delay);
      // One tick before: nothing; at the tick: exactly one fire.
      EXPECT_TRUE(h.AdvanceTo(start + delay - 1).empty())
          << "start " << start << " delay " << delay;
      const auto fired = h.AdvanceTo(start + delay);
      ASSERT_EQ(fired.size(), 1u) << "start " << start << " delay " << delay;
      EXPECT_EQ(fired[0].tick, start + delay);
      // Relinked at most once per upper level on the way down.
      EXPECT_LE(h.wheel().cascade_stats().moved, uint64_t{kUpperLevels})
          << "start " << start << " delay " << delay;
    }
  }
}

TEST(TimingWheelTest, StepwiseAcrossSlotAndAssistantWraps) {
  // Tick-by-tick advancing (as a real driver might) over the first two
  // level-2 units (level 1's window), with entries landing on every boundary.
  WheelHarness h(8);
  constexpr Tick S = kWorkWheelSpan;
  const Tick expiries[] = {S - 1,           S,           S + 1,
                           2 * S,           kLevel2Unit - 1, kLevel2Unit,
                           kLevel2Unit + 1, 2 * kLevel2Unit};
  for (int id = 0; id < 8; ++id) h.Arm(id, expiries[id]);
  size_t total = 0;
  for (Tick t = 1; t <= 2 * kLevel2Unit; ++t) total += h.AdvanceTo(t).size();
  EXPECT_EQ(total, 8u);
}

TEST(TimingWheelTest, RejectsDelayBeyondMaximumAndKeepsTheEntry) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry e;
  ASSERT_TRUE(wheel.Arm(&e, 50).ok());
  auto r = wheel.Arm(&e, kMaxDelayTicks + 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(r.status().message().find("maximum delay"), std::string::npos)
      << r.status();
  EXPECT_TRUE(wheel.IsArmed(&e));  // the old arming is intact
  EXPECT_EQ(e.expires(), 50u);
  EXPECT_FALSE(wheel.Arm(&e, kNoTick).ok());
  wheel.Cancel(&e);
  EXPECT_GE(wheel.max_delay(), absl::Hours(24));
}

TEST(TimingWheelTest, MaximumDelayCountsFromThePresentTickWhenGiven) {
  // Regression (tests/fuzz/timer_ops_fuzzer): an idle wheel's now() lags the
  // clock, and a valid delay measured from it was refused. A caller that
  // knows the present passes it; the geometry itself has no limit.
  TimingWheel wheel(Instant(), kTick);
  WheelEntry e;
  const Tick present = 1000;  // now() is still 0
  EXPECT_EQ(wheel.Arm(&e, present + kMaxDelayTicks).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_FALSE(wheel.IsArmed(&e));
  auto r = wheel.Arm(&e, present + kMaxDelayTicks, present);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->expires, present + kMaxDelayTicks);
  EXPECT_EQ(wheel.Arm(&e, present + kMaxDelayTicks + 1, present).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(e.expires(), present + kMaxDelayTicks);  // kept
  // It waits at the top level (no rounds: see the geometry table), comes
  // down level by level and fires exactly at its tick.
  int fired = 0;
  wheel.AdvanceTo(present + kMaxDelayTicks - 1, [&](WheelEntry*) { ++fired; });
  EXPECT_EQ(fired, 0);
  wheel.AdvanceTo(present + kMaxDelayTicks, [&](WheelEntry* x) {
    EXPECT_EQ(x, &e);
    ++fired;
  });
  EXPECT_EQ(fired, 1);
  // A present behind now() changes nothing.
  EXPECT_EQ(wheel.Arm(&e, wheel.now() + kMaxDelayTicks + 1, 5).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(TimingWheelTest, NextEventTickIsExpiryOrCascade) {
  TimingWheel wheel(Instant(), kTick);
  EXPECT_EQ(wheel.NextEventTick(), kNoTick);
  WheelEntry a, b;
  ASSERT_TRUE(wheel.Arm(&a, 800000).ok());
  // 800000 is beyond level 1's window (level-2 units 0 and 1, ticks below
  // 2 * 2^18 = 524288): level 2, index 800000 >> 18 = 3, whose cascade is
  // due one level-1 unit before its first tick: 3 * 2^18 - 4096 = 782336.
  static_assert(3 * kLevel2Unit - kWorkWheelSpan == 782336);
  EXPECT_EQ(wheel.NextEventTick(), 782336u);
  std::vector<Tick> visits;
  for (Tick t = wheel.NextEventTick(); t <= 800000; t = wheel.NextEventTick()) {
    visits.push_back(t);
    wheel.AdvanceTo(t, [](WheelEntry*) {});
  }
  // Level 2 -> level 1 (index 800000 >> 12 = 195, due at its first tick
  // 195 * 4096 = 798720) -> work wheel -> expiry: one visit per level,
  // never a revisit.
  EXPECT_EQ(visits, (std::vector<Tick>{782336, 798720, 800000}));
  EXPECT_EQ(wheel.cascade_stats().moved, 2u);
  ASSERT_TRUE(wheel.Arm(&a, 1600000).ok());
  ASSERT_TRUE(wheel.Arm(&b, 800007).ok());
  EXPECT_EQ(wheel.NextEventTick(), 800007u);
  wheel.Cancel(&b);
  wheel.Cancel(&a);
  EXPECT_EQ(wheel.NextEventTick(), kNoTick);
}

TEST(TimingWheelTest, CascadesFromEveryLevel) {
  // One entry per upper level, each far enough to start there; each comes
  // down one level per cascade and fires at its tick, in order.
  TimingWheel wheel(Instant(), kTick);
  const Tick expiries[] = {
      3 * kWorkWheelSpan + 5,                 // level 1
      5 * kLevel2Unit + 7,                    // level 2
      5 * UpperLevelGranularity(3) + 11,      // level 3
      3 * UpperLevelGranularity(4) + 13,      // level 4 (top)
      kMaxDelayTicks};                        // top, the maximum delay
  std::vector<WheelEntry> entries(std::size(expiries));
  for (size_t i = 0; i < entries.size(); ++i) {
    ASSERT_TRUE(wheel.Arm(&entries[i], expiries[i]).ok());
  }
  std::vector<Tick> fired;
  std::vector<Tick> events;
  for (Tick t = wheel.NextEventTick(); t != kNoTick; t = wheel.NextEventTick()) {
    events.push_back(t);
    ASSERT_GT(t, wheel.now());
    wheel.AdvanceTo(t, [&](WheelEntry* e) {
      EXPECT_EQ(e->expires(), t) << "fired at its tick";
      fired.push_back(e->expires());
    });
  }
  EXPECT_EQ(fired, (std::vector<Tick>(std::begin(expiries), std::end(expiries))));
  // Entry i starts at level i + 1 and is relinked at most once per level
  // (fewer when a cascade drops it more than one level): at most
  // 1 + 2 + 3 + 4 + 4 relinks in all, one event each, plus the expiries.
  EXPECT_LE(wheel.cascade_stats().moved, 14u);
  EXPECT_GE(wheel.cascade_stats().moved, 5u);
  EXPECT_LE(events.size(), 14u + 5u);
}

TEST(TimingWheelTest, FarTimeoutsAreNotRevisited) {
  // 100,000 timeouts 17.5 to 30.6 min away (all in level 2 when armed),
  // stepped through tick by tick as a busy tick thread does: each is
  // relinked at most once per level it passes (level 2 -> 1 -> work),
  // never once per revolution of a level as whole rounds would be.
  constexpr int kTimeouts = 100000;
  TimingWheel wheel(Instant(), kTick);
  std::vector<WheelEntry> entries(kTimeouts);
  std::mt19937_64 rng(3);
  constexpr Tick kMin = 2 * kLevel2Unit;                    // 17.5 min
  constexpr Tick kMax = 3 * kLevel2Unit + kLevel2Unit / 2;  // 30.6 min
  for (WheelEntry& e : entries) {
    ASSERT_TRUE(wheel.Arm(&e, kMin + rng() % (kMax - kMin)).ok());
  }
  WheelEntry ticker;
  size_t fired = 0;
  for (Tick t = 1; t <= kMax; ++t) {
    ASSERT_TRUE(wheel.Arm(&ticker, t).ok());
    wheel.AdvanceTo(t, [&](WheelEntry* e) {
      if (e == &ticker) return;
      ASSERT_EQ(e->expires(), t);
      ++fired;
    });
  }
  EXPECT_EQ(fired, static_cast<size_t>(kTimeouts));
  const TimingWheel::CascadeStats stats = wheel.cascade_stats();
  EXPECT_GE(stats.moved, uint64_t{kTimeouts});  // each left level 2
  EXPECT_LE(stats.moved, 2u * kTimeouts);
  // Spread: a level-2 slot (~67,000 and ~33,000 of them here) moves over
  // 63 level-1 units, a level-1 slot (~1,000) over one revolution; no tick
  // moves a slot.
  EXPECT_LE(stats.max_per_tick, 64u) << "moved " << stats.moved;
}

TEST(TimingWheelTest, IdleWheelSpreadsABigCascadeInChunks) {
  // Tickless: nothing else is due, so the wheel is only advanced to its
  // next event. 100,000 timeouts in one level-2 slot must still not come
  // down in one tick: the wheel asks for visits that move about
  // kCascadeChunk each, on the straight line through the window.
  constexpr int kTimeouts = 100000;
  TimingWheel wheel(Instant(), kTick);
  std::vector<WheelEntry> entries(kTimeouts);
  std::mt19937_64 rng(5);
  const Tick first = 3 * kLevel2Unit;  // level-2 index 3
  for (WheelEntry& e : entries) {
    ASSERT_TRUE(wheel.Arm(&e, first + rng() % kLevel2Unit).ok());
  }
  const Tick next = wheel.NextEventTick();
  // Its window opens at index 2's first tick; the first visit comes once a
  // chunk is due, not at the deadline 3 * kLevel2Unit - kWorkWheelSpan.
  EXPECT_GE(next, 2 * kLevel2Unit);
  EXPECT_LT(next, first - kWorkWheelSpan);
  size_t fired = 0;
  int visits_before_first = 0;  // cascade-only visits before any expiry
  uint64_t max_moved = 0;
  for (Tick t = wheel.NextEventTick(); t != kNoTick; t = wheel.NextEventTick()) {
    if (t < first) ++visits_before_first;
    const uint64_t before = wheel.cascade_stats().moved;
    wheel.AdvanceTo(t, [&](WheelEntry* e) {
      ASSERT_EQ(e->expires(), t);
      ++fired;
    });
    max_moved = std::max(max_moved, wheel.cascade_stats().moved - before);
  }
  EXPECT_EQ(fired, static_cast<size_t>(kTimeouts));
  // Each visit is about a chunk (plus a tick's share of the line), or a
  // level-1 slot (~1,560) at its deadline.
  EXPECT_LE(max_moved, kCascadeChunk + kTimeouts / (63 * kWorkWheelSpan) + 2);
  EXPECT_LE(wheel.cascade_stats().max_per_tick, max_moved);
  // The level-2 slot comes down in about 100,000 / 4096 = 25 visits (its
  // level-1 slots then go at their deadlines, the first at `first`).
  EXPECT_GE(visits_before_first, 24);
  EXPECT_LE(visits_before_first, 27);
}

TEST(TimingWheelTest, ArmReportsWhenASleepingDriverMustWake) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry a, b, c;
  EXPECT_EQ(wheel.PlanWake(), Instant::InfiniteFuture());
  auto ra = wheel.Arm(&a, 50);
  ASSERT_TRUE(ra.ok());
  EXPECT_TRUE(ra->wake_needed);  // the driver planned to sleep forever
  auto rb = wheel.Arm(&b, 60);
  ASSERT_TRUE(rb.ok());
  EXPECT_FALSE(rb->wake_needed);  // 60 is after the new plan (50)
  EXPECT_EQ(wheel.PlanWake(), wheel.TickToInstant(50));
  auto rc = wheel.Arm(&c, 20);
  ASSERT_TRUE(rc.ok());
  EXPECT_TRUE(rc->wake_needed);
  for (WheelEntry* e : {&a, &b, &c}) wheel.Cancel(e);
}

TEST(TimingWheelTest, AnArmAfterACancelMovedThePlanWakesOnlyBeforeTheDriversSleep) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry a, b, c, d;
  ASSERT_TRUE(wheel.Arm(&a, 50).ok());
  EXPECT_EQ(wheel.PlanWake(), wheel.TickToInstant(50));  // the driver sleeps until 50
  bool later = false;
  EXPECT_TRUE(wheel.Cancel(&a, &later));
  EXPECT_TRUE(later);
  EXPECT_EQ(wheel.planned_wake(), Instant::InfiniteFuture());
  // After the driver's sleep: it wakes at 50 first, and plans again.
  auto rb = wheel.Arm(&b, 60);
  ASSERT_TRUE(rb.ok());
  EXPECT_FALSE(rb->wake_needed);
  EXPECT_TRUE(rb->plan_earlier);
  EXPECT_FALSE(rb->plan_later);
  EXPECT_EQ(wheel.planned_wake(), wheel.TickToInstant(60));
  // At the sleep's end: no wake either.
  auto ra = wheel.Arm(&a, 50);
  ASSERT_TRUE(ra.ok());
  EXPECT_FALSE(ra->wake_needed);
  EXPECT_TRUE(ra->plan_earlier);
  EXPECT_EQ(wheel.planned_wake(), wheel.TickToInstant(50));
  // Before it: woken, and the driver's sleep is now 40.
  auto rc = wheel.Arm(&c, 40);
  ASSERT_TRUE(rc.ok());
  EXPECT_TRUE(rc->wake_needed);
  EXPECT_FALSE(rc->plan_earlier);
  EXPECT_TRUE(wheel.Cancel(&c, &later));
  EXPECT_TRUE(later);
  auto rd = wheel.Arm(&d, 45);  // after 40: no wake
  ASSERT_TRUE(rd.ok());
  EXPECT_FALSE(rd->wake_needed);
  EXPECT_TRUE(rd->plan_earlier);
  // Neither: after the plan.
  auto rc2 = wheel.Arm(&c, 70);
  ASSERT_TRUE(rc2.ok());
  EXPECT_FALSE(rc2->wake_needed || rc2->plan_earlier || rc2->plan_later);
  for (WheelEntry* e : {&a, &b, &c, &d}) wheel.Cancel(e);
}

TEST(TimingWheelTest, CancelOrRearmOfThePlannedEventMovesThePlanLater) {
  TimingWheel wheel(Instant(), kTick);
  WheelEntry a, b, c, d;
  ASSERT_TRUE(wheel.Arm(&a, 20).ok());
  ASSERT_TRUE(wheel.Arm(&b, 20).ok());
  ASSERT_TRUE(wheel.Arm(&c, 50).ok());
  EXPECT_EQ(wheel.PlanWake(), wheel.TickToInstant(20));
  bool later = true;
  EXPECT_TRUE(wheel.Cancel(&a, &later));
  EXPECT_FALSE(later);  // b still fires at the plan
  EXPECT_EQ(wheel.planned_wake(), wheel.TickToInstant(20));
  EXPECT_TRUE(wheel.Cancel(&c, &later));
  EXPECT_FALSE(later);  // not the plan
  ASSERT_TRUE(wheel.Arm(&c, 50).ok());
  auto rb = wheel.Arm(&b, 70);  // the plan's last entry moves away
  ASSERT_TRUE(rb.ok());
  EXPECT_FALSE(rb->wake_needed);
  EXPECT_TRUE(rb->plan_later);
  EXPECT_EQ(wheel.planned_wake(), wheel.TickToInstant(50));
  auto rd = wheel.Arm(&d, 60);  // after the moved plan: no wake
  ASSERT_TRUE(rd.ok());
  EXPECT_FALSE(rd->wake_needed);
  EXPECT_FALSE(rd->plan_later);
  EXPECT_TRUE(wheel.Cancel(&c, &later));
  EXPECT_TRUE(later);
  EXPECT_EQ(wheel.planned_wake(), wheel.TickToInstant(60));
  EXPECT_TRUE(wheel.Cancel(&d, &later));
  EXPECT_TRUE(later);
  EXPECT_TRUE(wheel.Cancel(&b, &later));
  EXPECT_TRUE(later);
  EXPECT_EQ(wheel.planned_wake(), Instant::InfiniteFuture());  // empty: nothing planned
  EXPECT_FALSE(wheel.Cancel(&b, &later));
  EXPECT_FALSE(later);
}

TEST(TimingWheelTest, HugeJumpOnAnEmptyWheelIsInstant) {
  TimingWheel wheel(Instant(), kTick);
  wheel.AdvanceTo(Tick{1} << 40, [](WheelEntry*) { FAIL(); });
  EXPECT_EQ(wheel.now(), Tick{1} << 40);
}

TEST(TimingWheelTest, CascadeIsSpreadOverTheRevolutionBefore) {
  // 200,000 timeouts for revolution 2 (ticks [2S, 3S), S = kWorkWheelSpan)
  // in level-1 slot 2, and 50,000 a level-2 unit later (revolution 66,
  // level-1 slot 66 mod 128: a list of their own, which a cascade of slot
  // 2 must not visit). A ticker entry makes every tick a processed one, as
  // a busy tick thread's are. Through revolution 1 each tick moves about
  // 1/S of slot 2; none moves it all at once, and the later entries are
  // not touched.
  constexpr int kSoon = 200000;
  constexpr int kLater = 50000;
  constexpr Tick kRevolution2 = 2 * kWorkWheelSpan;
  constexpr Tick kLaterRevolution = kRevolution2 + kLevel2Unit;
  TimingWheel wheel(Instant(), kTick);
  std::vector<WheelEntry> entries(kSoon + kLater);
  std::vector<int> due(3 * kWorkWheelSpan, 0);
  std::mt19937_64 rng(7);
  for (int i = 0; i < kSoon; ++i) {
    const Tick expires = kRevolution2 + rng() % kWorkWheelSpan;
    ASSERT_TRUE(wheel.Arm(&entries[i], expires).ok());
    ++due[expires];
  }
  for (int i = kSoon; i < kSoon + kLater; ++i) {
    ASSERT_TRUE(wheel.Arm(&entries[i], kLaterRevolution + rng() % kWorkWheelSpan).ok());
  }
  WheelEntry ticker;
  const WheelEntry* const first = entries.data();
  const WheelEntry* const end = first + entries.size();
  // The straight line drops by kSoon / kWorkWheelSpan a tick.
  const uint64_t share = (kSoon + kWorkWheelSpan - 1) / kWorkWheelSpan;
  while (wheel.now() < 3 * kWorkWheelSpan - 1) {
    const Tick to = wheel.now() + 1;
    ASSERT_TRUE(wheel.Arm(&ticker, to).ok());
    // The pending cascade never hides an earlier expiry.
    ASSERT_EQ(wheel.NextEventTick(), to);
    int fired = 0;
    bool ticked = false;
    wheel.AdvanceTo(to, [&](WheelEntry* e) {
      if (e == &ticker) {
        ticked = true;
        return;
      }
      ASSERT_TRUE(e >= first && e < first + kSoon) << "not a revolution-2 entry";
      EXPECT_EQ(e->expires(), to);
      ++fired;
    });
    ASSERT_TRUE(ticked);
    ASSERT_EQ(fired, due[to]) << "tick " << to;
    const TimingWheel::CascadeStats stats = wheel.cascade_stats();
    ASSERT_LE(stats.max_per_tick, share) << "tick " << to;
    if (to == kRevolution2 - 1) {
      // All moved before the boundary: the boundary has nothing left.
      EXPECT_EQ(stats.moved, uint64_t{kSoon});
    }
  }
  EXPECT_EQ(wheel.cascade_stats().moved, uint64_t{kSoon})
      << "each entry is visited once, the later ones not at all";
  EXPECT_EQ(wheel.size(), static_cast<size_t>(kLater));
  // The later entries wait for their own window (revolution 65); with
  // more than a chunk of them, the first visit comes before its end.
  const Tick next = wheel.NextEventTick();
  EXPECT_GE(next, kLaterRevolution - kWorkWheelSpan);
  EXPECT_LT(next, kLaterRevolution);
  for (const WheelEntry* e = first + kSoon; e < end; ++e) {
    EXPECT_TRUE(wheel.IsArmed(e));
  }
  for (WheelEntry& e : entries) wheel.Cancel(&e);
  EXPECT_EQ(wheel.size(), 0u);
  EXPECT_EQ(wheel.NextEventTick(), kNoTick);
}

TEST(TimingWheelTest, CascadeWithoutProcessedTicksHappensAtTheBoundary) {
  // Tickless: an idle revolution does no cascade work, and the boundary
  // still moves everything in time.
  TimingWheel wheel(Instant(), kTick);
  constexpr Tick kRevolution2 = 2 * kWorkWheelSpan;
  std::vector<WheelEntry> entries(1000);
  for (size_t i = 0; i < entries.size(); ++i) {
    ASSERT_TRUE(wheel.Arm(&entries[i], kRevolution2 + i % 500).ok());
  }
  EXPECT_EQ(wheel.NextEventTick(), kRevolution2);
  int fired = 0;
  wheel.AdvanceTo(kRevolution2 - 1, [&](WheelEntry*) { ++fired; });
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(wheel.cascade_stats().moved, 0u);
  wheel.AdvanceTo(kRevolution2, [&](WheelEntry* e) {
    EXPECT_EQ(e->expires(), kRevolution2);
    ++fired;
  });
  EXPECT_EQ(fired, 2);
  EXPECT_EQ(wheel.cascade_stats().max_per_tick, 1000u);
  EXPECT_EQ(wheel.NextEventTick(), kRevolution2 + 1);
  wheel.AdvanceTo(kRevolution2 + 500, [&](WheelEntry*) { ++fired; });
  EXPECT_EQ(fired, 1000);
}

TEST(TimingWheelTest, OneTickOfManyExpiriesReleasesTheLockInBatches) {
  // 100,000 entries on one tick: the advance that expires them lets others
  // take the lock every kMaxHoldWork entries.
  constexpr int kEntries = 100000;
  TimingWheel wheel(Instant(), kTick);
  std::vector<WheelEntry> entries(kEntries);
  for (WheelEntry& e : entries) ASSERT_TRUE(wheel.Arm(&e, 700).ok());
  int releases_seen = 0;
  wheel.SetLockReleaseHookForTesting([&] { ++releases_seen; });
  int fired = 0;
  wheel.AdvanceTo(700, [&](WheelEntry*) { ++fired; });
  EXPECT_EQ(fired, kEntries);
  const TimingWheel::CascadeStats stats = wheel.cascade_stats();
  EXPECT_LE(stats.max_per_hold, kMaxHoldWork);
  EXPECT_EQ(stats.lock_releases, uint64_t{kEntries} / kMaxHoldWork);
  EXPECT_EQ(releases_seen, static_cast<int>(stats.lock_releases));
}

TEST(TimingWheelTest, HoldsAreTimedOnlyWhenAsked) {
  TimingWheel wheel(Instant(), kTick);
  std::vector<WheelEntry> entries(3000);
  for (WheelEntry& e : entries) ASSERT_TRUE(wheel.Arm(&e, 700).ok());
  wheel.AdvanceTo(700, [](WheelEntry*) {});
  EXPECT_EQ(wheel.cascade_stats().max_hold_ns, 0);  // off by default
  EXPECT_GT(wheel.cascade_stats().lock_releases, 0u);
}

TEST(TimingWheelTest, TheLongestHoldIsTimedPerHoldNotPerAdvance) {
  // Three holds of the lock, with the advancing thread asleep between them
  // (the hook runs with the lock released): the holds and the sleeps are
  // disjoint parts of the advance, so the longest hold is at most the
  // advance minus the sleeps, however slow the machine. Timed per advance,
  // it would include the sleeps.
  const int kEntries = 2 * static_cast<int>(kMaxHoldWork) + 1;
  TimingWheel wheel(Instant(), kTick);
  wheel.TimeHolds(true);
  std::vector<WheelEntry> entries(kEntries);
  for (WheelEntry& e : entries) ASSERT_TRUE(wheel.Arm(&e, 700).ok());
  constexpr auto kSleep = std::chrono::milliseconds(100);
  int releases = 0;
  wheel.SetLockReleaseHookForTesting([&] {
    ++releases;
    std::this_thread::sleep_for(kSleep);
  });
  const auto begin = std::chrono::steady_clock::now();
  wheel.AdvanceTo(700, [](WheelEntry*) {});
  const auto advance = std::chrono::steady_clock::now() - begin;
  ASSERT_EQ(releases, 2);
  const int64_t max_hold_ns = wheel.cascade_stats().max_hold_ns;
  EXPECT_GT(max_hold_ns, 0);
  EXPECT_LE(max_hold_ns,
            std::chrono::duration_cast<std::chrono::nanoseconds>(
                advance - releases * kSleep)
                .count());
}

TEST(TimingWheelTest, OneTickOfABigCascadeReleasesTheLockInBatches) {
  // 100,000 entries for revolution 2 reached by one jump of an idle wheel:
  // every visit's relinks, and the boundary's expiries, go in batches.
  constexpr int kEntries = 100000;
  TimingWheel wheel(Instant(), kTick);
  std::vector<WheelEntry> entries(kEntries);
  for (int i = 0; i < kEntries; ++i) {
    ASSERT_TRUE(wheel.Arm(&entries[i], 2 * kWorkWheelSpan + i % kWorkWheelSpan).ok());
  }
  int fired = 0;
  wheel.AdvanceTo(3 * kWorkWheelSpan, [&](WheelEntry*) { ++fired; });
  EXPECT_EQ(fired, kEntries);
  const TimingWheel::CascadeStats stats = wheel.cascade_stats();
  EXPECT_EQ(stats.moved, uint64_t{kEntries});
  EXPECT_LE(stats.max_per_hold, kMaxHoldWork);
  EXPECT_GE(stats.lock_releases, uint64_t{2 * kEntries} / kMaxHoldWork - 1);
}

// While an advance lets others in, entries of the tick being expired and
// of the cascade in progress are still armed, in lists the advance re-reads:
// cancelling or re-arming them there, and re-arming entries that have just
// expired, must be ordinary operations. The hook runs at each release, on
// the advancing thread, with the wheel's lock released.
TEST(TimingWheelTest, CancelAndRearmWhileAnAdvanceLetsOthersIn) {
  constexpr int kEntries = 20000;
  constexpr Tick S = kWorkWheelSpan;
  TimingWheel wheel(Instant(), kTick);
  std::vector<WheelEntry> entries(kEntries);
  // Half due at tick 300 (one big expiry), half for revolution 2 (a big
  // cascade, processed tick by tick below).
  for (int i = 0; i < kEntries; ++i) {
    ASSERT_TRUE(wheel.Arm(&entries[i], i % 2 == 0 ? 300 : 2 * S + i % S).ok());
  }
  std::vector<int> fires(kEntries, 0);
  std::vector<Tick> want(kEntries);
  for (int i = 0; i < kEntries; ++i) want[i] = entries[i].expires();
  std::mt19937_64 rng(9);
  int hook_calls = 0;
  int cancelled_armed = 0;
  wheel.SetLockReleaseHookForTesting([&] {
    ++hook_calls;
    const Tick now = wheel.now();  // the tick being processed
    for (int k = 0; k < 50; ++k) {
      const int i = static_cast<int>(rng() % kEntries);
      switch (rng() % 3) {
        case 0:  // cancel: armed (not yet expired or moved) or idle
          if (wheel.Cancel(&entries[i])) ++cancelled_armed;
          want[i] = kNoTick;
          break;
        case 1: {  // re-arm to the tick being processed: clamped to the next
          auto r = wheel.Arm(&entries[i], now);
          ASSERT_TRUE(r.ok());
          ASSERT_EQ(r->expires, now + 1);
          want[i] = now + 1;
          break;
        }
        default: {  // re-arm into a later revolution (the cascade's
                    // included, while it has not started)
          auto r = wheel.Arm(&entries[i], now + 2 * S + 76 + rng() % (4 * S));
          ASSERT_TRUE(r.ok());
          want[i] = r->expires;
        }
      }
    }
  });
  // As a tickless driver: from event to event (the cascade of 10,000
  // comes in visits of about kCascadeChunk, each releasing the lock in
  // its middle), then tick by tick.
  int releases_in_cascade = 0;
  for (Tick t = wheel.NextEventTick(); t <= 8 * S;
       t = std::min(wheel.NextEventTick(), wheel.now() + (t > 2 * S + 76 ? 1 : 10 * S))) {
    const int calls_before = hook_calls;
    wheel.AdvanceTo(t, [&](WheelEntry* e) {
      const int i = static_cast<int>(e - entries.data());
      EXPECT_EQ(e->expires(), t);
      EXPECT_EQ(want[i], t) << "entry " << i;
      ++fires[i];
      want[i] = kNoTick;  // fired: a later fire needs a new arm
    });
    if (t >= S && t < 2 * S) releases_in_cascade += hook_calls - calls_before;
  }
  EXPECT_GT(hook_calls, 0);
  EXPECT_GT(releases_in_cascade, 0);
  // Drain what the last releases re-armed, with nothing done in between.
  wheel.SetLockReleaseHookForTesting(nullptr);
  for (Tick t = wheel.NextEventTick(); t != kNoTick; t = wheel.NextEventTick()) {
    wheel.AdvanceTo(t, [&](WheelEntry* e) {
      const int i = static_cast<int>(e - entries.data());
      EXPECT_EQ(want[i], t) << "entry " << i;
      want[i] = kNoTick;
    });
  }
  EXPECT_GT(cancelled_armed, 0);
  for (int i = 0; i < kEntries; ++i) {
    EXPECT_EQ(want[i], kNoTick) << "entry " << i << " never fired";
    EXPECT_FALSE(wheel.IsArmed(&entries[i]));
  }
  EXPECT_EQ(wheel.size(), 0u);
  EXPECT_LE(wheel.cascade_stats().max_per_hold, kMaxHoldWork);
}

// Tick-by-tick stepping across many cascades, as a busy tick thread does,
// with arms, cancels and re-arms at every tick, aimed at the edges of the
// spread cascade: delays of a work revolution and a tick either side,
// expiries just before, at and after the next boundaries, entries
// cancelled or re-armed while pending, and entries more than a level-2
// unit away. Checked against the model after
// every step.
TEST(TimingWheelPropertyTest, StepwiseAcrossSpreadCascadesMatchesModel) {
  constexpr int kEntries = 3000;
  const uint64_t seed = 20261122;
  std::mt19937_64 rng(seed);
  WheelHarness h(kEntries);
  auto random_delay = [&]() -> Tick {
    const Tick now = h.wheel().now();
    const Tick to_boundary = kWorkWheelSpan - now % kWorkWheelSpan;
    switch (rng() % 12) {
      case 0: {
        constexpr Tick S = kWorkWheelSpan;
        const Tick edges[] = {1, 2, S - 1, S, S + 1, 2 * S - 1, 2 * S, 2 * S + 1};
        return edges[rng() % 8];
      }
      case 1: case 2: {  // around the next two boundaries
        const Tick base = to_boundary + (rng() % 3) * kWorkWheelSpan;
        return base - 1 + rng() % 3 + (rng() % 2) * (kWorkWheelSpan - 1);
      }
      case 3: return 1 + rng() % kWorkWheelSpan;
      case 4: case 5: return 1 + rng() % (3 * kWorkWheelSpan);
      case 6: return 1 + rng() % kLevel2Unit;
      case 7: {  // whole rounds later, near the next boundaries
        const Tick rounds = 1 + rng() % 2;
        return rounds * kLevel2Unit + to_boundary - 1 + rng() % (2 * kWorkWheelSpan + 6);
      }
      case 8: return kLevel2Unit - 1 + rng() % 3;
      case 9: return 1 + rng() % (3 * kLevel2Unit);
      default: return 1 + rng() % 4;
    }
  };
  // Fill the next revolutions' level-1 slots, so that cascades are big.
  for (int id = 1; id < kEntries; ++id) h.Arm(id, 1 + rng() % (4 * kWorkWheelSpan));
  size_t fires = 0;
  // Tick by tick through the first level-2 unit and three revolutions
  // (about 67 level-1 cascades and the start of level-2 slot 2's spread
  // cascade), then a quiet stretch crossed in jumps with the ticker
  // paused (as a tickless driver's idle wheel), then tick by tick again
  // across that cascade's deadline, 2 * kLevel2Unit - kWorkWheelSpan.
  constexpr Tick S = kWorkWheelSpan;
  const Tick kQuietFrom = kLevel2Unit + 3 * S;
  const Tick kQuietTo = 2 * kLevel2Unit - 3 * S;
  const Tick kEnd = 2 * kLevel2Unit + 2 * S;
  while (h.wheel().now() < kEnd) {
    const Tick now = h.wheel().now();
    const bool quiet = now >= kQuietFrom && now < kQuietTo;
    // Entry 0 ticks every tick, so that every tick is a processed one, but
    // now and then it pauses, so that some revolutions are skipped over.
    if (!quiet && (rng() % 4096 != 0 || now > kEnd - 4096)) h.Arm(0, now + 1);
    const int ops = static_cast<int>(rng() % 6);
    for (int i = 0; i < ops; ++i) {
      const int id = 1 + static_cast<int>(rng() % (kEntries - 1));
      if (rng() % 3 == 0) {
        h.Cancel(id);
      } else {
        h.Arm(id, h.wheel().now() + random_delay());
      }
    }
    const Tick to = quiet ? std::min(kQuietTo, now + 1 + rng() % (4 * S))
                          : now + (rng() % 2048 == 0 ? 1 + rng() % (S + 200) : 1);
    const auto fired = h.AdvanceTo(to);
    if (::testing::Test::HasFailure()) {
      FAIL() << "diverged at tick " << to << " (seed " << seed << ")";
    }
    fires += fired.size();
    const Tick next = h.wheel().NextEventTick();
    const Tick expiry = h.model().NextExpiry();
    if (expiry == ~Tick{0}) {
      ASSERT_EQ(next, kNoTick);
    } else {
      ASSERT_TRUE(next > to && next <= expiry &&
                  (next == expiry || next % kWorkWheelSpan == 0))
          << "next event " << next << " at " << to << ", next expiry " << expiry;
    }
    const int probe = static_cast<int>(rng() % kEntries);
    ASSERT_EQ(h.wheel().IsArmed(&h.entry(probe)), h.model().IsArmed(probe));
  }
  for (int i = 0; i < 4 * kEntries && h.model().size() > 0; ++i) {
    h.AdvanceTo(h.model().NextExpiry());
  }
  EXPECT_EQ(h.model().size(), 0u);
  // The run did what it is for: many expiries, and thousands of entries
  // relinked by cascades (8,833 with this seed).
  EXPECT_GT(fires, 40000u);
  EXPECT_GT(h.wheel().cascade_stats().moved, 7000u);
}

// The randomized property test: >= 100,000 operations of arm / cancel /
// re-arm / advance, delays from 1 tick to the maximum, oneshot and periodic
// entries, checked against the ordered-map model after every advance.
TEST(TimingWheelPropertyTest, MatchesReferenceModel) {
  constexpr int kEntries = 512;
  constexpr int kOperations = 150000;
  const uint64_t seed = 20261121;
  std::mt19937_64 rng(seed);
  WheelHarness h(kEntries);
  std::vector<Tick> period(kEntries, 0);  // 0: oneshot

  auto random_delay = [&]() -> Tick {
    switch (rng() % 8) {
      case 0: return 1 + rng() % 4;                        // next ticks
      case 1: case 2: return 1 + rng() % kWorkWheelSpan;   // work wheel
      case 3: case 4: return 1 + rng() % kLevel2Unit;
      case 5: return 1 + rng() % (4 * kLevel2Unit);  // a few rounds
      case 6: return 1 + rng() % 43200000;                 // up to 24 h
      default: return 1 + rng() % kMaxDelayTicks;          // up to the max
    }
  };

  size_t fires = 0;
  for (int op = 0; op < kOperations; ++op) {
    const int id = static_cast<int>(rng() % kEntries);
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 4) {  // arm or re-arm, oneshot or periodic
      const Tick delay = random_delay();
      period[id] = (rng() % 3 == 0) ? std::min<Tick>(delay, 40000) : 0;
      h.Arm(id, h.wheel().now() + delay);
    } else if (kind < 6) {
      h.Cancel(id);
      period[id] = 0;
    } else {  // advance: mostly small steps, sometimes to the next expiry
      Tick to = h.wheel().now();
      switch (rng() % 4) {
        case 0: to += 1; break;
        case 1: to += 1 + rng() % 600; break;
        case 2: to += 1 + rng() % 70000; break;
        default: {
          const Tick next = h.model().NextExpiry();
          to = next == ~Tick{0} ? to + 1 : next;
        }
      }
      const auto fired = h.AdvanceTo(to);
      if (::testing::Test::HasFailure()) {
        FAIL() << "diverged at operation " << op << " (seed " << seed << ")";
      }
      fires += fired.size();
      // Periodic entries re-add themselves against their absolute schedule.
      for (const Fire& f : fired) {
        if (period[f.id] != 0) h.Arm(f.id, f.tick + period[f.id]);
      }
    }
  }
  // Drain: every armed entry must still fire exactly when the model says.
  for (int i = 0; i < 4 * kEntries && h.model().size() > 0; ++i) {
    std::fill(period.begin(), period.end(), 0);
    h.AdvanceTo(h.model().NextExpiry());
  }
  EXPECT_EQ(h.model().size(), 0u);
  EXPECT_GT(fires, 10000u) << "the workload should expire plenty of entries";
}

}  // namespace
}  // namespace timer
}  // namespace cyber
