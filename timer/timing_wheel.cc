#include "timer/timing_wheel.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"

namespace cyber {
namespace timer {

namespace {

constexpr uint64_t kWorkMask = kWorkWheelSlots - 1;
// Work lists are indexed by expires mod 8192 (this revolution and the next).
constexpr uint64_t kWorkListMask = 2 * kWorkWheelSlots - 1;
constexpr uint64_t kWorkWords = 2 * kWorkWheelSlots / 64;
static_assert(kWorkWords == 128, "the work summary is one 128-bit map");
// Upper lists are indexed by the entry's index at that level mod 128.
constexpr uint64_t kUpperListMask = kUpperWheelLists - 1;
constexpr int kUpperWords = static_cast<int>(kUpperWheelLists / 64);

inline Tick RevolutionOf(Tick tick) { return tick >> kWorkWheelBits; }

// Distance (0..127) from bit `start` to the first set bit of the 128-bit
// map `bits`, going up and wrapping around; 128 if none is set.
inline uint64_t CyclicDistance128(const uint64_t bits[2], uint64_t start) {
  static_assert(kUpperWords == 2, "upper bitmaps are two words");
  const int word = static_cast<int>(start >> 6);
  const int bit = static_cast<int>(start & 63);
  // The rest of the start word, the other word, then the start word's head.
  const uint64_t here = bits[word] & (~uint64_t{0} << bit);
  if (here != 0) return __builtin_ctzll(here) - bit;
  const uint64_t other = bits[word ^ 1];
  if (other != 0) return 64 - bit + __builtin_ctzll(other);
  const uint64_t head = bits[word] & ~(~uint64_t{0} << bit);
  if (head != 0) return 128 - bit + __builtin_ctzll(head);
  return 128;
}

// Start of the window in which the slot of `index` of upper level `level`
// may cascade (the start of the unit before it), and its deadline: its own
// first tick for level 1; for higher levels the start of the cascade of its
// first slot one level down, one unit of that level earlier.
inline Tick CascadeStart(int level, Tick index) {
  return (index - 1) << UpperLevelShift(level);
}
inline Tick CascadeDeadline(int level, Tick index) {
  const Tick first = index << UpperLevelShift(level);
  return level == 1 ? first : first - UpperLevelGranularity(level - 1);
}

// floor(a * b / c) without overflow. REQUIRES: c > 0.
inline uint64_t ScaleDown(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t product;
  if (!__builtin_mul_overflow(a, b, &product)) return product / c;
  return static_cast<uint64_t>(static_cast<unsigned __int128>(a) * b / c);
}

// When a cascade of `left` entries (`total` when it started, or will
// start), to be done over [start, deadline), must next be visited so that
// the straight line from all at `start` to none at `deadline` is never
// more than kCascadeChunk entries ahead of it: `deadline` if `left` is at
// most a chunk, else the tick where the line reaches left - chunk.
Tick ChunkVisitTick(uint64_t left, uint64_t total, Tick start, Tick deadline) {
  if (left <= kCascadeChunk) return deadline;
  const uint64_t window = deadline - start;  // >= 1
  const uint64_t over = left - kCascadeChunk;
  // lag = ceil(over * window / total) <= window - 1 (over < total).
  uint64_t product;
  uint64_t lag;
  if (!__builtin_mul_overflow(over, window, &product)) {
    lag = product / total + (product % total != 0 ? 1 : 0);
  } else {
    const unsigned __int128 wide =
        static_cast<unsigned __int128>(over) * window;
    lag = static_cast<uint64_t>((wide + total - 1) / total);
  }
  return lag >= window ? start : std::max(start, deadline - 1 - lag);
}

}  // namespace

WheelEntry::~WheelEntry() {
  ACHECK(level_ == kIdle)
      << "WheelEntry destroyed while armed (expires at tick " << expires_
      << "): cancel it first";
}

TimingWheel::TimingWheel(Instant epoch, absl::Duration tick)
    : epoch_(epoch),
      tick_(tick),
      tick_ns_(absl::ToInt64Nanoseconds(tick)),
      tick_is_whole_ns_(absl::Nanoseconds(tick_ns_) == tick),
      max_delay_(tick * static_cast<int64_t>(kMaxDelayTicks)),
      fast_tick_limit_(tick_is_whole_ns_ && tick_ns_ > 0
                           ? static_cast<Tick>(INT64_MAX / tick_ns_)
                           : 0) {
  ACHECK(tick_ns_ > 0) << "TimingWheel: tick " << tick << " must be positive";
  AdaptiveMutexLock lock(&mu_);
  for (SlotList& s : work_) s.head.prev_ = s.head.next_ = &s.head;
  held_.head.prev_ = held_.head.next_ = &held_.head;
  for (UpperLevel& level : upper_) {
    for (SlotList& s : level.lists) s.head.prev_ = s.head.next_ = &s.head;
    for (uint64_t i = 0; i < kUpperWheelLists; ++i) {
      level.list_of_slot[i] = static_cast<uint8_t>(i);
      level.slot_of_list[i] = static_cast<uint8_t>(i);
    }
    level.slot_of_list[level.pending_list] = kNoSlot;
  }
}

TimingWheel::~TimingWheel() {
  AdaptiveMutexLock lock(&mu_);
  ACHECK(size_ == 0) << "TimingWheel destroyed with " << size_
                     << " armed entries";
}

// Whole nanoseconds since the epoch, if `since` is a positive whole number
// of them below 2^62 (every clock reading and every ms/us/ns period is), so
// that tick arithmetic can be integer division instead of absl's general
// (out-of-line) Duration division; -1 otherwise.
inline int64_t WholeNanoseconds(absl::Duration since) {
  const int64_t ns = absl::ToInt64Nanoseconds(since);
  return ns > 0 && ns < (int64_t{1} << 62) && absl::Nanoseconds(ns) == since
             ? ns
             : -1;
}

Tick TimingWheel::DeadlineToTick(Instant deadline) const {
  if (deadline.IsInfiniteFuture()) return kNoTick;
  const absl::Duration since = deadline - epoch_;
  if (since <= absl::ZeroDuration()) return 0;
  if (const int64_t ns = WholeNanoseconds(since); ns > 0 && tick_is_whole_ns_) {
    return static_cast<Tick>(ns / tick_ns_ + (ns % tick_ns_ != 0 ? 1 : 0));
  }
  absl::Duration remainder;
  const int64_t whole = absl::IDivDuration(since, tick_, &remainder);
  return static_cast<Tick>(whole) + (remainder > absl::ZeroDuration() ? 1 : 0);
}

Tick TimingWheel::InstantToTick(Instant t) const {
  const absl::Duration since = t - epoch_;
  if (since <= absl::ZeroDuration()) return 0;
  if (const int64_t ns = WholeNanoseconds(since); ns > 0 && tick_is_whole_ns_) {
    return static_cast<Tick>(ns / tick_ns_);
  }
  absl::Duration remainder;
  return static_cast<Tick>(absl::IDivDuration(since, tick_, &remainder));
}

Instant TimingWheel::TickToInstant(Tick tick) const {
  if (tick == kNoTick) return Instant::InfiniteFuture();
  return epoch_ + tick_ * static_cast<int64_t>(tick);
}

namespace {

// Whole nanoseconds in `d`, rounded up / down (saturating).
int64_t CeilNanoseconds(absl::Duration d) {
  int64_t ns = absl::ToInt64Nanoseconds(d);  // towards zero
  if (ns != INT64_MAX && absl::Nanoseconds(ns) < d) ++ns;
  return ns;
}
int64_t FloorNanoseconds(absl::Duration d) {
  int64_t ns = absl::ToInt64Nanoseconds(d);
  if (ns != INT64_MIN && absl::Nanoseconds(ns) > d) --ns;
  return ns;
}

}  // namespace

int64_t TimingWheel::TickNsSlow(Tick tick) const {
  if (tick == kNoTick) return kNoWake;
  return CeilNanoseconds(tick_ * static_cast<int64_t>(tick));
}

Instant TimingWheel::NsToInstant(int64_t ns) const {
  if (ns == kNoWake) return Instant::InfiniteFuture();
  return epoch_ + absl::Nanoseconds(ns);
}

WheelLinks* TimingWheel::SlotHeadLocked(uint8_t level, uint64_t slot) {
  return level == WheelEntry::kWork
             ? &work_[slot].head
             : &Upper(level - WheelEntry::kUpper + 1).lists[slot].head;
}

void TimingWheel::LinkLocked(WheelEntry* e) {
  // REQUIRES: LinkTick(e) >= now_ (== now_ only inside a cascade, for an
  // entry released at the very tick being processed).
  // The lowest level whose window holds the entry: this revolution and the
  // next go to the work wheel; level L holds this unit of level L + 1 and
  // the next; the top level everything later.
  const Tick link = LinkTick(e);
  if (RevolutionOf(link) <= RevolutionOf(now_) + 1) {
    e->level_ = WheelEntry::kWork;
    e->slot_ = static_cast<uint16_t>(link & kWorkListMask);
    work_bits_[e->slot_ >> 6] |= uint64_t{1} << (e->slot_ & 63);
    work_summary_[e->slot_ >> 12] |= uint64_t{1} << ((e->slot_ >> 6) & 63);
  } else {
    int level = 1;
    while (level < kUpperLevels &&
           (link >> UpperLevelShift(level + 1)) >
               (now_ >> UpperLevelShift(level + 1)) + 1) {
      ++level;
    }
    UpperLevel& upper = Upper(level);
    upper_event_valid_ = false;
    upper_in_use_ |= 1u << (level - 1);
    const uint64_t slot = (link >> UpperLevelShift(level)) & kUpperListMask;
    e->level_ = static_cast<uint8_t>(WheelEntry::kUpper + level - 1);
    e->slot_ = upper.list_of_slot[slot];
    ++upper.size[e->slot_];
    upper.bits[slot >> 6] |= uint64_t{1} << (slot & 63);
  }
  // Append at the tail of the slot list.
  WheelLinks* head = SlotHeadLocked(e->level_, e->slot_);
  e->next_ = head;
  e->prev_ = head->prev_;
  head->prev_->next_ = e;
  head->prev_ = e;
}

void TimingWheel::UnlinkLocked(WheelEntry* e) {
  e->prev_->next_ = e->next_;
  e->next_->prev_ = e->prev_;
  if (e->level_ == WheelEntry::kWork) {
    const WheelLinks* head = &work_[e->slot_].head;
    if (head->next_ == head) {  // slot became empty
      const int word = e->slot_ >> 6;
      work_bits_[word] &= ~(uint64_t{1} << (e->slot_ & 63));
      if (work_bits_[word] == 0) {
        work_summary_[word >> 6] &= ~(uint64_t{1} << (word & 63));
      }
    }
  } else if (e->level_ == WheelEntry::kHeld) {
    // A plain list: nothing else to update.
  } else {
    const int level = e->level_ - WheelEntry::kUpper + 1;
    UpperLevel& upper = Upper(level);
    upper_event_valid_ = false;
    if (--upper.size[e->slot_] == 0) {
      const uint8_t slot = upper.slot_of_list[e->slot_];
      if (slot != kNoSlot) upper.bits[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
      if ((upper.bits[0] | upper.bits[1]) == 0 &&
          upper.size[upper.pending_list] == 0) {
        upper_in_use_ &= ~(1u << (level - 1));
      }
    }
  }
  e->prev_ = e->next_ = nullptr;
  e->level_ = WheelEntry::kIdle;
}

void TimingWheel::InsertHeldLocked(WheelEntry* e) {
  // From the back: deadlines mostly arrive in order.
  const int64_t deadline = HeldDeadlineNs(e);
  WheelLinks* head = &held_.head;
  WheelLinks* after = head->prev_;
  while (after != head && HeldDeadlineNs(EntryOf(after)) > deadline) {
    after = after->prev_;
  }
  e->level_ = WheelEntry::kHeld;
  e->prev_ = after;
  e->next_ = after->next_;
  after->next_->prev_ = e;
  after->next_ = e;
}

inline int64_t TimingWheel::EventNsOfLocked(const WheelEntry* e) const {
  // An exact entry in the held list, or in the work wheel at the tick
  // before its deadline: its deadline (WorkTickEventNsLocked).
  if (e->level_ == WheelEntry::kHeld ||
      (e->level_ == WheelEntry::kWork && e->early_ns_ != 0)) {
    return HeldDeadlineNs(e);
  }
  return TickNs(EventTickOfLocked(e));
}

Tick TimingWheel::FirstWaitingIndexLocked(int level) const {
  // Index b = (now >> shift) + 1 is the one whose window [start, deadline]
  // now_ may be in. Its slot holds index b itself unless its cascade has
  // started (pending or done) or its deadline has passed (then it was
  // empty: a deadline with entries is an event), in which case the slot
  // can only hold later rounds.
  const Tick b = (now_ >> UpperLevelShift(level)) + 1;
  return Upper(level).pending_index >= b || now_ >= CascadeDeadline(level, b)
             ? b + 1
             : b;
}

inline Tick TimingWheel::IndexOfSlotLocked(int level, uint64_t slot) const {
  const Tick first = FirstWaitingIndexLocked(level);
  return first + ((slot - first) & kUpperListMask);
}

Tick TimingWheel::SlotEventTickLocked(int level, Tick index, uint64_t n) const {
  // Not started: the straight line starts at the window's start with n.
  const Tick visit = ChunkVisitTick(n, n, CascadeStart(level, index),
                                    CascadeDeadline(level, index));
  return std::max(visit, now_ + 1);
}

Tick TimingWheel::PendingEventTickLocked(int level) const {
  const UpperLevel& upper = Upper(level);
  const uint64_t left = upper.size[upper.pending_list];
  if (left == 0) return kNoTick;
  const Tick visit =
      ChunkVisitTick(left, upper.pending_total,
                     CascadeStart(level, upper.pending_index),
                     CascadeDeadline(level, upper.pending_index));
  // Behind the line (e.g. a lock release in the middle of a visit): the
  // next tick.
  return std::max(visit, now_ + 1);
}

Tick TimingWheel::LevelEventTickLocked(int level) const {
  const UpperLevel& upper = Upper(level);
  // An empty level costs three loads (most wheels use one or two levels).
  if ((upper.bits[0] | upper.bits[1]) == 0 &&
      upper.size[upper.pending_list] == 0) {
    return kNoTick;
  }
  // A pending cascade ends by its deadline, before the window of any slot
  // of a later index opens: its event comes first.
  const Tick pending = PendingEventTickLocked(level);
  if (pending != kNoTick) return pending;
  const Tick first = FirstWaitingIndexLocked(level);
  const uint64_t dist = CyclicDistance128(upper.bits, first & kUpperListMask);
  if (dist == kUpperWheelLists) return kNoTick;
  const Tick index = first + dist;
  const uint64_t n = upper.size[upper.list_of_slot[index & kUpperListMask]];
  return SlotEventTickLocked(level, index, n);
}

inline Tick TimingWheel::EventTickOfLocked(const WheelEntry* e) const {
  // Below kUpper an armed entry is in a work-wheel list or the held list,
  // linked at LinkTick. (Callers pass armed entries only; an idle one gets
  // its stale link tick, never an upper level's index computed from kIdle.)
  if (e->level_ < WheelEntry::kUpper) return LinkTick(e);
  const int level = e->level_ - WheelEntry::kUpper + 1;
  const UpperLevel& upper = Upper(level);
  if (e->slot_ == upper.pending_list) return PendingEventTickLocked(level);
  const Tick index = IndexOfSlotLocked(level, upper.slot_of_list[e->slot_]);
  return SlotEventTickLocked(level, index, upper.size[e->slot_]);
}

bool TimingWheel::AtPlanLocked(const WheelEntry* e) const {
  if (planned_wake_ == kNoWake) return false;
  if (e->level_ < WheelEntry::kUpper) return EventNsOfLocked(e) == planned_wake_;
  // An upper entry's event is never before now_ + 1, nor, unless its slot
  // is the pending one, before its slot's window opens; the plan, the
  // earliest event, is usually before that, and then the exact event
  // (which may take a division) is not needed.
  // (Below the top level a list holds one index, the entry's own; at the
  // top it may hold later rounds, and the slot's index is the one to use.)
  const int level = e->level_ - WheelEntry::kUpper + 1;
  const UpperLevel& upper = Upper(level);
  Tick earliest = now_ + 1;
  if (e->slot_ != upper.pending_list) {
    const Tick index =
        level < kUpperLevels
            ? LinkTick(e) >> UpperLevelShift(level)
            : IndexOfSlotLocked(level, upper.slot_of_list[e->slot_]);
    earliest = std::max(earliest, CascadeStart(level, index));
  }
  if (planned_wake_ < TickNs(earliest)) return false;
  return EventNsOfLocked(e) == planned_wake_;
}

absl::Status TimingWheel::RangeError(Tick expires, Tick present) const {
  if (expires == kNoTick) {
    return absl::OutOfRangeError(
        "TimingWheel: cannot arm an entry for kNoTick (an infinite deadline)");
  }
  const Tick from = std::max(now_, present);
  return absl::OutOfRangeError(absl::StrCat(
      "TimingWheel: expiry tick ", expires, " is ", expires - from,
      " ticks ahead of tick ", from, "; the maximum delay is ",
      kMaxDelayTicks, " ticks (", absl::FormatDuration(max_delay()), ")"));
}

inline bool TimingWheel::DetachForArmLocked(WheelEntry* entry) {
  bool vacated_plan = false;
  if (entry->level_ != WheelEntry::kIdle) {
    vacated_plan = AtPlanLocked(entry);
    UnlinkLocked(entry);
  } else {
    ++size_;
  }
  ++entry->arm_seq_;
  return vacated_plan;
}

inline TimingWheel::ArmResult TimingWheel::FinishArmLocked(WheelEntry* entry,
                                                           bool vacated_plan) {
  bool wake_needed = false;
  bool plan_later = false;
  // An upper entry's event is not before its slot's window opens: when
  // that is not before the plan, it cannot be earlier, and the exact event
  // (which may take a division) is not needed.
  // (At the top level a list may also hold later rounds of its index, so
  // the entry's own index says nothing there.)
  bool maybe_earlier = true;
  const int level = entry->level_ - WheelEntry::kUpper + 1;
  if (level >= 1 && level < kUpperLevels) {
    const Tick index = LinkTick(entry) >> UpperLevelShift(level);
    maybe_earlier = TickNs(CascadeStart(level, index)) < planned_wake_;
  }
  bool plan_earlier = false;
  if (maybe_earlier) {
    const int64_t event = EventNsOfLocked(entry);
    if (event < planned_wake_) {
      SetPlanLocked(event);
      // The driver sleeps until driver_wake_ (<= the plan): only an event
      // before that needs it woken.
      if (event < driver_wake_) {
        driver_wake_ = event;
        wake_needed = true;
      } else {
        plan_earlier = true;
      }
    }
  }
  if (!wake_needed && !plan_earlier) plan_later = ReplanLaterLocked(vacated_plan);
  return ArmResult{entry->expires_, entry->arm_seq_, wake_needed, plan_later,
                   plan_earlier};
}

absl::StatusOr<TimingWheel::ArmResult> TimingWheel::Arm(WheelEntry* entry,
                                                        Tick expires,
                                                        Tick present) {
  AdaptiveMutexLock lock(&mu_);
  if (!InRangeLocked(expires, present)) return RangeError(expires, present);
  const bool vacated_plan = DetachForArmLocked(entry);
  entry->expires_ = std::max(expires, now_ + 1);
  entry->early_ns_ = 0;
  LinkLocked(entry);
  return FinishArmLocked(entry, vacated_plan);
}

absl::StatusOr<TimingWheel::ArmResult> TimingWheel::ArmExact(WheelEntry* entry,
                                                             Instant deadline,
                                                             Tick present) {
  const Tick expires = DeadlineToTick(deadline);  // kNoTick if infinite
  // Deadline in ns since the epoch, rounded up (never early); before the
  // epoch is as good as at it (long due).
  const int64_t deadline_ns =
      expires == kNoTick ? kNoWake
                         : std::max<int64_t>(0, CeilNanoseconds(deadline - epoch_));
  AdaptiveMutexLock lock(&mu_);
  if (!InRangeLocked(expires, present)) return RangeError(expires, present);
  const bool vacated_plan = DetachForArmLocked(entry);
  entry->expires_ = expires;
  // How far before its tick the deadline is; an offset too large to store
  // (a tick over 4.29 s) is stored smaller: later, never early.
  const int64_t early = TickNs(expires) - deadline_ns;
  entry->early_ns_ =
      static_cast<uint32_t>(std::clamp<int64_t>(early, 0, UINT32_MAX));
  if (LinkTick(entry) <= now_) {
    // Its release tick is processed (or being processed, by an advance
    // that let others in): due within the tick being waited for, or
    // already (a deadline at or before processed() is always one of
    // these, its tick being at most now_). Held.
    InsertHeldLocked(entry);
  } else {
    LinkLocked(entry);
  }
  return FinishArmLocked(entry, vacated_plan);
}

bool TimingWheel::Cancel(WheelEntry* entry, bool* plan_later) {
  AdaptiveMutexLock lock(&mu_);
  if (entry->level_ == WheelEntry::kIdle) {
    if (plan_later != nullptr) *plan_later = false;
    return false;
  }
  const bool vacated_plan = AtPlanLocked(entry);
  UnlinkLocked(entry);
  --size_;
  const bool later = ReplanLaterLocked(vacated_plan);
  if (plan_later != nullptr) *plan_later = later;
  return true;
}

bool TimingWheel::ReplanLaterLocked(bool vacated_plan) {
  // Only an entry of the planned event moves the plan: others cost a
  // compare. (A plan already processed matches no armed entry.) The event
  // stays if others share it; an upper slot's may also move later while
  // entries are left in it (a smaller slot needs a later visit).
  if (!vacated_plan) return false;
  const int64_t next = NextEventNsLocked();
  if (next == planned_wake_) return false;
  SetPlanLocked(next);
  return true;
}

bool TimingWheel::IsArmed(const WheelEntry* entry) const {
  AdaptiveMutexLock lock(&mu_);
  return entry->level_ != WheelEntry::kIdle;
}

Tick TimingWheel::NextEventTickLocked(Tick* work_tick) const {
  Tick best = kNoTick;
  // Work wheel: the first non-empty list after now, cyclically. Everything in
  // it expires in (now, now + 8192), at a distinct tick per list, so
  // distance == delay. The list of now_ itself is skipped: it never holds a
  // later tick, and while an advance lets others in it may still hold
  // entries of the tick being processed. First the rest of the start word,
  // then the words the summary marks, in cyclic order, up to the start
  // word again (whose bits before the start are the farthest lists).
  const uint64_t start = (now_ + 1) & kWorkListMask;
  const uint64_t current = now_ & kWorkListMask;
  const uint64_t start_word = start >> 6;
  const int start_bit = static_cast<int>(start & 63);
  auto found = [start, now = now_](uint64_t word, uint64_t bits) {
    const uint64_t slot = word * 64 + __builtin_ctzll(bits);
    return now + 1 + ((slot - start) & kWorkListMask);
  };
  // (The current list is below the start in its word, or the last one of
  // the word before.)
  if (const uint64_t here = work_bits_[start_word] & (~uint64_t{0} << start_bit);
      here != 0) {
    best = found(start_word, here);
  } else {
    for (uint64_t offset = 1; offset <= kWorkWords;) {
      const uint64_t from = (start_word + offset) & (kWorkWords - 1);
      const uint64_t gap = CyclicDistance128(work_summary_, from);
      if (gap == 128 || offset + gap > kWorkWords) break;
      offset += gap;
      const uint64_t w = (start_word + offset) & (kWorkWords - 1);
      uint64_t bits = work_bits_[w];
      if (offset == kWorkWords) bits &= ~(~uint64_t{0} << start_bit);  // wrapped
      if (w == current >> 6) bits &= ~(uint64_t{1} << (current & 63));
      if (bits != 0) {
        best = found(w, bits);
        break;
      }
      ++offset;
    }
  }
  if (work_tick != nullptr) {
    *work_tick = best;
    best = kNoTick;  // the caller wants the other events apart
  }
  if (!upper_event_valid_ || upper_event_ <= now_) {
    Tick upper = kNoTick;
    for (uint32_t in_use = upper_in_use_; in_use != 0; in_use &= in_use - 1) {
      const int level = __builtin_ctz(in_use) + 1;
      upper = std::min(upper, LevelEventTickLocked(level));
    }
    upper_event_ = upper;
    upper_event_valid_ = true;
  }
  return std::min(best, upper_event_);
}

int64_t TimingWheel::WorkTickEventNsLocked(Tick tick) const {
  // Only exact deadlines between `tick` and the next (early_ns_ != 0)
  // wait in this list: then the earliest of them, not the tick itself, is
  // when a driver must be awake (processing the tick then releases them
  // all), which saves the tick thread a wake-up per call of, e.g., a 5 ms
  // periodic timer. Any entry due on the tick, or a long list, makes it
  // the tick (earlier is always safe).
  const WheelLinks* head = &work_[tick & kWorkListMask].head;
  int64_t best = kNoWake;
  int scanned = 0;
  for (const WheelLinks* l = head->next_; l != head; l = l->next_) {
    const WheelEntry* e = EntryOf(l);
    if (e->early_ns_ == 0 || ++scanned > kExactScanLimit) return TickNs(tick);
    best = std::min(best, HeldDeadlineNs(e));
  }
  return best == kNoWake ? TickNs(tick) : best;
}

Tick TimingWheel::NextEventTick() const {
  AdaptiveMutexLock lock(&mu_);
  return NextEventTickLocked();
}

int64_t TimingWheel::NextEventNsLocked() const {
  Tick work = kNoTick;
  const Tick other = NextEventTickLocked(&work);
  int64_t event = TickNs(other);
  if (work != kNoTick) event = std::min(event, WorkTickEventNsLocked(work));
  const WheelLinks* first = held_.head.next_;
  if (first == &held_.head) return event;
  return std::min(event, HeldDeadlineNs(EntryOf(first)));
}

Instant TimingWheel::NextEvent() const {
  AdaptiveMutexLock lock(&mu_);
  return NsToInstant(NextEventNsLocked());
}

Instant TimingWheel::PlanWake() {
  AdaptiveMutexLock lock(&mu_);
  SetPlanLocked(NextEventNsLocked());
  driver_wake_ = planned_wake_;
  return NsToInstant(planned_wake_);
}

Instant TimingWheel::planned_wake() const {
  // Published under mu_ with every change of the plan; read without it.
  return NsToInstant(published_plan_.load(std::memory_order_acquire));
}

void TimingWheel::StartCascadeLocked(int level, Tick index) {
  UpperLevel& upper = Upper(level);
  ACHECK(upper.size[upper.pending_list] == 0)
      << "wheel invariant: level " << level << " cascade of index "
      << upper.pending_index << " unfinished at tick " << now_;
  // Swap the slot's list with the empty pending list: the slot starts empty
  // (entries armed for its index from now on go to a lower level; only
  // later rounds, at the top level, can come), the detached entries keep
  // their list index, which now names the pending list.
  const uint64_t slot = index & kUpperListMask;
  const uint8_t detached = upper.list_of_slot[slot];
  upper.list_of_slot[slot] = upper.pending_list;
  upper.slot_of_list[upper.pending_list] = static_cast<uint8_t>(slot);
  upper.slot_of_list[detached] = kNoSlot;
  upper.pending_list = detached;
  upper.bits[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
  upper.pending_index = index;
  upper.pending_total = upper.size[detached];
  upper_event_valid_ = false;
}

uint64_t TimingWheel::CascadePendingLocked(int level, uint64_t budget) {
  // Each entry goes to the lowest level whose window holds it now (a later
  // round of the top level goes back to its slot's new list: not this one,
  // so each entry is visited once). The list is re-read from its head after
  // every entry: the lock may have been released (CountHoldWorkLocked) and
  // entries cancelled or re-armed meanwhile.
  uint64_t moved = 0;
  while (moved < budget) {
    UpperLevel& upper = Upper(level);
    WheelLinks* head = &upper.lists[upper.pending_list].head;
    if (head->next_ == head) break;
    WheelEntry* e = EntryOf(head->next_);
    __builtin_prefetch(e->next_);  // the walk is a pointer chase: hide the miss
    UnlinkLocked(e);
    LinkLocked(e);
    ++moved;
    CountHoldWorkLocked();
  }
  return moved;
}

uint64_t TimingWheel::CascadeStepLocked() {
  const Tick t = now_;
  uint64_t moved = 0;
  // Top level first: a level's deadline is the start of the window of the
  // level below, whose cascade then includes what this one brought down.
  for (int level = kUpperLevels; level >= 1; --level) {
    if ((upper_in_use_ & (1u << (level - 1))) == 0) {
      continue;  // an empty level has nothing to start or move
    }
    const Tick b = (t >> UpperLevelShift(level)) + 1;
    // A level-1 slot's deadline is its own first tick, when b has moved on
    // past it: if no tick of its window was processed it has not started.
    if (level == 1 && (t & kWorkMask) == 0 && Upper(1).pending_index < b - 1 &&
        Upper(1).IndexInUse(b - 1)) {
      StartCascadeLocked(1, b - 1);
    }
    if (Upper(level).size[Upper(level).pending_list] != 0 &&
        Upper(level).pending_index < b) {
      moved += CascadePendingLocked(level, ~uint64_t{0});
    }
    // Start b's cascade if its window is open and its slot holds entries
    // (an empty slot needs no start: nothing can be armed into it for
    // index b from now on, and later rounds wait there as in any slot).
    const Tick deadline = CascadeDeadline(level, b);
    if (Upper(level).pending_index < b && t <= deadline &&
        Upper(level).IndexInUse(b)) {
      StartCascadeLocked(level, b);
    }
    const UpperLevel& upper = Upper(level);
    const uint64_t left = upper.size[upper.pending_list];
    if (left == 0) continue;
    if (t >= deadline) {
      moved += CascadePendingLocked(level, ~uint64_t{0});
      continue;
    }
    // Keep to the straight line from all at the window's start to none at
    // the deadline.
    const uint64_t target = ScaleDown(upper.pending_total, deadline - 1 - t,
                                      deadline - CascadeStart(level, b));
    if (left > target) moved += CascadePendingLocked(level, left - target);
  }
  cascade_stats_.moved += moved;
  cascade_stats_.max_per_tick = std::max(cascade_stats_.max_per_tick, moved);
  return moved;
}

void TimingWheel::ExpireWorkSlotLocked(uint64_t slot, ExpiredFn on_expired) {
  // One entry at a time from the list's head: the lock may be released
  // between two (CountHoldWorkLocked), and then the entries not yet
  // expired are still armed in this list (an Arm meanwhile cannot add to
  // it: it is the list of now_, and arms clamp to now_ + 1), so a Cancel or
  // re-arm of any of them is an ordinary unlink.
  while (true) {
    WheelLinks* head = &work_[slot].head;
    if (head->next_ == head) break;
    WheelEntry* e = EntryOf(head->next_);
    __builtin_prefetch(e->next_);
    // Each work list holds one tick of this revolution or the next.
    ACHECK(LinkTick(e) == now_) << "wheel invariant: entry for tick "
                                << LinkTick(e) << " in list of tick " << now_;
    UnlinkLocked(e);
    if (e->early_ns_ != 0) {
      // An exact deadline within the next tick: held, and expired from
      // there (AdvanceLocked) if already due, so that it comes after this
      // tick's entries and in deadline order among the held ones.
      InsertHeldLocked(e);
    } else {
      --size_;
      on_expired(e);
    }
    CountHoldWorkLocked();
  }
}

namespace {
int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void TimingWheel::BeginHoldLocked() {
  hold_began_ns_ =
      time_holds_.load(std::memory_order_relaxed) ? SteadyNowNs() : 0;
}

void TimingWheel::EndHoldLocked() {
  cascade_stats_.max_per_hold =
      std::max(cascade_stats_.max_per_hold, hold_work_);
  // Timed only if it was when the hold began (the switch may have moved).
  if (hold_began_ns_ != 0 && time_holds_.load(std::memory_order_relaxed)) {
    cascade_stats_.max_hold_ns =
        std::max(cascade_stats_.max_hold_ns, SteadyNowNs() - hold_began_ns_);
  }
  hold_work_ = 0;
}

void TimingWheel::LetOthersInLocked() {
  EndHoldLocked();
  ++cascade_stats_.lock_releases;
  // The lock is not fair: unlocking and locking again at once would
  // usually win the race against a waiter just woken. Yielding first gives
  // a waiter (spinning on another CPU, or woken from its futex) a moment to
  // take it.
  mu_.Unlock();
  if (release_hook_) release_hook_();
  std::this_thread::yield();
  mu_.Lock();
  BeginHoldLocked();
}

void TimingWheel::SetLockReleaseHookForTesting(std::function<void()> hook) {
  MutexLock advancing(&advance_mu_);
  release_hook_ = std::move(hook);
}

void TimingWheel::AdvanceTo(Tick to, ExpiredFn on_expired) {
  // The tick's instant in whole ns, rounded down (integer arithmetic when
  // the tick is whole nanoseconds: no Duration multiplication per call).
  const int64_t to_ns =
      to <= fast_tick_limit_ ? static_cast<int64_t>(to) * tick_ns_
      : to == kNoTick        ? kNoWake - 1
                             : FloorNanoseconds(tick_ * static_cast<int64_t>(to));
  MutexLock advancing(&advance_mu_);
  AdaptiveMutexLock lock(&mu_);
  AdvanceLocked(to, to_ns, on_expired);
}

void TimingWheel::AdvanceToInstant(Instant now, ExpiredFn on_expired) {
  const Tick to = InstantToTick(now);
  const int64_t now_ns = now.IsInfiniteFuture()
                             ? kNoWake - 1
                             : FloorNanoseconds(now - epoch_);
  MutexLock advancing(&advance_mu_);
  AdaptiveMutexLock lock(&mu_);
  AdvanceLocked(to, now_ns, on_expired);
}

void TimingWheel::AdvanceLocked(Tick to, int64_t now_ns, ExpiredFn on_expired) {
  hold_work_ = 0;
  BeginHoldLocked();
  while (true) {
    const Tick next = NextEventTickLocked();
    const bool tick_due = next != kNoTick && next <= to;
    // A held deadline that has come, before the next tick if that is due
    // too: in time order.
    WheelLinks* const held = &held_.head;
    WheelEntry* const first = held->next_ != held ? EntryOf(held->next_) : nullptr;
    if (first != nullptr && HeldDeadlineNs(first) <= now_ns &&
        (!tick_due || HeldDeadlineNs(first) <= TickNs(next))) {
      UnlinkLocked(first);
      --size_;
      on_expired(first);
      CountHoldWorkLocked();
      continue;
    }
    if (!tick_due) break;
    now_ = next;
    CascadeStepLocked();
    ExpireWorkSlotLocked(now_ & kWorkListMask, on_expired);
  }
  if (to > now_) now_ = to;
  if (now_ns > processed_ns_) processed_ns_ = now_ns;
  EndHoldLocked();
}

Tick TimingWheel::now() const {
  AdaptiveMutexLock lock(&mu_);
  return now_;
}

Instant TimingWheel::processed() const {
  AdaptiveMutexLock lock(&mu_);
  return NsToInstant(processed_ns_);
}

size_t TimingWheel::size() const {
  AdaptiveMutexLock lock(&mu_);
  return size_;
}

TimingWheel::CascadeStats TimingWheel::cascade_stats() const {
  AdaptiveMutexLock lock(&mu_);
  return cascade_stats_;
}

}  // namespace timer
}  // namespace cyber
