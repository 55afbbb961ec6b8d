// WheelModel: the obviously-correct reference for TimingWheel, used by the
// property tests (timer/timing_wheel_test.cc) and the wheel fuzzer
// (tests/fuzz/wheel_fuzzer.cc) to check the wheel's every expiry.
//
// It keeps armed entries in an ordered map keyed by (event instant, arm
// order) and expires them by walking the map: no slots, no cascades, no
// bitmaps, no held list, O(log n) per operation, which is fine for a model.
// Time is whole nanoseconds since the wheel's epoch; tick t is at
// t * tick_ns. It mirrors the wheel's documented rules exactly
// (timer/timing_wheel.h):
//   - Arm(tick): an expiry at or before the last processed tick is clamped
//     to now + 1; the entry expires at the first advance whose tick reaches
//     it (its event instant is that tick's);
//   - ArmExact(deadline): the entry expires at the first advance whose
//     instant is at or after the deadline (AdvanceTo(tick) counts as the
//     tick's instant); a deadline before the epoch is as good as the epoch
//     (DeadlineToTick maps it to tick 0); its expiry tick is the first tick
//     at or after the deadline, not clamped;
//   - a re-arm replaces the previous arming;
//   - AdvanceTo(to) / AdvanceToInstant(t): now() becomes max(now(), tick),
//     processed() max(processed(), instant); everything whose event instant
//     is at or before the instant expires, in time order.
// (The wheel leaves the order among entries of one instant unspecified; the
// model uses arming order, and comparisons sort within an instant.)
//
// Single-threaded; ids are small non-negative integers chosen by the caller.

#ifndef TESTS_REFERENCE_WHEEL_MODEL_H_
#define TESTS_REFERENCE_WHEEL_MODEL_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cyber {
namespace reference {

class WheelModel {
 public:
  using Tick = uint64_t;
  struct Fire {
    int id;
    Tick tick;        // the entry's expiry tick (WheelEntry::expires())
    int64_t at = 0;   // its event instant, ns since the epoch (not compared)
    friend bool operator==(const Fire& a, const Fire& b) {
      return a.id == b.id && a.tick == b.tick;
    }
  };

  // `tick_ns`: the wheel's tick in nanoseconds (2 ms by default).
  explicit WheelModel(int64_t tick_ns = 2000000) : tick_ns_(tick_ns) {}

  // Returns the expiry tick actually used.
  Tick Arm(int id, Tick expires) {
    Cancel(id);
    if (expires <= now_) expires = now_ + 1;
    Insert(id, expires, static_cast<int64_t>(expires) * tick_ns_, false);
    return expires;
  }

  // An exact arming for `deadline_ns` (ns since the epoch, negative: before
  // it). Returns the expiry tick the wheel reports: the first tick at or
  // after the deadline.
  Tick ArmExact(int id, int64_t deadline_ns) {
    Cancel(id);
    const int64_t at = std::max<int64_t>(0, deadline_ns);
    const Tick expires = CeilTick(at);
    Insert(id, expires, at, true);
    return expires;
  }

  bool Cancel(int id) {
    auto it = index_.find(id);
    if (it == index_.end()) return false;
    armed_.erase(it->second);
    index_.erase(it);
    return true;
  }

  bool IsArmed(int id) const { return index_.count(id) != 0; }

  // Expires everything due at or before tick `to` (its instant), in
  // (instant, arming) order.
  std::vector<Fire> AdvanceTo(Tick to) {
    return Advance(to, static_cast<int64_t>(to) * tick_ns_);
  }
  // Expires everything due at or before `now_ns`.
  std::vector<Fire> AdvanceToInstant(int64_t now_ns) {
    return Advance(now_ns <= 0 ? 0 : static_cast<Tick>(now_ns / tick_ns_), now_ns);
  }

  // Earliest armed expiry tick, or ~0 when empty.
  Tick NextExpiry() const {
    Tick best = ~Tick{0};
    for (const auto& a : armed_) best = std::min(best, a.second.expires);
    return best;
  }
  // Earliest event instant (ns since the epoch), or INT64_MAX when empty.
  int64_t NextEventNs() const {
    return armed_.empty() ? INT64_MAX : armed_.begin()->first.first;
  }
  // The event instant of armed entry `id`. REQUIRES: IsArmed(id).
  int64_t EventNs(int id) const { return index_.at(id).first; }
  // Whether armed entry `id` is exact with a deadline strictly between two
  // ticks, and then the tick before its deadline.
  bool BetweenTicks(int id, Tick* tick_before) const {
    const Key& key = index_.at(id);
    const Entry& e = armed_.at(key);
    if (!e.exact || key.first % tick_ns_ == 0) return false;
    *tick_before = static_cast<Tick>(key.first / tick_ns_);
    return true;
  }
  Tick now() const { return now_; }
  int64_t processed_ns() const { return processed_ns_; }
  size_t size() const { return armed_.size(); }
  int64_t tick_ns() const { return tick_ns_; }

 private:
  using Key = std::pair<int64_t, uint64_t>;  // (event instant, arming order)
  struct Entry {
    int id;
    Tick expires;
    bool exact;
  };

  Tick CeilTick(int64_t ns) const {
    return static_cast<Tick>(ns / tick_ns_ + (ns % tick_ns_ != 0 ? 1 : 0));
  }
  void Insert(int id, Tick expires, int64_t at, bool exact) {
    const Key key{at, next_order_++};
    armed_.emplace(key, Entry{id, expires, exact});
    index_[id] = key;
  }
  std::vector<Fire> Advance(Tick to, int64_t now_ns) {
    std::vector<Fire> fired;
    while (!armed_.empty() && armed_.begin()->first.first <= now_ns) {
      auto it = armed_.begin();
      fired.push_back({it->second.id, it->second.expires, it->first.first});
      index_.erase(it->second.id);
      armed_.erase(it);
    }
    if (to > now_) now_ = to;
    if (now_ns > processed_ns_) processed_ns_ = now_ns;
    return fired;
  }

  const int64_t tick_ns_;
  Tick now_ = 0;
  int64_t processed_ns_ = 0;
  uint64_t next_order_ = 0;
  std::map<Key, Entry> armed_;
  std::unordered_map<int, Key> index_;
};

}  // namespace reference
}  // namespace cyber

#endif  // TESTS_REFERENCE_WHEEL_MODEL_H_
