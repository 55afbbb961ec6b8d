#include "timer/timing_wheel.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"

namespace cyber {
namespace timer {

namespace {

constexpr uint64_t kWorkMask = kWorkWheelSlots - 1;
// Work lists are indexed by expires mod 1024 (this revolution and the next).
constexpr uint64_t kWorkListMask = 2 * kWorkWheelSlots - 1;
constexpr uint64_t kAssistantMask = kAssistantWheelSlots - 1;
constexpr int kWorkWords = static_cast<int>(2 * kWorkWheelSlots / 64);

inline Tick RevolutionOf(Tick tick) { return tick >> kWorkWheelBits; }

// Distance (0..63) from bit `start` to the first set bit of `bits`, going up
// and wrapping around; 64 if none is set.
inline int CyclicDistance64(uint64_t bits, int start) {
  if (bits == 0) return 64;
  const uint64_t rotated =
      start == 0 ? bits : (bits >> start) | (bits << (64 - start));
  return __builtin_ctzll(rotated);
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
  MutexLock lock(&mu_);
  for (SlotList& s : work_) s.head.prev_ = s.head.next_ = &s.head;
  for (SlotList& s : assistant_) s.head.prev_ = s.head.next_ = &s.head;
  held_.head.prev_ = held_.head.next_ = &held_.head;
  for (uint64_t i = 0; i < kAssistantWheelSlots; ++i) {
    list_of_slot_[i] = static_cast<uint8_t>(i);
    slot_of_list_[i] = static_cast<uint8_t>(i);
  }
  slot_of_list_[pending_list_] = kNoSlot;
}

TimingWheel::~TimingWheel() {
  MutexLock lock(&mu_);
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

WheelEntry* TimingWheel::SlotHeadLocked(WheelEntry::Level level,
                                        uint64_t slot) {
  return level == WheelEntry::kWork ? &work_[slot].head
                                    : &assistant_[slot].head;
}

void TimingWheel::LinkLocked(WheelEntry* e) {
  // REQUIRES: LinkTick(e) >= now_ (== now_ only inside a cascade, for an
  // entry released at the very tick being processed).
  // This revolution and the next go to the work wheel, later ones to the
  // assistant slot of their revolution.
  const Tick link = LinkTick(e);
  const Tick revolution = RevolutionOf(link);
  if (revolution <= RevolutionOf(now_) + 1) {
    e->level_ = WheelEntry::kWork;
    e->slot_ = static_cast<uint16_t>(link & kWorkListMask);
    work_bits_[e->slot_ >> 6] |= uint64_t{1} << (e->slot_ & 63);
  } else {
    const uint64_t slot = revolution & kAssistantMask;
    e->level_ = WheelEntry::kAssistant;
    e->slot_ = list_of_slot_[slot];
    ++assistant_size_[e->slot_];
    assistant_bits_ |= uint64_t{1} << slot;
  }
  // Append at the tail of the slot list.
  WheelEntry* head = SlotHeadLocked(e->level_, e->slot_);
  e->next_ = head;
  e->prev_ = head->prev_;
  head->prev_->next_ = e;
  head->prev_ = e;
}

void TimingWheel::UnlinkLocked(WheelEntry* e) {
  e->prev_->next_ = e->next_;
  e->next_->prev_ = e->prev_;
  if (e->level_ == WheelEntry::kWork) {
    const WheelEntry* head = &work_[e->slot_].head;
    if (head->next_ == head) {  // slot became empty
      work_bits_[e->slot_ >> 6] &= ~(uint64_t{1} << (e->slot_ & 63));
    }
  } else if (e->level_ == WheelEntry::kHeld) {
    // A plain list: nothing else to update.
  } else if (--assistant_size_[e->slot_] == 0) {
    const uint8_t slot = slot_of_list_[e->slot_];
    if (slot != kNoSlot) assistant_bits_ &= ~(uint64_t{1} << slot);
  }
  e->prev_ = e->next_ = nullptr;
  e->level_ = WheelEntry::kIdle;
}

void TimingWheel::InsertHeldLocked(WheelEntry* e) {
  // From the back: deadlines mostly arrive in order.
  const int64_t deadline = HeldDeadlineNs(e);
  WheelEntry* head = &held_.head;
  WheelEntry* after = head->prev_;
  while (after != head && HeldDeadlineNs(after) > deadline) after = after->prev_;
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

inline Tick TimingWheel::EventTickOfLocked(const WheelEntry* e) const {
  if (e->level_ == WheelEntry::kWork) return LinkTick(e);
  if (e->slot_ == pending_list_) return pending_boundary_;
  // The next visit of its assistant slot: the next multiple of 512 after now
  // whose assistant index matches.
  const Tick next_boundary = (RevolutionOf(now_) + 1) << kWorkWheelBits;
  const uint64_t first_slot = RevolutionOf(next_boundary) & kAssistantMask;
  const uint64_t dist = (slot_of_list_[e->slot_] - first_slot) & kAssistantMask;
  return next_boundary + dist * kWorkWheelSpan;
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

inline int64_t TimingWheel::DetachForArmLocked(WheelEntry* entry) {
  int64_t vacated = kNoWake;
  if (entry->level_ != WheelEntry::kIdle) {
    vacated = EventNsOfLocked(entry);
    UnlinkLocked(entry);
  } else {
    ++size_;
  }
  ++entry->arm_seq_;
  return vacated;
}

inline TimingWheel::ArmResult TimingWheel::FinishArmLocked(WheelEntry* entry,
                                                    int64_t vacated) {
  const int64_t event = EventNsOfLocked(entry);
  bool wake_needed = false;
  bool plan_later = false;
  if (event < planned_wake_) {
    SetPlanLocked(event);
    wake_needed = true;
  } else {
    plan_later = ReplanLaterLocked(vacated);
  }
  return ArmResult{entry->expires_, entry->arm_seq_, wake_needed, plan_later};
}

absl::StatusOr<TimingWheel::ArmResult> TimingWheel::Arm(WheelEntry* entry,
                                                        Tick expires,
                                                        Tick present) {
  MutexLock lock(&mu_);
  if (!InRangeLocked(expires, present)) return RangeError(expires, present);
  const int64_t vacated = DetachForArmLocked(entry);
  entry->expires_ = std::max(expires, now_ + 1);
  entry->early_ns_ = 0;
  LinkLocked(entry);
  return FinishArmLocked(entry, vacated);
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
  MutexLock lock(&mu_);
  if (!InRangeLocked(expires, present)) return RangeError(expires, present);
  const int64_t vacated = DetachForArmLocked(entry);
  entry->expires_ = expires;
  // How far before its tick the deadline is; an offset too large to store
  // (a tick over 4.29 s) is stored smaller: later, never early.
  const int64_t early = TickNs(expires) - deadline_ns;
  entry->early_ns_ =
      static_cast<uint32_t>(std::clamp<int64_t>(early, 0, UINT32_MAX));
  if (LinkTick(entry) <= now_) {
    // Its release tick is processed: due within the tick being waited for,
    // or already (a deadline at or before processed() is always one of
    // these, its tick being at most now_). Held.
    InsertHeldLocked(entry);
  } else {
    LinkLocked(entry);
  }
  return FinishArmLocked(entry, vacated);
}

bool TimingWheel::Cancel(WheelEntry* entry, bool* plan_later) {
  MutexLock lock(&mu_);
  if (entry->level_ == WheelEntry::kIdle) {
    if (plan_later != nullptr) *plan_later = false;
    return false;
  }
  const int64_t vacated = EventNsOfLocked(entry);
  UnlinkLocked(entry);
  --size_;
  const bool later = ReplanLaterLocked(vacated);
  if (plan_later != nullptr) *plan_later = later;
  return true;
}

bool TimingWheel::ReplanLaterLocked(int64_t vacated) {
  // Only the planned event's last entry moves the plan: others cost a
  // compare. (A plan already processed matches no armed entry.)
  if (vacated != planned_wake_ || vacated == kNoWake) return false;
  const int64_t next = NextEventNsLocked();
  if (next == planned_wake_) return false;  // others share the tick
  SetPlanLocked(next);
  return true;
}

bool TimingWheel::IsArmed(const WheelEntry* entry) const {
  MutexLock lock(&mu_);
  return entry->level_ != WheelEntry::kIdle;
}

Tick TimingWheel::NextEventTickLocked(Tick* work_tick) const {
  Tick best = kNoTick;
  // Work wheel: the first non-empty list after now, cyclically. Everything in
  // it expires in (now, now + 1024), at a distinct tick per list, so
  // distance == delay.
  const uint64_t start = (now_ + 1) & kWorkListMask;
  const int start_word = static_cast<int>(start >> 6);
  const int start_bit = static_cast<int>(start & 63);
  for (int i = 0; i <= kWorkWords; ++i) {
    const int w = (start_word + i) % kWorkWords;
    uint64_t bits = work_bits_[w];
    if (i == 0) bits &= ~uint64_t{0} << start_bit;         // at/after start
    if (i == kWorkWords) bits &= ~(~uint64_t{0} << start_bit);  // wrapped
    if (bits != 0) {
      const uint64_t slot = static_cast<uint64_t>(w) * 64 + __builtin_ctzll(bits);
      best = now_ + 1 + ((slot - start) & kWorkListMask);
      break;
    }
  }
  if (work_tick != nullptr) {
    *work_tick = best;
    best = kNoTick;  // the caller wants the other events apart
  }
  // The cascade in progress must be finished at its boundary.
  if (assistant_size_[pending_list_] != 0) {
    best = std::min(best, pending_boundary_);
  }
  // Assistant wheel: the first visit after now of a non-empty slot.
  if (assistant_bits_ != 0) {
    const Tick next_boundary = (RevolutionOf(now_) + 1) << kWorkWheelBits;
    const int first =
        static_cast<int>(RevolutionOf(next_boundary) & kAssistantMask);
    const int dist = CyclicDistance64(assistant_bits_, first);
    best = std::min(best, next_boundary + static_cast<Tick>(dist) * kWorkWheelSpan);
  }
  return best;
}

int64_t TimingWheel::WorkTickEventNsLocked(Tick tick) const {
  // Only exact deadlines between `tick` and the next (early_ns_ != 0)
  // wait in this list: then the earliest of them, not the tick itself, is
  // when a driver must be awake (processing the tick then releases them
  // all), which saves the tick thread a wake-up per call of, e.g., a 5 ms
  // periodic timer. Any entry due on the tick, or a long list, makes it
  // the tick (earlier is always safe).
  const WheelEntry* head = &work_[tick & kWorkListMask].head;
  int64_t best = kNoWake;
  int scanned = 0;
  for (const WheelEntry* e = head->next_; e != head; e = e->next_) {
    if (e->early_ns_ == 0 || ++scanned > kExactScanLimit) return TickNs(tick);
    best = std::min(best, HeldDeadlineNs(e));
  }
  return best == kNoWake ? TickNs(tick) : best;
}

Tick TimingWheel::NextEventTick() const {
  MutexLock lock(&mu_);
  return NextEventTickLocked();
}

int64_t TimingWheel::NextEventNsLocked() const {
  Tick work = kNoTick;
  const Tick other = NextEventTickLocked(&work);
  int64_t event = TickNs(other);
  if (work != kNoTick) event = std::min(event, WorkTickEventNsLocked(work));
  const WheelEntry* first = held_.head.next_;
  if (first == &held_.head) return event;
  return std::min(event, HeldDeadlineNs(first));
}

Instant TimingWheel::NextEvent() const {
  MutexLock lock(&mu_);
  return NsToInstant(NextEventNsLocked());
}

Instant TimingWheel::PlanWake() {
  MutexLock lock(&mu_);
  SetPlanLocked(NextEventNsLocked());
  return NsToInstant(planned_wake_);
}

Instant TimingWheel::planned_wake() const {
  // Published under mu_ with every change of the plan; read without it.
  return NsToInstant(published_plan_.load(std::memory_order_acquire));
}

void TimingWheel::StartCascadeLocked(Tick boundary) {
  ACHECK(assistant_size_[pending_list_] == 0)
      << "wheel invariant: cascade for tick " << pending_boundary_
      << " unfinished at tick " << now_;
  // Swap the slot's list with the empty pending list: the slot starts empty
  // (entries armed for it from now on are whole rounds away, because its
  // revolution goes straight to the work wheel), the detached entries keep
  // their list index, which now names the pending list.
  const uint64_t slot = RevolutionOf(boundary) & kAssistantMask;
  const uint8_t detached = list_of_slot_[slot];
  list_of_slot_[slot] = pending_list_;
  slot_of_list_[pending_list_] = static_cast<uint8_t>(slot);
  slot_of_list_[detached] = kNoSlot;
  pending_list_ = detached;
  assistant_bits_ &= ~(uint64_t{1} << slot);
  pending_boundary_ = boundary;
}

uint64_t TimingWheel::CascadePendingLocked(uint64_t budget) {
  // Each entry expires in the revolution of pending_boundary_ (to the work
  // wheel) or whole rounds later (back to its assistant slot, whose list is
  // not this one: visited once). LinkLocked picks the level.
  WheelEntry* head = &assistant_[pending_list_].head;
  uint64_t moved = 0;
  while (moved < budget && head->next_ != head) {
    WheelEntry* e = head->next_;
    __builtin_prefetch(e->next_);  // the walk is a pointer chase: hide the miss
    UnlinkLocked(e);
    LinkLocked(e);
    ++moved;
  }
  return moved;
}

void TimingWheel::CascadeStepLocked() {
  uint64_t moved = 0;
  if ((now_ & kWorkMask) == 0) {
    // A boundary: its cascade must be complete before its expiries. Started
    // earlier in the last revolution if a tick was processed there.
    if (pending_boundary_ != now_) StartCascadeLocked(now_);
    moved += CascadePendingLocked(~uint64_t{0});
  }
  // This tick's share of the next boundary's cascade.
  const Tick next_boundary = (RevolutionOf(now_) + 1) << kWorkWheelBits;
  if (pending_boundary_ != next_boundary) StartCascadeLocked(next_boundary);
  const uint64_t left = assistant_size_[pending_list_];
  if (left != 0) {
    const uint64_t ticks = next_boundary - now_;  // 1..512, this one included
    moved += CascadePendingLocked((left + ticks - 1) / ticks + kCascadeSlack);
  }
  cascade_stats_.moved += moved;
  cascade_stats_.max_per_tick = std::max(cascade_stats_.max_per_tick, moved);
}

void TimingWheel::ExpireWorkSlotLocked(uint64_t slot, ExpiredFn on_expired) {
  WheelEntry* head = &work_[slot].head;
  WheelEntry* e = head->next_;
  if (e == head) return;
  // Detach the whole list first: `on_expired` may not touch the wheel, but
  // the owner may re-arm the entry as soon as the lock is released, and by
  // then every entry must be idle.
  head->next_ = head->prev_ = head;
  work_bits_[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
  while (e != head) {
    WheelEntry* next = e->next_;
    __builtin_prefetch(next);
    // Each work list holds one tick of this revolution or the next.
    ACHECK(LinkTick(e) == now_) << "wheel invariant: entry for tick "
                                 << LinkTick(e) << " in list of tick " << now_;
    if (e->early_ns_ != 0) {
      // An exact deadline within the next tick: held, and expired from
      // there (AdvanceLocked) if already due, so that it comes after this
      // tick's entries and in deadline order among the held ones.
      InsertHeldLocked(e);
    } else {
      e->prev_ = e->next_ = nullptr;
      e->level_ = WheelEntry::kIdle;
      --size_;
      on_expired(e);
    }
    e = next;
  }
}

void TimingWheel::AdvanceTo(Tick to, ExpiredFn on_expired) {
  // The tick's instant in whole ns, rounded down (integer arithmetic when
  // the tick is whole nanoseconds: no Duration multiplication per call).
  const int64_t to_ns =
      to <= fast_tick_limit_ ? static_cast<int64_t>(to) * tick_ns_
      : to == kNoTick        ? kNoWake - 1
                             : FloorNanoseconds(tick_ * static_cast<int64_t>(to));
  MutexLock lock(&mu_);
  AdvanceLocked(to, to_ns, on_expired);
}

void TimingWheel::AdvanceToInstant(Instant now, ExpiredFn on_expired) {
  const Tick to = InstantToTick(now);
  const int64_t now_ns = now.IsInfiniteFuture()
                             ? kNoWake - 1
                             : FloorNanoseconds(now - epoch_);
  MutexLock lock(&mu_);
  AdvanceLocked(to, now_ns, on_expired);
}

void TimingWheel::AdvanceLocked(Tick to, int64_t now_ns, ExpiredFn on_expired) {
  WheelEntry* const held = &held_.head;
  while (true) {
    const Tick next = NextEventTickLocked();
    const bool tick_due = next != kNoTick && next <= to;
    // A held deadline that has come, before the next tick if that is due
    // too: in time order.
    WheelEntry* first = held->next_;
    if (first != held && HeldDeadlineNs(first) <= now_ns &&
        (!tick_due || HeldDeadlineNs(first) <= TickNs(next))) {
      UnlinkLocked(first);
      --size_;
      on_expired(first);
      continue;
    }
    if (!tick_due) break;
    now_ = next;
    CascadeStepLocked();
    ExpireWorkSlotLocked(now_ & kWorkListMask, on_expired);
  }
  if (to > now_) now_ = to;
  if (now_ns > processed_ns_) processed_ns_ = now_ns;
}

Tick TimingWheel::now() const {
  MutexLock lock(&mu_);
  return now_;
}

Instant TimingWheel::processed() const {
  MutexLock lock(&mu_);
  return NsToInstant(processed_ns_);
}

size_t TimingWheel::size() const {
  MutexLock lock(&mu_);
  return size_;
}

TimingWheel::CascadeStats TimingWheel::cascade_stats() const {
  MutexLock lock(&mu_);
  return cascade_stats_;
}

}  // namespace timer
}  // namespace cyber
