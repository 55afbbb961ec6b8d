// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// RingQueue: a FIFO on a circular buffer that grows by doubling and never
// shrinks.
//
// Why not std::deque: a deque used as a FIFO allocates a new block every
// few dozen push_backs and frees one every few dozen pop_fronts, for ever:
// in the steady state of a timer firing 100 times a second that is an
// allocation on the dispatch path. A ring allocates only when the queue
// grows past its deepest point so far.
//
// Threads: none of its own; its owner locks.

#ifndef SCHEDULER_RING_QUEUE_H_
#define SCHEDULER_RING_QUEUE_H_

#include <cstddef>
#include <memory>
#include <utility>

namespace cyber {
namespace scheduler {

template <typename T>
class RingQueue {
 public:
  RingQueue() = default;
  // A moved-from queue is empty and usable.
  RingQueue(RingQueue&& other) noexcept { *this = std::move(other); }
  RingQueue& operator=(RingQueue&& other) noexcept {
    if (this != &other) {
      slots_ = std::move(other.slots_);
      capacity_ = std::exchange(other.capacity_, 0);
      head_ = std::exchange(other.head_, 0);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }

  void push_back(T value) {
    if (size_ == capacity_) Grow();
    slots_[(head_ + size_) & (capacity_ - 1)] = std::move(value);
    ++size_;
  }
  // REQUIRES: !empty().
  T pop_front() {
    T value = std::move(slots_[head_]);
    slots_[head_] = T();  // release what the slot held (a shared_ptr) now
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
    return value;
  }
  // REQUIRES: !empty().
  T& front() { return slots_[head_]; }

 private:
  void Grow() {
    const size_t capacity = capacity_ == 0 ? kInitialCapacity : capacity_ * 2;
    std::unique_ptr<T[]> slots(new T[capacity]);
    for (size_t i = 0; i < size_; ++i) {
      slots[i] = std::move(slots_[(head_ + i) & (capacity_ - 1)]);
    }
    slots_ = std::move(slots);
    capacity_ = capacity;
    head_ = 0;
  }

  static constexpr size_t kInitialCapacity = 16;  // a power of two
  static_assert((kInitialCapacity & (kInitialCapacity - 1)) == 0,
                "capacity stays a power of two: index by mask");

  std::unique_ptr<T[]> slots_;
  size_t capacity_ = 0;  // 0 or a power of two
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_RING_QUEUE_H_
