// FloorWheel: the fastest single-threaded hierarchical timing wheel we know
// how to write, kept beside TimingWheel (timer/timing_wheel.h) as the floor
// its benchmark rows are compared against (//timer:timing_wheel_benchmark,
// BM_Floor_*; issue 25: "<= 1.5x a lock-free single-threaded wheel").
//
// Why it exists. A ratio against a heap says the wheel is worth its code;
// it does not say how much our wheel's extra duties (its lock, exact
// deadlines, wake planning, the spread cascade) cost. This wheel has none of
// them: no lock, no clock, no planning, only arm / cancel / re-arm / advance
// with the same tick semantics. It must be a serious implementation, or the
// ratios lie in our favour; and it must be correct, or they lie either way
// (floor_wheel_test.cc checks it against tests/reference/wheel_model.h).
//
// Design (the classic hierarchical wheel: Varghese & Lauck, the Linux
// timer wheel before 2016, ratas), chosen for speed:
//   - Intrusive entry, 24 bytes: `next`, `pprev` (the address of whatever
//     points at this entry: the slot head or the previous entry's `next`, as
//     in Linux's hlist) and the absolute expiry tick. Arm, cancel and re-arm
//     are O(1) and never allocate; unlinking needs no slot number, and a
//     slot's head is one pointer, so the heads of all levels fit in 16 KiB.
//   - Placement by the highest differing digit. Ticks are read as 8 digits
//     of kLevelBits bits. An entry expiring at `e` when the wheel is at
//     `now` goes to the level of the highest digit in which e and now
//     differ, in the slot of e's digit there. So level 0 holds exactly the
//     ticks of now's current 256-tick block, level 1 the rest of its
//     65536-tick block, and so on; every entry of a level-0 slot expires at
//     that one tick, and there is no round counter to count down.
//   - Cascade once per level at most. When time reaches the first tick of a
//     level-L slot (L > 0), that slot's entries are placed again, relative to
//     the new now: they share now's digits down to L, so each lands at a
//     lower level (or at level 0 in now's own slot, if it expires now). An
//     entry is moved at most once per level above 0 it starts at: in the
//     benchmark's workload (delays up to 30000 ticks) at most once.
//   - Bitmaps. One bit per slot (4 words per level) and one bit per
//     non-empty level. The next event is the first set bit of the lowest
//     non-empty level: level L's entries all lie before level L+1's (they are
//     inside now's current level-(L+1) slot, the others after it). So
//     AdvanceTo jumps straight from event to event, and NextEventTick() is
//     O(1) (a few word scans).
//
// Geometry (from kLevelBits and kLevels; static_asserts keep it honest):
//
//   level   slots  granularity     holds expiries (ticks ahead, at most)
//   0         256  1 tick          < 256               (0.5 s at 2 ms)
//   1         256  256 ticks       < 65536             (131 s)
//   2         256  65536 ticks     < 2^24              (9.3 hours)
//   ...
//   7         256  2^56 ticks      < 2^64              (any 64-bit tick)
//
// Semantics, as TimingWheel::Arm / AdvanceTo: an entry armed for tick `e`
// expires at the first AdvanceTo whose tick reaches e, never earlier; a tick
// at or before now() is clamped to now() + 1. Any 64-bit tick is accepted
// (no maximum delay). Order among the entries of one tick is unspecified.
//
// Threads: none. One thread owns the wheel and its entries. `on_expired`
// runs after the entry is unlinked and may arm (re-arm) or cancel any entry,
// the expired one included; it must not call AdvanceTo.
//
// Example:
//
//   FloorWheel wheel;
//   FloorEntry e;
//   wheel.Arm(&e, 3);
//   wheel.AdvanceTo(2, [](FloorEntry*) { /* not called */ });
//   wheel.AdvanceTo(3, [](FloorEntry* x) { /* x == &e */ });

#ifndef TESTS_REFERENCE_FLOOR_WHEEL_H_
#define TESTS_REFERENCE_FLOOR_WHEEL_H_

#include <cstddef>
#include <cstdint>

namespace cyber {
namespace reference {

class FloorWheel;

// The node a timed object embeds. While armed it belongs to the wheel; the
// owner cancels it (or lets it expire) before destroying it.
class FloorEntry {
 public:
  using Tick = uint64_t;
  FloorEntry() = default;
  FloorEntry(const FloorEntry&) = delete;
  FloorEntry& operator=(const FloorEntry&) = delete;

  bool armed() const { return pprev_ != nullptr; }
  // The tick of the latest Arm() (after clamping).
  Tick expires() const { return expires_; }

 private:
  friend class FloorWheel;
  FloorEntry* next_ = nullptr;
  // Whatever points at this entry (a slot head or the previous entry's
  // next_); nullptr while idle.
  FloorEntry** pprev_ = nullptr;
  Tick expires_ = 0;
};
static_assert(sizeof(FloorEntry) == 24, "two links and the expiry");

class FloorWheel {
 public:
  using Tick = uint64_t;
  static constexpr Tick kNoTick = ~Tick{0};

  static constexpr int kLevelBits = 8;
  static constexpr int kLevels = 8;
  static constexpr int kSlots = 1 << kLevelBits;
  static constexpr int kWordsPerLevel = kSlots / 64;
  static_assert(kLevels * kLevelBits == 64, "the levels cover every tick");
  static_assert(kSlots % 64 == 0, "a level's bitmap is whole words");
  static_assert(kWordsPerLevel <= 64, "one summary bit per bitmap word");
  static_assert(kLevels <= 32, "one bit per level in nonempty_levels_");

  FloorWheel() = default;
  FloorWheel(const FloorWheel&) = delete;
  FloorWheel& operator=(const FloorWheel&) = delete;

  Tick now() const { return now_; }
  size_t size() const { return size_; }

  // Arms `entry` to expire at tick `expires` (clamped to now() + 1), moving
  // it if it is armed. O(1).
  void Arm(FloorEntry* entry, Tick expires) {
    if (entry->armed()) Unlink(entry);
    else ++size_;
    entry->expires_ = expires > now_ ? expires : now_ + 1;
    Link(entry);
  }

  // Disarms `entry`; returns whether it was armed. O(1).
  bool Cancel(FloorEntry* entry) {
    if (!entry->armed()) return false;
    Unlink(entry);
    entry->pprev_ = nullptr;
    --size_;
    return true;
  }

  // The next tick at which AdvanceTo has work (an expiry, or a cascade that
  // may lead to one), kNoTick when empty. Never later than the next expiry.
  Tick NextEventTick() const {
    if (nonempty_levels_ == 0) return kNoTick;
    const int level = __builtin_ctz(nonempty_levels_);
    return EventTick(level, FirstSlot(level));
  }

  // Processes every tick up to `to`: calls on_expired(entry) for each entry
  // due, in tick order, after unlinking it. Afterwards now() == max(now(), to).
  template <typename ExpiredFn>
  void AdvanceTo(Tick to, ExpiredFn&& on_expired) {
    while (nonempty_levels_ != 0) {
      const int level = __builtin_ctz(nonempty_levels_);
      const int slot = FirstSlot(level);
      const Tick t = EventTick(level, slot);
      if (t > to) break;
      now_ = t;
      if (level > 0) {
        // Every entry lands below `level` (or in level 0's slot for t).
        FloorEntry* e = TakeSlot(level, slot);
        while (e != nullptr) {
          FloorEntry* const next = e->next_;
          Link(e);
          e = next;
        }
      }
      const int slot0 = static_cast<int>(t & (kSlots - 1));
      // Pop one entry at a time from the slot itself, so that a callback
      // cancelling or re-arming one of the others finds it properly linked.
      // Nothing can join this slot meanwhile: an arm now goes to t + 1 or
      // later, and t + 256 and beyond differ from t above digit 0.
      FloorEntry* e;
      while ((e = heads_[0][slot0]) != nullptr) {
        Unlink(e);
        e->pprev_ = nullptr;
        --size_;
        on_expired(e);
      }
    }
    if (to > now_) now_ = to;
  }

 private:
  static int Digit(Tick t, int level) {
    return static_cast<int>((t >> (level * kLevelBits)) & (kSlots - 1));
  }

  // The tick at which level `level`'s slot `slot` comes due: now's digits
  // above the level, `slot` at it, zeros below (level 0: the tick itself).
  Tick EventTick(int level, int slot) const {
    const int shift = level * kLevelBits;
    // Bits of now above the level; a shift by 64 would be undefined.
    const Tick above = shift + kLevelBits >= 64
                           ? 0
                           : now_ >> (shift + kLevelBits) << (shift + kLevelBits);
    return above | (static_cast<Tick>(slot) << shift);
  }

  int FirstSlot(int level) const {
    const int word = __builtin_ctzll(summary_[level]);
    return word * 64 + __builtin_ctzll(bitmap_[level][word]);
  }

  void Link(FloorEntry* e) {
    const Tick diff = e->expires_ ^ now_;
    // The highest differing digit; an entry due now (diff 0) is level 0.
    const int level =
        diff == 0 ? 0 : (63 - __builtin_clzll(diff)) / kLevelBits;
    const int slot = Digit(e->expires_, level);
    FloorEntry** const head = &heads_[level][slot];
    FloorEntry* const first = *head;
    e->next_ = first;
    e->pprev_ = head;
    if (first != nullptr) {
      first->pprev_ = &e->next_;
    } else {
      bitmap_[level][slot / 64] |= uint64_t{1} << (slot % 64);
      summary_[level] |= uint64_t{1} << (slot / 64);
      nonempty_levels_ |= 1u << level;
    }
    *head = e;
  }

  // Unlinks an armed entry (its pprev_ is left dangling for the caller).
  void Unlink(FloorEntry* e) {
    FloorEntry* const next = e->next_;
    FloorEntry** const pprev = e->pprev_;
    *pprev = next;
    if (next != nullptr) {
      next->pprev_ = pprev;
    } else {
      // If `pprev` is a slot head, the entry was its slot's only one: the
      // address says which slot. Compared as integers: ordering pointers
      // into different objects is unspecified.
      const uintptr_t offset = reinterpret_cast<uintptr_t>(pprev) -
                               reinterpret_cast<uintptr_t>(&heads_[0][0]);
      if (offset < sizeof(heads_)) {
        const size_t index = offset / sizeof(FloorEntry*);
        ClearSlotBit(static_cast<int>(index / kSlots),
                     static_cast<int>(index % kSlots));
      }
    }
  }

  // Detaches a whole slot's list and returns its first entry.
  FloorEntry* TakeSlot(int level, int slot) {
    FloorEntry* const first = heads_[level][slot];
    heads_[level][slot] = nullptr;
    ClearSlotBit(level, slot);
    return first;
  }

  void ClearSlotBit(int level, int slot) {
    uint64_t& word = bitmap_[level][slot / 64];
    word &= ~(uint64_t{1} << (slot % 64));
    if (word == 0) {
      summary_[level] &= ~(uint64_t{1} << (slot / 64));
      if (summary_[level] == 0) nonempty_levels_ &= ~(1u << level);
    }
  }

  Tick now_ = 0;
  size_t size_ = 0;
  uint32_t nonempty_levels_ = 0;           // bit L: level L has an entry
  uint64_t summary_[kLevels] = {};         // bit w: bitmap_[L][w] != 0
  uint64_t bitmap_[kLevels][kWordsPerLevel] = {};  // bit s: slot s non-empty
  FloorEntry* heads_[kLevels][kSlots] = {};
};

}  // namespace reference
}  // namespace cyber

#endif  // TESTS_REFERENCE_FLOOR_WHEEL_H_
