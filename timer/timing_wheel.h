// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// TimingWheel: a two-level hashed timing wheel (work wheel + assistant wheel)
// with absolute tick numbers, for O(1) arm / cancel / re-arm of many timers.
//
// Why this design. Robot modules arm thousands of timeouts and cancel almost
// all of them; sensor pollers re-arm every period. A heap costs O(log n) per
// operation and allocates; a wheel costs O(1) and, with the node embedded in
// the timer (intrusive WheelEntry), never allocates. The trade-off is
// resolution: deadlines are rounded *up* to whole ticks, so a timer fires at
// most one tick late and never early.
//
// Geometry (all constants derive from kWorkWheelBits and
// kAssistantWheelBits; static_asserts below keep this table honest):
//
//   level       slots  granularity   range (ticks)     range at 2 ms tick
//   work      2 x 512  1 tick        [1, 512) (*)      1.024 s
//   assistant      64  512 ticks     [512, 32768)      65.536 s
//   + rounds        -  32768 ticks   [32768, 2^32]     ~99.4 days (max delay)
//
//   (*) plus, ahead of time, the next revolution: up to 1023 ticks ahead.
//
// Time is an absolute 64-bit tick count since the wheel's epoch; an entry
// stores its absolute expiry tick, never a relative count. Ticks fall into
// "revolutions" of 512 (revolution = tick / 512). The work wheel holds the
// entries of the current revolution and, ahead of time, of the next one; it
// has 2 x 512 lists, indexed by expires mod 1024, so each list holds entries
// of exactly one tick and its bitmap finds the exact next expiry. Every other
// entry waits in assistant slot (revolution mod 64). Their remaining rounds,
// (expires - now) / 32768, are derived from the absolute expiry at each
// visit instead of being stored and counted down, so they cannot drift out
// of step with it.
//
// Spread cascade. Moving a revolution's entries from its assistant slot to
// the work wheel (a "cascade") must be complete by the revolution's first
// tick B (a multiple of 512). Done all at once at B, a slot of 50,000
// timeouts stalls the tick thread (and every Arm/Cancel, behind the lock)
// for tens of milliseconds. So the first tick the wheel processes in the
// revolution before B detaches that assistant slot into a "pending" list,
// and each processed tick until B moves a share of it,
// ceil(pending / ticks left until B) + kCascadeSlack entries: to the work
// wheel if they expire in [B, B + 512), back to the assistant slot if they
// are whole rounds away (each entry is visited once). Tick B moves what is
// left. Only ticks processed anyway do this share: an idle wheel stays
// tickless, and if nothing is processed before B the whole cascade happens
// at B as before. An Arm() for [B, B + 512) goes straight to the work wheel.
// None of this is observable: every entry expires at its tick, as before.
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
// thread; one internal mutex serializes them. AdvanceTo calls `on_expired`
// with that mutex held: the function must be short, must not block and must
// not call back into the wheel (the tick driver only takes a reference there
// and hands the timer off after AdvanceTo returns). User callbacks never run
// under the wheel's lock.
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

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/instant.h"

namespace cyber {
namespace timer {

using Tick = uint64_t;

// "No tick": returned by NextEventTick() for an empty wheel.
inline constexpr Tick kNoTick = ~Tick{0};

// The process-wide timer resolution.
inline constexpr absl::Duration kTimerResolution = absl::Milliseconds(2);

inline constexpr int kWorkWheelBits = 9;
inline constexpr int kAssistantWheelBits = 6;
inline constexpr Tick kWorkWheelSlots = Tick{1} << kWorkWheelBits;
inline constexpr Tick kAssistantWheelSlots = Tick{1} << kAssistantWheelBits;
// Ticks covered by one revolution of the work wheel = one assistant slot.
inline constexpr Tick kWorkWheelSpan = kWorkWheelSlots;
// Ticks covered by one revolution of the assistant wheel = one "round".
inline constexpr Tick kAssistantWheelSpan =
    kWorkWheelSpan * kAssistantWheelSlots;
// Each processed tick before a cascade moves this many entries beyond its
// even share of the pending list (see the header comment).
inline constexpr uint64_t kCascadeSlack = 16;
// Longest delay Arm() accepts, in ticks.
inline constexpr Tick kMaxDelayTicks = Tick{1} << 32;

static_assert(kWorkWheelSlots == 512, "geometry table: work wheel slots");
static_assert(kAssistantWheelSlots == 64, "geometry table: assistant slots");
static_assert(kWorkWheelSpan == 512, "geometry table: work range");
static_assert(kAssistantWheelSpan == 32768, "geometry table: assistant range");
static_assert(kWorkWheelSlots % 64 == 0, "work bitmap is whole 64-bit words");
static_assert(kAssistantWheelSlots <= 64, "assistant bitmap is one word");
static_assert(kMaxDelayTicks / kAssistantWheelSpan == 131072,
              "geometry table: rounds up to 2^17");
// 2^32 ticks of 2 ms is ~99.4 days: comfortably over the 24 h promise, and
// every Cyber-style uint32 millisecond period fits.
static_assert(kMaxDelayTicks * 2 > uint64_t{99} * 24 * 3600 * 1000,
              "geometry table: max delay at a 2 ms tick, in ms");

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
class WheelEntry {
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
  enum Level : uint8_t { kIdle, kWork, kAssistant, kHeld };

  WheelEntry* prev_ = nullptr;
  WheelEntry* next_ = nullptr;
  Tick expires_ = 0;
  uint32_t arm_seq_ = 0;
  // Exact arming: how long before tick expires_ the deadline is, in ns
  // (0: on the tick). Nonzero entries wait in the tick before, then held.
  uint32_t early_ns_ = 0;
  uint16_t slot_ = 0;
  Level level_ = kIdle;
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
    // True if this entry moved the wheel's next event earlier than the wake
    // planned by the last PlanWake(): a sleeping driver must be woken.
    bool wake_needed = false;
    // True if this re-arm took the entry away from the planned wake and
    // the wheel's next event is now later: the plan moved later (see
    // planned_wake()). No wake-up is needed; a driver that announces its
    // plan announces it again.
    bool plan_later = false;
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
  // of the coming cascade (all that is left, at a multiple of 512) and
  // expires due entries, calling `on_expired` for each (with the lock held;
  // see the header comment) after unlinking it, in tick order (the order
  // among entries of one tick is unspecified). Empty stretches are skipped
  // in O(1). Afterwards now() == max(now(), to).
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
  // The next tick at which AdvanceTo has work (an expiry, or a multiple of
  // 512 at which a pending cascade or a non-empty assistant slot is due), or
  // kNoTick for an empty wheel. Never later than the next expiry. O(1).
  Tick NextEventTick() const;
  // The instant of the next event: NextEventTick()'s, or the deadline of a
  // held exact entry if earlier (InfiniteFuture for an empty wheel). A
  // driver sleeps until this. O(1).
  Instant NextEvent() const;
  // As NextEvent(), and records it as the instant a driver will sleep
  // until, so that Arm() reports `wake_needed` for anything earlier.
  Instant PlanWake();
  // The plan: the last PlanWake(), moved earlier by arms (wake_needed)
  // and later by cancels and re-arms that empty it (plan_later), so it is
  // the next event whenever nothing is due (InfiniteFuture: none, or no
  // plan yet). A driver woken at a plan moved later finds nothing and
  // plans again.
  Instant planned_wake() const;
  // Number of armed entries.
  size_t size() const;

  // Cascade counters, for tests and benchmarks.
  struct CascadeStats {
    uint64_t moved = 0;         // entries relinked by cascades, in total
    uint64_t max_per_tick = 0;  // most entries relinked at one processed tick
  };
  CascadeStats cascade_stats() const;

 private:
  // Per-slot list head: a circular doubly-linked list through the entries.
  struct SlotList {
    WheelEntry head;  // sentinel; only its links are used
  };

  // Event times in the plan are whole nanoseconds since the epoch, rounded
  // up (a driver woken at one is never early); kNoWake: none.
  static constexpr int64_t kNoWake = INT64_MAX;
  int64_t TickNs(Tick tick) const {
    return tick <= fast_tick_limit_ ? static_cast<int64_t>(tick) * tick_ns_
                                    : TickNsSlow(tick);
  }
  int64_t TickNsSlow(Tick tick) const;
  Instant NsToInstant(int64_t ns) const;
  // Unlinks `entry` if armed (returning its event time, else kNoWake) and
  // gives it a new arm_seq.
  int64_t DetachForArmLocked(WheelEntry* entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ArmResult FinishArmLocked(WheelEntry* entry, int64_t vacated)
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
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t NextEventNsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t EventNsOfLocked(const WheelEntry* e) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void LinkLocked(WheelEntry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnlinkLocked(WheelEntry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Detaches the assistant slot visited at boundary tick `boundary` as the
  // pending list (which must be empty), to be cascaded by then. O(1).
  void StartCascadeLocked(Tick boundary) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Relinks up to `budget` pending entries; returns how many it moved.
  uint64_t CascadePendingLocked(uint64_t budget)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The cascade work of processed tick now_.
  void CascadeStepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ExpireWorkSlotLocked(uint64_t slot, ExpiredFn on_expired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The next tick event; with `work_tick`, the work wheel's next tick goes
  // there and the result is the other events' (cascade, assistant visit).
  Tick NextEventTickLocked(Tick* work_tick = nullptr) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // When a driver must be awake for work tick `tick` (see the .cc).
  int64_t WorkTickEventNsLocked(Tick tick) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Longest list of exact entries WorkTickEventNsLocked scans.
  static constexpr int kExactScanLimit = 16;
  // After an entry whose event tick was `vacated` left it: moves the plan
  // to the next event if that emptied the planned tick; true if it did.
  bool ReplanLaterLocked(int64_t vacated) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The tick at which a driver must be awake for `e` (its expiry, or the
  // cascade that moves it to the work wheel).
  Tick EventTickOfLocked(const WheelEntry* e) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  WheelEntry* SlotHeadLocked(WheelEntry::Level level, uint64_t slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Work lists: this revolution's and the next one's, by expires mod 1024.
  static constexpr uint64_t kWorkLists = 2 * kWorkWheelSlots;
  const Instant epoch_;
  const absl::Duration tick_;
  const int64_t tick_ns_;
  const bool tick_is_whole_ns_;  // tick_ == tick_ns_ ns exactly
  const absl::Duration max_delay_;  // tick_ * kMaxDelayTicks
  // Ticks up to this have an exact int64 ns instant: tick * tick_ns_
  // (0 when the tick is not whole nanoseconds: Duration arithmetic).
  const Tick fast_tick_limit_;

  mutable Mutex mu_;
  Tick now_ ABSL_GUARDED_BY(mu_) = 0;
  // The latest instant advanced to, in ns since the epoch (rounded down).
  int64_t processed_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t planned_wake_ ABSL_GUARDED_BY(mu_) = kNoWake;
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
  // Assistant lists: one per assistant slot plus one, the pending list (the
  // cascade in progress). Detaching a slot's list swaps it with the empty
  // pending list in O(1): an assistant entry's slot_ is its list index, and
  // these tables map slots to lists and back (kNoSlot: the pending list).
  static constexpr uint8_t kNoSlot = 0xff;
  SlotList assistant_[kAssistantWheelSlots + 1] ABSL_GUARDED_BY(mu_);
  uint64_t assistant_size_[kAssistantWheelSlots + 1] ABSL_GUARDED_BY(mu_) = {};
  uint8_t list_of_slot_[kAssistantWheelSlots] ABSL_GUARDED_BY(mu_);
  uint8_t slot_of_list_[kAssistantWheelSlots + 1] ABSL_GUARDED_BY(mu_);
  uint8_t pending_list_ ABSL_GUARDED_BY(mu_) = kAssistantWheelSlots;
  // The boundary tick the pending list is cascaded for (its entries expire
  // in [pending_boundary_, + 512) or whole rounds later); once started,
  // > now_ while the list is non-empty.
  Tick pending_boundary_ ABSL_GUARDED_BY(mu_) = 0;
  // Bit s set <=> slot s is non-empty.
  uint64_t work_bits_[kWorkLists / 64] ABSL_GUARDED_BY(mu_) = {};
  uint64_t assistant_bits_ ABSL_GUARDED_BY(mu_) = 0;
  CascadeStats cascade_stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMING_WHEEL_H_
