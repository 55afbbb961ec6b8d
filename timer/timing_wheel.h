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
//   work          512  1 tick        [1, 512)          1.024 s
//   assistant      64  512 ticks     [512, 32768)      65.536 s
//   + rounds        -  32768 ticks   [32768, 2^32]     ~99.4 days (max delay)
//
// Time is an absolute 64-bit tick count since the wheel's epoch; an entry
// stores its absolute expiry tick, never a relative count. An entry with
// delay d = expires - now goes to work slot (expires mod 512) when d < 512,
// else to assistant slot ((expires / 512) mod 64). Whenever the current tick
// crosses a multiple of 512 (a "cascade"), that tick's assistant slot is
// visited: entries now less than 512 ticks away move to the work wheel; the
// others stay for another revolution of the assistant wheel. Their remaining
// rounds, (expires - now) / 32768, are derived from the absolute expiry at
// each visit instead of being stored and counted down, so they cannot drift
// out of step with it.
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
// 32 bytes, aligned so that an entry never straddles two cache lines: a
// cascade or expiry walk touches one line per timer.
class alignas(32) WheelEntry {
 public:
  WheelEntry() = default;
  WheelEntry(const WheelEntry&) = delete;
  WheelEntry& operator=(const WheelEntry&) = delete;
  ~WheelEntry();

  // Sequence number of the latest Arm() of this entry (wrapping; only
  // compared for equality, to recognise a stale expiry). Stable while the
  // wheel's lock is held, e.g. inside AdvanceTo's `on_expired`.
  uint32_t arm_seq() const { return arm_seq_; }
  // Absolute expiry tick of the latest Arm().
  Tick expires() const { return expires_; }

 private:
  friend class TimingWheel;

  enum Level : uint8_t { kIdle, kWork, kAssistant };

  WheelEntry* prev_ = nullptr;
  WheelEntry* next_ = nullptr;
  Tick expires_ = 0;
  uint32_t arm_seq_ = 0;
  uint16_t slot_ = 0;
  Level level_ = kIdle;
};
static_assert(sizeof(WheelEntry) == 32, "one entry, one half cache line");

class TimingWheel {
 public:
  // What Arm() reports besides success.
  struct ArmResult {
    uint32_t arm_seq;  // the entry's new arm_seq()
    Tick expires;      // the expiry tick actually used (>= now() + 1)
    // True if this entry moved the wheel's next event earlier than the wake
    // planned by the last PlanWake(): a sleeping driver must be woken.
    bool wake_needed;
  };
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
  absl::Duration max_delay() const;

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

  // Disarms `entry`. Returns true if it was armed. O(1).
  bool Cancel(WheelEntry* entry);

  // True while `entry` is armed in this wheel.
  bool IsArmed(const WheelEntry* entry) const;

  // Processes every tick up to and including `to`, in order: cascades at each
  // multiple of 512 and expires due entries, calling `on_expired` for each
  // (with the lock held; see the header comment) after unlinking it, in tick
  // order (the order among entries of one tick is unspecified). Empty
  // stretches are
  // skipped in O(1). Afterwards now() == max(now(), to).
  void AdvanceTo(Tick to, ExpiredFn on_expired);

  // The last processed tick.
  Tick now() const;
  // The next tick at which AdvanceTo has work (an expiry or a cascade of a
  // non-empty assistant slot), or kNoTick for an empty wheel. O(1).
  Tick NextEventTick() const;
  // As NextEventTick(), and records it as the tick a driver will sleep
  // until, so that Arm() reports `wake_needed` for anything earlier.
  Tick PlanWake();
  // Number of armed entries.
  size_t size() const;

 private:
  // Per-slot list head: a circular doubly-linked list through the entries.
  struct SlotList {
    WheelEntry head;  // sentinel; only its links are used
  };

  void LinkLocked(WheelEntry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnlinkLocked(WheelEntry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CascadeLocked(uint64_t assistant_slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ExpireWorkSlotLocked(uint64_t slot, ExpiredFn on_expired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Tick NextEventTickLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The tick at which a driver must be awake for `e` (its expiry, or the
  // cascade that moves it to the work wheel).
  Tick EventTickOfLocked(const WheelEntry* e) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  WheelEntry* SlotHeadLocked(WheelEntry::Level level, uint64_t slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Instant epoch_;
  const absl::Duration tick_;
  const int64_t tick_ns_;

  mutable Mutex mu_;
  Tick now_ ABSL_GUARDED_BY(mu_) = 0;
  Tick planned_wake_ ABSL_GUARDED_BY(mu_) = kNoTick;
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
  SlotList work_[kWorkWheelSlots] ABSL_GUARDED_BY(mu_);
  SlotList assistant_[kAssistantWheelSlots] ABSL_GUARDED_BY(mu_);
  // Bit s set <=> slot s is non-empty.
  uint64_t work_bits_[kWorkWheelSlots / 64] ABSL_GUARDED_BY(mu_) = {};
  uint64_t assistant_bits_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMING_WHEEL_H_
