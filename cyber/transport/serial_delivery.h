// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// SerialDelivery<T>: items handed to a handler strictly one at a time and
// in the order they were added, by one routine at a time on a scheduler
// (folly's SerialExecutor: "strictly non-concurrently and in the order
// they were added"). A Reader delivers its messages with one, a Service
// serves its requests with one, a Client runs its AsyncCall callbacks with
// one.
//
// Why one type: the rules below are easy to get almost right (a drain lost
// between "queue empty" and "in flight", a stop that returns while the
// handler still runs, a drain the scheduler drops without running it, a
// routine cancelled halfway); here they are written once.
//
// How it runs:
//  * Add() queues the item and, if no drain routine is in flight,
//    dispatches one on the route given. The drain hands items to the
//    handler until the queue is empty, then ends; what is added meanwhile
//    it picks up. So the handler never runs concurrently with itself, and
//    items go in Add() order (concurrent Add()s: the order they took the
//    lock).
//  * A bounded queue (Options::capacity) drops its oldest item when full.
//  * A drain yields its processor (CRoutine::Yield) every
//    Options::items_per_slice items, so one busy queue does not starve the
//    other routines of its processor group.
//  * A dispatch the scheduler refuses (max_routines reached, shut down) is
//    counted and logged (every 100th, naming Options::name); the items
//    stay queued and the next Add() tries again. A drain the scheduler
//    drops without running it (queued when it shut down) is noticed the
//    same way.
//  * A handler that throws is caught, logged (naming Options::name) and
//    counted, and delivery goes on with the next item. RoutineCancelled
//    (the scheduler is stopping) and Boost's forced unwinding pass
//    through: the drain ends, items not yet handed over stay queued, and
//    the queue can drain again.
//  * Nothing is lost silently:
//      added == delivered + dropped_overflow + dropped_stopped + pending.
//
// Stopping. Close() refuses items from then on (counted as
// dropped_stopped) and takes the queued ones (counted so too; destroyed, or
// handed to the caller, outside the lock). AwaitIdle() returns once the
// handler is not running, and at once when called from the handler itself
// (which then finishes normally; nothing follows it). A routine that waits
// parks (its processor runs other routines meanwhile, the handler it waits
// for among them); a thread blocks. Stop() is both: when it returns, the
// handler is not running and will not run again. Two handlers must not
// stop each other's queues (each would wait for the other), unless they
// tell each other apart: AwaitIdleExcept(skip) does not wait for a handler
// running in a routine `skip` accepts, and RecheckWaiters() makes such
// waiters ask `skip` again (Node::Shutdown() from two of the node's
// callbacks at once, cyber/transport/node_endpoint.h).
//
// Lifetime: Add() takes the object the handler belongs to (`owner`), which
// is kept alive while a drain is queued or running; a SerialDelivery lives
// inside it.
//
// Cost: an item takes a slot of a ring that never shrinks (no allocation
// once it has grown to the deepest queue so far); a drain, one small
// allocation (its ticket, which notices a drain dropped unrun), paid once
// per burst of items.
//
// Threads: every method from any thread or routine, the handler included.
// The handler runs under no lock of this type.

#ifndef CYBER_TRANSPORT_SERIAL_DELIVERY_H_
#define CYBER_TRANSPORT_SERIAL_DELIVERY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "cyber/common/mutex.h"
#include "cyber/time/wait_list.h"
#include "scheduler/croutine.h"
#include "scheduler/ring_queue.h"
#include "scheduler/scheduler.h"
#include "timer/dispatcher.h"  // timer::Route

namespace cyber {
namespace transport_internal {

struct SerialDeliveryStats {
  uint64_t added = 0;             // Add() calls, refused ones included
  uint64_t delivered = 0;         // items handed to the handler
  uint64_t dropped_overflow = 0;  // oldest queued item dropped: queue full
  uint64_t dropped_stopped = 0;   // queued at Close(), or added after it
  uint64_t dispatch_refusals = 0;   // drain routines the scheduler refused
  uint64_t handler_exceptions = 0;  // handler calls that threw
  size_t pending = 0;               // queued now, not yet handed over
};

// What does not depend on the item type (serial_delivery.cc).
class SerialDeliveryBase {
 public:
  struct Options {
    // Who delivers, opening its log lines, e.g.
    // `node "n": reader on channel "c"`.
    std::string name;
    // The handler, as its exception's log line names it ("callback").
    std::string handler = "callback";
    // The drain routine, as a refusal's log line names it ("delivery").
    std::string routine = "delivery";
    // REQUIRES: outlives the SerialDelivery's last drain (its owner keeps
    // it alive).
    scheduler::Scheduler* scheduler = nullptr;
    timer::Route route;
    // The most items queued (the oldest is dropped for a new one); 0: no
    // bound.
    size_t capacity = 0;
    // Items a drain hands over before it yields its processor.
    int items_per_slice = 32;
  };

  SerialDeliveryBase(const SerialDeliveryBase&) = delete;
  SerialDeliveryBase& operator=(const SerialDeliveryBase&) = delete;

  // Waits until the handler is not running, unless called from it (see the
  // header comment).
  void AwaitIdle();
  // AwaitIdle(), except that a handler running in a routine for which
  // `skip` is true is not waited for. `skip` is asked under this delivery's
  // lock (it must not call into it), at first and after each wake-up.
  void AwaitIdleExcept(absl::FunctionRef<bool(const scheduler::CRoutine*)> skip);
  // Wakes the AwaitIdleExcept() waiters, so that they ask `skip` again.
  void RecheckWaiters();
  // Whether the handler is running in `routine` now.
  bool RunsHandlerIn(const scheduler::CRoutine* routine) const;
  // Close() was called.
  bool stopped() const;
  SerialDeliveryStats stats() const;
  const Options& options() const { return options_; }

 protected:
  explicit SerialDeliveryBase(Options options);
  virtual ~SerialDeliveryBase();

  // Hands the queue to the handler until it is empty (the drain routine).
  virtual void Drain() = 0;

  // Marks a drain in flight unless one is; true: the caller dispatches it
  // (ScheduleDrain) with `*generation`.
  bool StartDrainLocked(uint64_t* generation) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Dispatches the drain of `generation`, `owner` kept alive with it.
  void ScheduleDrain(uint64_t generation, std::shared_ptr<const void> owner);
  // The drain of `generation` will not run (refused or dropped): the next
  // Add() dispatches a new one.
  void ReleaseDrain(uint64_t generation);
  // The handler's call is over (it threw: `threw`): waiters may go on.
  void EndRunLocked(bool threw) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `handler` (user code); false if it threw (logged here).
  // RoutineCancelled and forced unwinding pass through.
  bool Invoke(absl::FunctionRef<void()> handler);

  // Resets the drain's state if the routine unwinds (cancelled at a
  // suspension point in the handler or in the drain's Yield): the queue
  // can drain again, and waiters go on.
  class DrainScope {
   public:
    explicit DrainScope(SerialDeliveryBase* delivery) : delivery_(delivery) {}
    ~DrainScope();
    DrainScope(const DrainScope&) = delete;
    DrainScope& operator=(const DrainScope&) = delete;
    // The drain ends normally (its state is reset under the lock already).
    void Finish() { finished_ = true; }

   private:
    SerialDeliveryBase* const delivery_;
    bool finished_ = false;
  };

  const Options options_;

  // mu_ protects the following state (and the derived class's queue).
  mutable Mutex mu_;
  // Woken when running_ turns false: AwaitIdle() waits here.
  WaitList idle_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  // A drain routine is dispatched and has not finished.
  bool in_flight_ ABSL_GUARDED_BY(mu_) = false;
  // Numbers the drains, so a late ReleaseDrain cannot clear a newer one.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  // The handler is running, in routine `running_routine_`.
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  const scheduler::CRoutine* running_routine_ ABSL_GUARDED_BY(mu_) = nullptr;
  SerialDeliveryStats stats_ ABSL_GUARDED_BY(mu_);

 private:
  struct DrainTicket;  // serial_delivery.cc
};

template <typename T>
class SerialDelivery final : public SerialDeliveryBase {
 public:
  // Runs on one item (user code; it may suspend). REQUIRES of T: default
  // constructible and movable.
  using Handler = std::function<void(T& item)>;

  SerialDelivery(Options options, Handler handler)
      : SerialDeliveryBase(std::move(options)), handler_(std::move(handler)) {}
  // Items still queued are destroyed.
  ~SerialDelivery() override = default;

  // Queues `item` (see the header comment); `owner` is kept alive while a
  // drain is queued or running. False, and `item` destroyed (counted as
  // dropped_stopped), after Close().
  bool Add(T item, const std::shared_ptr<const void>& owner);
  // Refuses items from now on; the queued ones are destroyed, or moved into
  // `*dropped` if given, outside the lock. Idempotent. Does not wait.
  void Close(std::vector<T>* dropped = nullptr);
  // Close() and AwaitIdle().
  void Stop() {
    Close();
    AwaitIdle();
  }
  // Close() and AwaitIdleExcept(skip).
  void StopExcept(absl::FunctionRef<bool(const scheduler::CRoutine*)> skip) {
    Close();
    AwaitIdleExcept(skip);
  }

 private:
  void Drain() override;

  const Handler handler_;
  scheduler::RingQueue<T> queue_ ABSL_GUARDED_BY(mu_);
};

// --- implementation of the template ---------------------------------------

template <typename T>
bool SerialDelivery<T>::Add(T item, const std::shared_ptr<const void>& owner) {
  [[maybe_unused]] T overflow;  // the dropped oldest item, destroyed after the lock
  uint64_t generation = 0;
  {
    MutexLock lock(&mu_);
    ++stats_.added;
    if (stopped_) {
      ++stats_.dropped_stopped;
      return false;  // `item` is destroyed after the lock
    }
    if (options_.capacity != 0 && queue_.size() >= options_.capacity) {
      overflow = queue_.pop_front();
      ++stats_.dropped_overflow;
      --stats_.pending;
    }
    queue_.push_back(std::move(item));
    ++stats_.pending;
    if (!StartDrainLocked(&generation)) return true;  // the drain picks it up
  }
  ScheduleDrain(generation, owner);
  return true;
}

template <typename T>
void SerialDelivery<T>::Close(std::vector<T>* dropped) {
  scheduler::RingQueue<T> left;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    stats_.dropped_stopped += queue_.size();
    stats_.pending = 0;
    left = std::move(queue_);
  }
  while (!left.empty()) {
    T item = left.pop_front();
    if (dropped != nullptr) dropped->push_back(std::move(item));
  }
}

template <typename T>
void SerialDelivery<T>::Drain() {
  const scheduler::CRoutine* const self = scheduler::CRoutine::Current();
  DrainScope scope(this);
  int in_slice = 0;
  bool threw = false;
  for (;;) {
    // Declared in the loop: the item is released before the next one is
    // taken, while the handler still counts as running.
    T item;
    bool yield = false;
    {
      MutexLock lock(&mu_);
      EndRunLocked(threw);
      threw = false;
      if (stopped_ || queue_.empty()) {
        in_flight_ = false;
        scope.Finish();
        return;
      }
      if (in_slice == options_.items_per_slice) {
        yield = true;
      } else {
        item = queue_.pop_front();
        --stats_.pending;
        ++stats_.delivered;
        running_ = true;
        running_routine_ = self;
      }
    }
    if (yield) {
      in_slice = 0;
      scheduler::CRoutine::Yield();
      continue;
    }
    threw = !Invoke([this, &item] { handler_(item); });
    ++in_slice;
  }
}

}  // namespace transport_internal
}  // namespace cyber

#endif  // CYBER_TRANSPORT_SERIAL_DELIVERY_H_
