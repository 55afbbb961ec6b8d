// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// TimingWheel: a hierarchical hashed timing wheel (a work wheel and four
// upper levels) with absolute tick numbers, for O(1) arm / cancel / re-arm
// of many timers.
//
// Why this design. Robot modules arm thousands of timeouts and cancel almost
// all of them; sensor pollers re-arm every period. A heap costs O(log n) per
// operation and allocates; a wheel costs O(1) and, with the node embedded in
// the timer (intrusive WheelEntry), never allocates. The trade-off is
// resolution: deadlines are rounded *up* to whole ticks, so a timer fires at
// most one tick late and never early.
//
// Geometry (all constants derive from kWorkWheelBits, kUpperWheelBits and
// kUpperLevels; static_asserts below keep this table honest):
//
//   level  lists   granularity  holds link ticks in            at a 2 ms tick
//   work   2x4096  1 tick       revolutions R, R+1 (*)         2 x 8.19 s
//   1      2x64    2^12  ticks  level-2 units G2, G2+1         2 x 8.7 min
//   2      2x64    2^18  ticks  level-3 units G3, G3+1         2 x 9.3 h
//   3      2x64    2^24  ticks  level-4 units G4, G4+1         2 x 24.9 days
//   4 top  2x64    2^30  ticks  everything later               128 x 24.9 days
//                                                              (8.7 years)
//   max delay 2^32 ticks (~99.4 days); R = now / 2^12, Gk = now / 2^(6+6k)
//   (*) an entry goes to the lowest level whose window holds it.
//
// Why 4096 work slots: every period up to 8.19 s (every sensor poller and
// heartbeat a robot runs) re-arms into the work wheel and is never
// relinked by a cascade (a 512-slot work wheel, 1.02 s, would relink a
// 2 s period once per call); a timeout of 10-60 s cascades once. The cost
// is memory, 8192 list heads of 16 bytes (128 KiB per wheel, one wheel per
// timer system, more cache misses for arms at random delays), and a
// 128-word bitmap, searched through a one-bit-per-word summary.
//
// Time is an absolute 64-bit tick count since the wheel's epoch; an entry
// stores its absolute expiry tick, never a relative count. Each level holds
// the entries of the current unit of the level above it and of the next
// one, in 2 x 64 (work: 2 x 4096) lists indexed by the entry's index at that
// level (tick >> level shift) mod 128, so a list holds one index only: a
// far entry is relinked at most once per level in its life (<= 4 times),
// never revisited while it waits. Only the top level could hold two indices
// in one list ("rounds"), and only if a caller's `present` runs far ahead of
// now() (Arm): its lists then hold rounds, the farther entries going back
// to their list when the nearer one cascades.
//
// Spread cascade. Moving a slot (index i of level L, covering ticks
// [i, i+1) * 2^shift) down to the levels below (a "cascade") must be
// complete by its deadline D: the slot's first tick for level 1, and for
// L >= 2 the start of the cascade of its first level-(L-1) slot, one
// level-(L-1) unit earlier. It may start at S, the start of the unit before
// (from then on the entries' windows are below: an Arm() for them goes
// straight to a lower level). Done all at once, a slot of 10^6 timeouts
// stalls the tick thread for tens of milliseconds. So the first processed
// tick in [S, D] detaches the slot as its level's "pending" list, and every
// processed tick T moves what keeps the list on a straight line from all
// at S to none at D: left - floor(total * (D - 1 - T) / (D - S)), the rest
// at D. A wheel whose ticks are not processed anyway (idle, tickless) does
// not wait for D when a slot holds more than kCascadeChunk entries: its next
// event is the tick at which the line is kCascadeChunk behind, so each
// wake-up moves about that many (a few wake-ups per second at 10^7 far
// timeouts), and a slot of up to kCascadeChunk moves at D in one go. Every
// event of an upper level is a multiple of 4096 when its slots hold at most
// kCascadeChunk entries. None of this is observable: every entry expires at
// its tick.
//
// Bounded lock hold. AdvanceTo/AdvanceToInstant count the entries they
// relink, expire or hold, and after kMaxHoldWork of them release the lock,
// let waiting threads in (a yield) and take it again, so one tick that
// expires or cascades 10^5 entries delays an Arm() by one batch, not by the
// whole tick. The rule that makes this safe: while the lock is released,
// every entry is in exactly one list and is either idle (expired: its
// `on_expired` was called) or still armed in a list that the advance
// re-reads from its head after re-taking the lock (the work list of the
// tick being processed, a pending cascade list), so a Cancel() or re-arm of
// any entry meanwhile is an ordinary unlink; an Arm() meanwhile sees now()
// == the tick being processed (an expiry there is clamped to the next) and
// may go to a list the same advance then processes. One advance runs at a
// time (a second one waits for the first). cascade_stats() reports the
// most work done in one hold.
//
// Exact deadlines (ArmExact). A deadline between two ticks c-1 and c is
// not rounded up to c: the entry waits in the wheel at tick c-1 (linked
// there like any entry, so cascades and bitmaps are unchanged) and, when
// tick c-1 is processed, moves to the "held" list, ordered by deadline,
// from which AdvanceToInstant() expires it once the time given reaches its
// deadline. The held list only ever holds deadlines less than a tick ahead
// of the last processed tick (or already due), so it stays short, and its
// head is part of the next event: a driver sleeping until NextEvent()
// wakes at the deadline itself. A tick whose list holds only exact entries
// (at most 16) does not need a wake-up of its own: its event is their
// earliest deadline, and processing the tick then releases them all, so a
// periodic timer between ticks (5 ms) costs one wake-up per call, not
// two. An exact deadline already passed (a delay <= 0) goes straight to the
// held list and expires at the next advance. A deadline on a tick is an
// ordinary entry of that tick. (Held entries are inserted in deadline order
// by walking from the list's back: O(1) for deadlines that come in order,
// O(n) each for n exact entries released by one tick in reverse order.)
//
// The wheel has no thread and no clock. It moves only when AdvanceTo(tick) is
// called, and it jumps straight over empty stretches: one bitmap per level
// finds the next non-empty slot in O(1), so NextEventTick() tells a driver how
// long it may sleep (see tick_driver.h) and advancing a simulated day costs
// nothing when nothing is due.
//
// Threads: Arm, Cancel, AdvanceTo and the queries may be called from any
// thread; one internal mutex serializes them (see "Bounded lock hold" for
// when an advance lets others in). AdvanceTo calls `on_expired` with that
// mutex held: the function must be short, must not block and must not call
// back into the wheel (the tick driver only takes a reference there and
// hands the timer off after AdvanceTo returns); the owner may re-arm or
// cancel the entry as soon as the lock is released, even before AdvanceTo
// returns. User callbacks never run under the wheel's lock.
//
// Tiny example (no threads):
//
//   TimingWheel wheel(Instant(), absl::Milliseconds(2));
//   WheelEntry e;
//   wheel.Arm(&e, wheel.DeadlineToTick(Instant() + absl::Milliseconds(5)));
//   // expires at tick 3 (6 ms): 5 ms rounded up to whole 2 ms ticks
//   wheel.AdvanceTo(2, [](WheelEntry*) { /* not called */ });
//   wheel.AdvanceTo(3, [](WheelEntry* x) { /* x == &e */ });

#ifndef TIMER_TIMING_WHEEL_H_
#define TIMER_TIMING_WHEEL_H_

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/common/adaptive_mutex.h"
#include "cyber/common/mutex.h"
#include "cyber/time/instant.h"

namespace cyber {
namespace timer {

using Tick = uint64_t;

// "No tick": returned by NextEventTick() for an empty wheel.
inline constexpr Tick kNoTick = ~Tick{0};

// The process-wide timer resolution.
inline constexpr absl::Duration kTimerResolution = absl::Milliseconds(2);

inline constexpr int kWorkWheelBits = 12;
inline constexpr int kUpperWheelBits = 6;
// Levels above the work wheel (level 1 is the former assistant wheel).
inline constexpr int kUpperLevels = 4;
inline constexpr Tick kWorkWheelSlots = Tick{1} << kWorkWheelBits;
// Ticks covered by one revolution of the work wheel = one level-1 slot.
inline constexpr Tick kWorkWheelSpan = kWorkWheelSlots;
// Slots per unit of the level above; each upper level has twice as many
// lists (this unit of the level above and the next).
inline constexpr Tick kUpperWheelSlots = Tick{1} << kUpperWheelBits;
inline constexpr Tick kUpperWheelLists = 2 * kUpperWheelSlots;
// log2 of the granularity of upper level `level` (1..kUpperLevels), and of
// the unit of the level above it (its window is two of those).
constexpr int UpperLevelShift(int level) {
  return kWorkWheelBits + kUpperWheelBits * (level - 1);
}
constexpr Tick UpperLevelGranularity(int level) {
  return Tick{1} << UpperLevelShift(level);
}
// An idle wheel's cascade moves about this many entries per wake-up (see
// "Spread cascade"); a slot of at most this many moves at its deadline.
inline constexpr uint64_t kCascadeChunk = 4096;
// An advance releases the lock after this many relinked or expired
// entries (see "Bounded lock hold").
inline constexpr uint64_t kMaxHoldWork = 1024;
// Longest delay Arm() accepts, in ticks.
inline constexpr Tick kMaxDelayTicks = Tick{1} << 32;

static_assert(kWorkWheelSlots == 4096, "geometry table: work wheel slots");
static_assert(kUpperWheelLists == 128, "geometry table: 2 x 64 upper lists");
static_assert(UpperLevelGranularity(1) == kWorkWheelSpan,
              "a level-1 slot is one work revolution");
static_assert(UpperLevelShift(1) == 12 && UpperLevelShift(2) == 18 &&
                  UpperLevelShift(3) == 24 && UpperLevelShift(4) == 30,
              "geometry table: granularities 2^12, 2^18, 2^24, 2^30");
static_assert(UpperLevelGranularity(kUpperLevels) * kUpperWheelLists ==
                  Tick{1} << 37,
              "geometry table: the top level spans 2^37 ticks");
static_assert(2 * kWorkWheelSlots == 64 * 128,
              "work bitmap: 128 words, summarised by one 128-bit map");
static_assert(kUpperWheelLists % 64 == 0, "upper bitmaps are whole words");
static_assert(kUpperWheelLists - 1 <= 0xfe, "an upper list index fits a byte");
// The top level never needs rounds for a delay measured from now(): the
// farthest index, (now + max delay) >> 30, is at most 5 past now's, and
// its 128 lists hold 126 future indices apart.
static_assert((kMaxDelayTicks >> UpperLevelShift(kUpperLevels)) + 2 <
                  kUpperWheelLists,
              "the top level holds the maximum delay without rounds");
// 2^32 ticks of 2 ms is ~99.4 days: comfortably over the 24 h promise, and
// every Cyber-style uint32 millisecond period fits.
static_assert(kMaxDelayTicks * 2 > uint64_t{99} * 24 * 3600 * 1000,
              "geometry table: max delay at a 2 ms tick, in ms");
static_assert(kMaxHoldWork <= kCascadeChunk, "a visit spans a few holds");

// The intrusive node a timed object embeds (or derives from). While armed it
// belongs to the wheel; the owner must Cancel() it (or let it expire) before
// destroying it.
//
// 40 bytes. Not over-aligned: alignas(32) made every object that embeds
// an entry 32-byte aligned, which cost each Timer 96 bytes of padding and
// aligned allocation (584 vs 488 B in //timer:timer_benchmark), and bought
// nothing measurable: cancel / re-arm / arm at 1e6 entries in
// //timer:timing_wheel_benchmark were 59-62 / 106-110 / 10 ns either way
// (2026-11-25), though an entry may now straddle two cache lines. The
// 8 bytes over the former 32 hold an exact deadline's offset (early_ns_).
// The links of a circular doubly-linked list. A list's head is these
// alone (16 bytes: the work wheel's 8192 heads take 128 KiB); an entry
// begins with them.
struct WheelLinks {
  WheelLinks* prev_ = nullptr;
  WheelLinks* next_ = nullptr;
};

class WheelEntry : private WheelLinks {
 public:
  WheelEntry() = default;
  WheelEntry(const WheelEntry&) = delete;
  WheelEntry& operator=(const WheelEntry&) = delete;
  ~WheelEntry();

  // Sequence number of the latest Arm() of this entry (wrapping; only
  // compared for equality, to recognise a stale expiry). Stable while the
  // wheel's lock is held, e.g. inside AdvanceTo's `on_expired`.
  uint32_t arm_seq() const { return arm_seq_; }
  // Absolute expiry tick of the latest Arm(): for an exact arming
  // (ArmExact), the first tick at or after its deadline.
  Tick expires() const { return expires_; }

 private:
  friend class TimingWheel;

  // kHeld: an exact entry whose deadline is less than one tick away, in
  // the wheel's deadline-ordered list (see "Exact deadlines" above).
  // kUpper + L - 1: in upper level L (1..kUpperLevels).
  enum Level : uint8_t { kIdle, kWork, kHeld, kUpper };

  Tick expires_ = 0;
  uint32_t arm_seq_ = 0;
  // Exact arming: how long before tick expires_ the deadline is, in ns
  // (0: on the tick). Nonzero entries wait in the tick before, then held.
  uint32_t early_ns_ = 0;
  uint16_t slot_ = 0;  // list index within its level
  uint8_t level_ = kIdle;  // a Level, or kUpper + L - 1
};
static_assert(sizeof(WheelEntry) == 40, "one entry, 40 bytes");

class TimingWheel {
 public:
  // What Arm() reports besides success.
  // 16 bytes, widest field first: built in registers. (Laid out as
  // arm_seq, expires, flags it was 24 bytes, and the flags' byte stores
  // followed by the copy into StatusOr stalled store forwarding: ~2x per
  // arm in BM_Wheel_Arm/1000.)
  struct ArmResult {
    // Arm: the expiry tick actually used (>= now() + 1). ArmExact: the
    // first tick at or after the deadline (earlier for a passed deadline).
    Tick expires;
    uint32_t arm_seq;  // the entry's new arm_seq()
    // True if this entry's event is earlier than the instant the driver
    // sleeps until (the last PlanWake(), moved earlier only by arms that
    // reported this): a sleeping driver must be woken.
    bool wake_needed = false;
    // True if this re-arm took the entry away from the planned wake and
    // the wheel's next event is now later: the plan moved later (see
    // planned_wake()). No wake-up is needed; a driver that announces its
    // plan announces it again.
    bool plan_later = false;
    // True if this entry moved the plan earlier, but not before the
    // instant the driver sleeps until (cancels had moved the plan later
    // than that sleep: a timeout armed and cancelled per request). No
    // wake-up is needed: the driver wakes first and plans again. A driver
    // that announces its plan announces it again.
    bool plan_earlier = false;
  };
  static_assert(sizeof(ArmResult) == 16, "returned in two registers");
  using ExpiredFn = absl::FunctionRef<void(WheelEntry*)>;

  // `tick` is the wheel's resolution; tick 0 is at `epoch`.
  // REQUIRES: tick > 0.
  explicit TimingWheel(Instant epoch, absl::Duration tick = kTimerResolution);
  TimingWheel(const TimingWheel&) = delete;
  TimingWheel& operator=(const TimingWheel&) = delete;
  // REQUIRES: no entry is armed.
  ~TimingWheel();

  Instant epoch() const { return epoch_; }
  absl::Duration tick() const { return tick_; }
  // Longest delay Arm() accepts (kMaxDelayTicks ticks).
  absl::Duration max_delay() const { return max_delay_; }

  // First tick at or after `deadline`: ceil((deadline - epoch) / tick).
  // Firing at that tick is never early. Deadlines before the epoch map to 0.
  Tick DeadlineToTick(Instant deadline) const;
  // Last tick at or before `t`: floor((t - epoch) / tick). A driver advances
  // to this tick at measured time t.
  Tick InstantToTick(Instant t) const;
  Instant TickToInstant(Tick tick) const;

  // Arms `entry` to expire at tick `expires`, moving it if already armed
  // (re-arm). A tick that has already been processed is clamped to now() + 1:
  // the entry fires at the next advance, never silently not at all.
  // O(1), no allocation.
  // `present`: a tick the caller knows time has reached (a driver's clock,
  // rounded up); the maximum delay counts from max(now(), present). Without
  // it, it counts from now(), which lags the clock while nothing is due (a
  // tickless driver does not advance an idle wheel), so a long but valid
  // delay could be refused after a long idle stretch. (The geometry itself
  // has no limit: entries wait out any number of rounds.)
  // Errors: OutOfRange if expires - max(now(), present) exceeds
  // kMaxDelayTicks (the entry is left as it was).
  absl::StatusOr<ArmResult> Arm(WheelEntry* entry, Tick expires,
                                Tick present = 0);

  // Arms `entry` to expire at the instant `deadline` itself rather than at
  // the tick after it: the first AdvanceToInstant(t) with t >= deadline
  // expires it (AdvanceTo(tick) counts as the tick's instant). The deadline
  // is kept in whole nanoseconds since the epoch, rounded up: a deadline
  // between two nanoseconds (a period of tick / 3) expires at the next one.
  // A deadline already passed (at or before the last instant advanced to)
  // expires at the next advance (to an instant at or after it: a driver's
  // advances only go forward). Re-arms if armed. O(1), no allocation,
  // except that an entry whose deadline is under a tick away is inserted
  // into the held list in deadline order (from its back: O(1) when deadlines come in
  // order). ArmResult::expires is the first tick at or after `deadline`.
  // Errors: as Arm (the maximum delay counts in ticks), and OutOfRange
  // for an infinite deadline.
  absl::StatusOr<ArmResult> ArmExact(WheelEntry* entry, Instant deadline,
                                     Tick present = 0);

  // Disarms `entry`. Returns true if it was armed. O(1). If `plan_later`
  // is given, sets it to whether this moved the plan later, as
  // ArmResult::plan_later.
  bool Cancel(WheelEntry* entry, bool* plan_later = nullptr);

  // True while `entry` is armed in this wheel.
  bool IsArmed(const WheelEntry* entry) const;

  // Processes every tick up to and including `to`, in order: does its share
  // of the cascades in progress (all that is left at a deadline) and
  // expires due entries, calling `on_expired` for each (with the lock held;
  // see the header comment) after unlinking it, in tick order (the order
  // among entries of one tick is unspecified). Empty stretches are skipped
  // in O(1). Afterwards now() == max(now(), to). Releases and re-takes the
  // lock after every kMaxHoldWork entries (see "Bounded lock hold").
  // (An exact entry expires once the tick's instant reaches its deadline.)
  void AdvanceTo(Tick to, ExpiredFn on_expired);
  // As AdvanceTo(the last tick at or before `now`), and also expires the
  // exact entries whose deadline is at or before `now`; all in time order.
  // A driver calls this with the time it measured.
  void AdvanceToInstant(Instant now, ExpiredFn on_expired);

  // The last processed tick.
  Tick now() const;
  // The latest instant advanced to (the tick's instant after AdvanceTo):
  // every deadline at or before it has expired.
  Instant processed() const;
  // The next tick at which AdvanceTo has work (an expiry, or a tick at
  // which a cascade must be done or, for a slot of more than kCascadeChunk
  // entries, must have made progress), or kNoTick for an empty wheel.
  // Never later than the next expiry. O(1).
  Tick NextEventTick() const;
  // The instant of the next event: NextEventTick()'s, or the deadline of a
  // held exact entry if earlier (InfiniteFuture for an empty wheel). A
  // driver sleeps until this. O(1).
  Instant NextEvent() const;
  // As NextEvent(), and records it as the instant a driver will sleep
  // until, so that Arm() reports `wake_needed` for anything earlier. Only
  // such arms move that instant (earlier) until the next PlanWake():
  // cancels do not wake the driver, so they leave it.
  Instant PlanWake();
  // The plan: the last PlanWake(), moved earlier by arms (wake_needed,
  // plan_earlier) and later by cancels and re-arms that empty it
  // (plan_later), so it is the next event whenever nothing is due
  // (InfiniteFuture: none, or no plan yet). A driver woken at a plan moved
  // later finds nothing and plans again.
  Instant planned_wake() const;
  // Number of armed entries.
  size_t size() const;

  // Cascade and lock-hold counters, for tests and benchmarks.
  struct CascadeStats {
    uint64_t moved = 0;         // entries relinked by cascades, in total
    uint64_t max_per_tick = 0;  // most entries relinked at one processed tick
    // Most entries relinked, expired or held by an advance in one hold of
    // the lock (<= kMaxHoldWork), and how often an advance let others in.
    uint64_t max_per_hold = 0;
    uint64_t lock_releases = 0;
    // The longest an advance held the lock in one hold, in steady-clock
    // (wall) time: its work plus any time the advancing thread was
    // preempted while holding it. What a waiter can wait for the advance.
    // Measured only while TimeHolds(true): the two clock reads per hold
    // would add ~45 ns to an advance that expires one entry.
    int64_t max_hold_ns = 0;
  };
  CascadeStats cascade_stats() const;
  // Turns the timing of holds (CascadeStats::max_hold_ns) on or off; off
  // by default. Any thread.
  void TimeHolds(bool on) { time_holds_.store(on, std::memory_order_relaxed); }

  // Test hook: called (from the advancing thread, without the lock) each
  // time an advance lets others in, so a test can arm and cancel there
  // deterministically. It may call anything but AdvanceTo/AdvanceToInstant
  // (one advance at a time: that would deadlock). Not for production use;
  // empty by default.
  void SetLockReleaseHookForTesting(std::function<void()> hook);

 private:
  // Per-slot list head: a circular doubly-linked list through the entries.
  struct SlotList {
    WheelLinks head;  // sentinel
  };
  // The entry whose links `l` are (never a list's head).
  static WheelEntry* EntryOf(WheelLinks* l) { return static_cast<WheelEntry*>(l); }
  static const WheelEntry* EntryOf(const WheelLinks* l) {
    return static_cast<const WheelEntry*>(l);
  }
  // One upper level: kUpperWheelLists lists plus one, the pending list (the
  // cascade in progress). Detaching a slot's list swaps it with the empty
  // pending list in O(1): an entry's slot_ is its list index, and these
  // tables map slots to lists and back (kNoSlot: the pending list).
  struct UpperLevel {
    SlotList lists[kUpperWheelLists + 1];
    uint64_t size[kUpperWheelLists + 1] = {};
    uint8_t list_of_slot[kUpperWheelLists];
    uint8_t slot_of_list[kUpperWheelLists + 1];
    uint8_t pending_list = kUpperWheelLists;
    // Bit s set <=> slot s's list is non-empty.
    uint64_t bits[kUpperWheelLists / 64] = {};
    // Whether the slot of level index `index` holds entries.
    bool IndexInUse(Tick index) const {
      const uint64_t slot = index & (kUpperWheelLists - 1);
      return (bits[slot >> 6] >> (slot & 63) & 1) != 0;
    }
    // The index (tick >> shift) of the latest cascade started: the pending
    // list's while it is non-empty; 0 before any.
    Tick pending_index = 0;
    // Entries in the pending list when it was detached.
    uint64_t pending_total = 0;
  };
  static constexpr uint8_t kNoSlot = 0xff;

  // Event times in the plan are whole nanoseconds since the epoch, rounded
  // up (a driver woken at one is never early); kNoWake: none.
  static constexpr int64_t kNoWake = INT64_MAX;
  int64_t TickNs(Tick tick) const {
    return tick <= fast_tick_limit_ ? static_cast<int64_t>(tick) * tick_ns_
                                    : TickNsSlow(tick);
  }
  int64_t TickNsSlow(Tick tick) const;
  Instant NsToInstant(int64_t ns) const;
  // Unlinks `entry` if armed (returning whether its event was the plan)
  // and gives it a new arm_seq.
  bool DetachForArmLocked(WheelEntry* entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ArmResult FinishArmLocked(WheelEntry* entry, bool vacated_plan)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `expires` is within the maximum delay of max(now_, present)
  // (and not kNoTick); RangeError says why not.
  bool InRangeLocked(Tick expires, Tick present) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const Tick from = now_ > present ? now_ : present;
    return expires != kNoTick && (expires <= from || expires - from <= kMaxDelayTicks);
  }
  absl::Status RangeError(Tick expires, Tick present) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The tick whose processing releases `e` (expires_, or the tick before
  // for an exact deadline between ticks).
  static Tick LinkTick(const WheelEntry* e) {
    return e->early_ns_ != 0 ? e->expires_ - 1 : e->expires_;
  }
  // A held entry's deadline, in ns since the epoch.
  int64_t HeldDeadlineNs(const WheelEntry* e) const {
    return TickNs(e->expires_) - e->early_ns_;
  }
  void InsertHeldLocked(WheelEntry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AdvanceLocked(Tick to, int64_t now_ns, ExpiredFn on_expired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, advance_mu_);
  int64_t NextEventNsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t EventNsOfLocked(const WheelEntry* e) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the event of armed `e` is the planned wake (cheap when not).
  bool AtPlanLocked(const WheelEntry* e) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void LinkLocked(WheelEntry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnlinkLocked(WheelEntry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Upper level `level` (1..kUpperLevels).
  UpperLevel& Upper(int level) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return upper_[level - 1];
  }
  const UpperLevel& Upper(int level) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return upper_[level - 1];
  }
  // The first index of `level` whose slot may hold entries not yet
  // cascaded (the slot of an earlier index is done or pending).
  Tick FirstWaitingIndexLocked(int level) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The index of `level` that slot `slot`'s list holds: the first at or
  // after FirstWaitingIndexLocked(level) with that slot.
  Tick IndexOfSlotLocked(int level, uint64_t slot) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The tick a driver must be awake for the pending cascade of `level`
  // (kNoTick if none), or for the slot of `index` holding `n` entries.
  Tick PendingEventTickLocked(int level) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Tick SlotEventTickLocked(int level, Tick index, uint64_t n) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The next event of `level`: its pending cascade's, else that of its
  // first non-empty slot; kNoTick if none.
  Tick LevelEventTickLocked(int level) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Detaches the slot of `index` of `level` as that level's pending list
  // (which must be empty). O(1).
  void StartCascadeLocked(int level, Tick index)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Relinks up to `budget` pending entries of `level`; returns how many.
  uint64_t CascadePendingLocked(int level, uint64_t budget)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, advance_mu_);
  // The cascade work of processed tick now_, top level first; returns the
  // entries it relinked.
  uint64_t CascadeStepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, advance_mu_);
  void ExpireWorkSlotLocked(uint64_t slot, ExpiredFn on_expired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, advance_mu_);
  // Counts one entry handled by the advance; after kMaxHoldWork of them,
  // releases the lock briefly (see "Bounded lock hold"). The caller must
  // re-read anything but its own locals afterwards.
  void CountHoldWorkLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, advance_mu_) {
    if (++hold_work_ >= kMaxHoldWork) LetOthersInLocked();
  }
  void LetOthersInLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, advance_mu_);
  // The next tick event; with `work_tick`, the work wheel's next tick goes
  // there and the result is the other events' (the upper levels').
  Tick NextEventTickLocked(Tick* work_tick = nullptr) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // When a driver must be awake for work tick `tick` (see the .cc).
  int64_t WorkTickEventNsLocked(Tick tick) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Longest list of exact entries WorkTickEventNsLocked scans.
  static constexpr int kExactScanLimit = 16;
  // After an entry whose event was the plan (`vacated_plan`) left it:
  // moves the plan to the next event if that changed it; true if it did.
  bool ReplanLaterLocked(bool vacated_plan) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The tick at which a driver must be awake for `e` (its expiry, or the
  // cascade visit that may move it to a lower level).
  Tick EventTickOfLocked(const WheelEntry* e) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  WheelLinks* SlotHeadLocked(uint8_t level, uint64_t slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Work lists: this revolution's and the next one's, by expires mod 8192.
  static constexpr uint64_t kWorkLists = 2 * kWorkWheelSlots;
  const Instant epoch_;
  const absl::Duration tick_;
  const int64_t tick_ns_;
  const bool tick_is_whole_ns_;  // tick_ == tick_ns_ ns exactly
  const absl::Duration max_delay_;  // tick_ * kMaxDelayTicks
  // Ticks up to this have an exact int64 ns instant: tick * tick_ns_
  // (0 when the tick is not whole nanoseconds: Duration arithmetic).
  const Tick fast_tick_limit_;

  // Held by an advance for its whole run (one advance at a time, also while
  // it lets others take mu_); taken before mu_.
  Mutex advance_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Spin-then-futex (cyber/common/adaptive_mutex.h): every Arm/Cancel takes
  // it for tens of nanoseconds; uncontended it costs two atomic
  // instructions, contended it never spins past a few microseconds.
  mutable AdaptiveMutex mu_;
  Tick now_ ABSL_GUARDED_BY(mu_) = 0;
  // The latest instant advanced to, in ns since the epoch (rounded down).
  int64_t processed_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t planned_wake_ ABSL_GUARDED_BY(mu_) = kNoWake;
  // The instant the driver sleeps until: the last PlanWake(), moved
  // earlier only by arms that report wake_needed (never later than
  // planned_wake_). Cancels move the plan, not the sleep: an arm after a
  // cancel emptied the plan wakes the driver only if it is due before
  // that sleep ends, so a request's timeout, armed and cancelled per
  // call, does not wake the tick thread on every call.
  int64_t driver_wake_ ABSL_GUARDED_BY(mu_) = kNoWake;
  // planned_wake_, published for planned_wake() (an announcer reads it
  // without taking mu_ a second time: each change is published before the
  // lock is released, so whoever reads after its own change sees it or a
  // newer plan).
  std::atomic<int64_t> published_plan_{kNoWake};
  void SetPlanLocked(int64_t plan) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    planned_wake_ = plan;
    published_plan_.store(plan, std::memory_order_release);
  }
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
  SlotList work_[kWorkLists] ABSL_GUARDED_BY(mu_);
  // Exact entries due within a tick (or already), by deadline.
  SlotList held_ ABSL_GUARDED_BY(mu_);
  UpperLevel upper_[kUpperLevels] ABSL_GUARDED_BY(mu_);
  // Bit s set <=> work list s is non-empty; bit w of the summary set <=>
  // work_bits_[w] != 0 (the next event is two bit searches away, not 128
  // word reads).
  uint64_t work_bits_[kWorkLists / 64] ABSL_GUARDED_BY(mu_) = {};
  uint64_t work_summary_[2] ABSL_GUARDED_BY(mu_) = {};
  std::function<void()> release_hook_ ABSL_GUARDED_BY(advance_mu_);
  // The upper levels' next event (kNoTick: none), valid while
  // upper_event_valid_ and after now_: any link, unlink or cascade start in
  // an upper level invalidates it, and as long as now_ stays before it, time
  // alone cannot change it (an event of a later slot cannot come earlier,
  // and a slot whose window now_ passes would have had an earlier event).
  // Saves recomputing four levels at every tick an advance processes.
  mutable Tick upper_event_ ABSL_GUARDED_BY(mu_) = kNoTick;
  mutable bool upper_event_valid_ ABSL_GUARDED_BY(mu_) = false;
  // Bit L - 1 set <=> upper level L holds an entry (in a slot or pending):
  // the tick loop looks at the levels in use only.
  uint32_t upper_in_use_ ABSL_GUARDED_BY(mu_) = 0;
  // Entries the advance in progress handled since it last took mu_.
  uint64_t hold_work_ ABSL_GUARDED_BY(mu_) = 0;
  // When the advance's current hold of the lock began (steady clock, ns),
  // for CascadeStats::max_hold_ns.
  int64_t hold_began_ns_ ABSL_GUARDED_BY(mu_) = 0;  // 0: not timed
  std::atomic<bool> time_holds_{false};
  void BeginHoldLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndHoldLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  CascadeStats cascade_stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMING_WHEEL_H_
