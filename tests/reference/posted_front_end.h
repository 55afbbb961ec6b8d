// PostedFrontEnd: the cheapest thread-safe front end we know how to put on a
// wheel owned by one thread, measured over FloorWheel (floor_wheel.h) by
// //timer:timing_wheel_benchmark (BM_Posted_*). It is a benchmark helper,
// not production code.
//
// Why it exists. TimingWheel takes a mutex on every Arm, Cancel and re-arm.
// The alternative (Netty's HashedWheelTimer) makes the wheel the tick
// thread's alone: other threads flip an atomic state word on the timer and
// post it to a lock-free queue, and the tick thread drains the queue at the
// start of each pass and applies the commands to the wheel. Before anyone
// writes that for real, this file says what it can cost at best: one atomic
// read-modify-write on the state word and one atomic exchange on the queue
// per operation for the caller, one pop and one atomic read-modify-write per
// command for the tick thread, over the fastest wheel we have. A production
// version can only add to that (callbacks, exact deadlines, waking a tickless
// tick thread when an earlier deadline is posted, expiry racing a re-arm).
//
// Design.
//   - PostedEntry embeds the queue link, the state word, the requested
//     expiry and the FloorEntry, so posting never allocates.
//   - The state word holds kArmed (the state Cancel answers from, exactly:
//     the caller's view, not the wheel's), kQueued (the entry is in the
//     queue, or about to be: a second command finds it set and does not push
//     again; the tick thread applies whatever the word and the requested
//     expiry say when it pops the entry, so the last command wins) and a
//     sequence bumped by every command. The sequence is for the expiry path
//     this helper leaves out: a tick thread firing an entry would move the
//     word from the (armed, sequence) it applied to idle by compare-exchange,
//     and so lose cleanly to a re-arm or cancel posted meanwhile.
//   - The queue is Dmitry Vyukov's intrusive multi-producer single-consumer
//     queue: a push is one atomic exchange on the tail plus one release store
//     of the old tail's link; a pop is loads and plain stores, with one
//     exchange (re-pushing the stub node) only when the queue runs down to
//     its last node. It is not linearizable: while a producer is between its
//     exchange and its link store, the consumer sees the queue end there and
//     picks up the rest at its next drain.
//
// Memory order. Every change of a state word is an acq_rel read-modify-
// write, so each one happens after the one it read. A producer writes the
// requested expiry (relaxed) before its compare-exchange; the consumer's
// fetch_and clearing kQueued comes after its pop, so it reads an expiry at
// least as new as the word it read (a newer one only if a newer command is
// queued behind it, which re-applies it). The consumer is done with an
// entry's link before it clears kQueued, and a producer pushes only an entry
// it found not queued, after that fetch_and: a node is never in the queue
// twice, and its link is reset only once the consumer is done with it.
//
// Threads: Arm and Cancel from any thread. Commands on one entry from two
// threads at once are safe (the entry ends in the state of the last to
// change its word), but which of two concurrent Arms' expiries it keeps is
// unspecified. Drain and wheel() from one thread only, the consumer. An
// entry is destroyed only when idle and drained (Cancel it, then Drain).
//
// Example (one thread playing both parts):
//
//   PostedFrontEnd front;
//   PostedEntry e;
//   front.Arm(&e, 3);         // false: it was idle
//   front.Cancel(&e);         // true: it was armed
//   front.Arm(&e, 5);         // false: the cancel made it idle
//   front.Drain();            // 1: applies the last word, Arm(&e.floor, 5)
//   // front.wheel().size() == 1, e.floor.expires() == 5

#ifndef TESTS_REFERENCE_POSTED_FRONT_END_H_
#define TESTS_REFERENCE_POSTED_FRONT_END_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tests/reference/floor_wheel.h"

namespace cyber {
namespace reference {

// The link of Vyukov's intrusive MPSC queue.
struct MpscNode {
  std::atomic<MpscNode*> next{nullptr};
};

// Vyukov's intrusive multi-producer single-consumer queue (FIFO).
// Push from any thread; Pop from one thread only. A node is pushed again only
// after Pop has returned it (the caller's job: PostedFrontEnd's kQueued).
class MpscQueue {
 public:
  MpscQueue() = default;
  MpscQueue(const MpscQueue&) = delete;
  MpscQueue& operator=(const MpscQueue&) = delete;

  void Push(MpscNode* node) {
    node->next.store(nullptr, std::memory_order_relaxed);
    // acq_rel: release publishes `node` (and what its producer wrote before)
    // to the next producer, which links after it; acquire pairs with the
    // previous producer's, whose node we link `node` after.
    MpscNode* const prev = tail_.exchange(node, std::memory_order_acq_rel);
    prev->next.store(node, std::memory_order_release);
  }

  // The oldest node, or nullptr if the queue is empty or its oldest node's
  // successor is still being linked by a producer. REQUIRES: the consumer.
  MpscNode* Pop() {
    MpscNode* head = head_;
    MpscNode* next = head->next.load(std::memory_order_acquire);
    if (head == &stub_) {
      if (next == nullptr) return nullptr;
      head_ = next;
      head = next;
      next = next->next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
      head_ = next;
      return head;
    }
    // `head` is the last linked node. Unless a producer is mid-push behind
    // it, put the stub behind it so that it can leave.
    if (head != tail_.load(std::memory_order_acquire)) return nullptr;
    Push(&stub_);
    next = head->next.load(std::memory_order_acquire);
    if (next != nullptr) {
      head_ = next;
      return head;
    }
    return nullptr;
  }

 private:
  // Producers' end and consumer's end on separate cache lines.
  alignas(64) std::atomic<MpscNode*> tail_{&stub_};
  alignas(64) MpscNode* head_ = &stub_;  // the consumer's alone
  MpscNode stub_;
};

// A timed object's part of the front end. Idle (never armed, or cancelled
// and drained) when constructed and when destroyed.
struct PostedEntry : MpscNode {
  using Tick = FloorEntry::Tick;
  std::atomic<uint32_t> state{0};    // PostedFrontEnd::k* bits and sequence
  std::atomic<Tick> requested{0};    // the expiry of the last Arm
  FloorEntry floor;                  // the consumer's alone
};

class PostedFrontEnd {
 public:
  using Tick = FloorEntry::Tick;

  // State word: two flags and a sequence in the remaining 30 bits (it wraps;
  // only its change matters).
  static constexpr uint32_t kArmed = 1u << 0;
  static constexpr uint32_t kQueued = 1u << 1;
  static constexpr uint32_t kSequenceOne = 1u << 2;

  PostedFrontEnd() = default;
  PostedFrontEnd(const PostedFrontEnd&) = delete;
  PostedFrontEnd& operator=(const PostedFrontEnd&) = delete;

  // Arms `entry` for `expires` (clamped to the wheel's now() + 1 when
  // applied), moving it if it is armed. Returns whether it was armed. Any
  // thread.
  bool Arm(PostedEntry* entry, Tick expires) {
    entry->requested.store(expires, std::memory_order_relaxed);
    uint32_t s = entry->state.load(std::memory_order_relaxed);
    while (!entry->state.compare_exchange_weak(
        s, (s + kSequenceOne) | kArmed | kQueued, std::memory_order_acq_rel,
        std::memory_order_relaxed)) {
    }
    if ((s & kQueued) == 0) queue_.Push(entry);
    return (s & kArmed) != 0;
  }

  // Disarms `entry`; returns whether it was armed by the last command. Any
  // thread. Nothing here expires an entry (the wheel is never advanced:
  // a tick thread firing it would clear kArmed, see the sequence above).
  bool Cancel(PostedEntry* entry) {
    uint32_t s = entry->state.load(std::memory_order_relaxed);
    do {
      if ((s & kArmed) == 0) return false;
    } while (!entry->state.compare_exchange_weak(
        s, ((s + kSequenceOne) & ~kArmed) | kQueued,
        std::memory_order_acq_rel, std::memory_order_relaxed));
    if ((s & kQueued) == 0) queue_.Push(entry);
    return true;
  }

  // Applies every posted command that is fully linked to the wheel; returns
  // how many entries it applied. It runs until the queue is empty, so
  // producers that keep posting keep it going (a tick thread would bound
  // it per pass). REQUIRES: the consumer.
  size_t Drain() {
    size_t applied = 0;
    while (MpscNode* const node = queue_.Pop()) {
      PostedEntry* const entry = static_cast<PostedEntry*>(node);
      const uint32_t s =
          entry->state.fetch_and(~kQueued, std::memory_order_acq_rel);
      if ((s & kArmed) != 0) {
        wheel_.Arm(&entry->floor,
                   entry->requested.load(std::memory_order_relaxed));
      } else {
        wheel_.Cancel(&entry->floor);
      }
      ++applied;
    }
    return applied;
  }

  // REQUIRES: the consumer.
  FloorWheel& wheel() { return wheel_; }

 private:
  MpscQueue queue_;
  FloorWheel wheel_;
};

}  // namespace reference
}  // namespace cyber

#endif  // TESTS_REFERENCE_POSTED_FRONT_END_H_
