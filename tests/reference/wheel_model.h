// WheelModel: the obviously-correct reference for TimingWheel, used by the
// property tests (and later the fuzzers) to check the wheel's every expiry.
//
// It keeps armed entries in an ordered map keyed by (expiry tick, arm order)
// and expires them by walking the map: no slots, no cascades, no bitmaps,
// O(log n) per operation, which is fine for a model. It mirrors the wheel's
// documented rules exactly: an expiry at or before the current tick is
// clamped to now + 1, a re-arm replaces the previous arming. (The wheel leaves
// the order among entries of one tick unspecified; the model uses arming
// order, and comparisons sort within a tick.)
//
// Single-threaded; ids are small non-negative integers chosen by the caller.

#ifndef TESTS_REFERENCE_WHEEL_MODEL_H_
#define TESTS_REFERENCE_WHEEL_MODEL_H_

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
    Tick tick;
    friend bool operator==(const Fire& a, const Fire& b) {
      return a.id == b.id && a.tick == b.tick;
    }
  };

  // Returns the expiry tick actually used.
  Tick Arm(int id, Tick expires) {
    Cancel(id);
    if (expires <= now_) expires = now_ + 1;
    const Key key{expires, next_order_++};
    armed_.emplace(key, id);
    index_[id] = key;
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

  // Expires everything due at or before `to`, in (tick, arming) order.
  std::vector<Fire> AdvanceTo(Tick to) {
    std::vector<Fire> fired;
    while (!armed_.empty() && armed_.begin()->first.first <= to) {
      auto it = armed_.begin();
      fired.push_back({it->second, it->first.first});
      index_.erase(it->second);
      armed_.erase(it);
    }
    if (to > now_) now_ = to;
    return fired;
  }

  // Earliest armed expiry, or ~0 when empty.
  Tick NextExpiry() const {
    return armed_.empty() ? ~Tick{0} : armed_.begin()->first.first;
  }
  Tick now() const { return now_; }
  size_t size() const { return armed_.size(); }

 private:
  using Key = std::pair<Tick, uint64_t>;  // (expiry tick, arming order)
  Tick now_ = 0;
  uint64_t next_order_ = 0;
  std::map<Key, int> armed_;
  std::unordered_map<int, Key> index_;
};

}  // namespace reference
}  // namespace cyber

#endif  // TESTS_REFERENCE_WHEEL_MODEL_H_
