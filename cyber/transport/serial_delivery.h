// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// SerialDelivery<T>: items handed to a handler strictly one at a time and
// in the order they were added, by one routine at a time on a scheduler
// (folly's SerialExecutor: "strictly non-concurrently and in the order
// they were added"); or, with Options::lanes = N, handed out in that order
// to up to N handler calls at once, each in its own routine. A Reader
// delivers its messages with one, a Service serves its requests with one
// (lanes: its concurrency), a Client runs its AsyncCall callbacks with
// one.
//
// Why one type: the rules below are easy to get almost right (a drain lost
// between "queue empty" and "in flight", a stop that returns while the
// handler still runs, a drain the scheduler drops without running it, a
// routine cancelled halfway); here they are written once.
//
// How it runs:
//  * Add() queues the item and, if no drain routine is free to take it
//    (none in flight, or all in flight busy in the handler) and fewer
//    than Options::lanes are in flight, dispatches one on the route
//    given. A drain hands items to the handler until the queue is empty,
//    then ends; what is added meanwhile it picks up. So with one lane the
//    handler never runs concurrently with itself; with N, at most N calls
//    run at once. Items are taken in Add() order (concurrent Add()s: the
//    order they took the lock).
//  * A bounded queue (Options::capacity), when full, drops its oldest item
//    for the new one (Overflow::kDropOldest), or refuses the new one
//    (Overflow::kRefuseNewest). Offer() hands either back to the caller,
//    who may answer for it.
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
//      added == delivered + dropped_overflow + refused_full +
//               dropped_stopped + pending.
//
// Stopping. Close() refuses items from then on (counted as
// dropped_stopped) and takes the queued ones (counted so too; destroyed, or
// handed to the caller, outside the lock). AwaitIdle() returns once no
// handler call is running, except one in the calling routine itself
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
// per burst of items (per lane).
//
// Threads: every method from any thread or routine, the handler included.
// The handler runs under no lock of this type.

#ifndef CYBER_TRANSPORT_SERIAL_DELIVERY_H_
#define CYBER_TRANSPORT_SERIAL_DELIVERY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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
  uint64_t refused_full = 0;      // new item refused: queue full
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
    // What a full queue does with a new item (see the header comment).
    enum class Overflow { kDropOldest, kRefuseNewest };
    // The most items queued (not counting those being handled); 0: no
    // bound.
    size_t capacity = 0;
    Overflow overflow = Overflow::kDropOldest;
    // The most handler calls at once (>= 1).
    int lanes = 1;
    // Items a drain hands over before it yields its processor.
    int items_per_slice = 32;
  };

  SerialDeliveryBase(const SerialDeliveryBase&) = delete;
  SerialDeliveryBase& operator=(const SerialDeliveryBase&) = delete;

  // What Offer() did with an item.
  enum class Admission { kQueued, kRefusedFull, kStopped };

  // Waits until no handler call is running, except one in the calling
  // routine (see the header comment).
  void AwaitIdle();
  // AwaitIdle(), except that a handler call running in a routine for which
  // `skip` is true is not waited for. `skip` is asked under this delivery's
  // lock (it must not call into it), at first and after each wake-up.
  void AwaitIdleExcept(absl::FunctionRef<bool(const scheduler::CRoutine*)> skip);
  // Wakes the AwaitIdleExcept() waiters, so that they ask `skip` again.
  void RecheckWaiters();
  // Whether a handler call is running in `routine` now.
  bool RunsHandlerIn(const scheduler::CRoutine* routine) const;
  // Handler calls running now.
  int running() const;
  // Close() was called. No lock: a server is asked this on every call.
  bool stopped() const { return closed_.load(std::memory_order_acquire); }
  SerialDeliveryStats stats() const;
  const Options& options() const { return options_; }

 protected:
  explicit SerialDeliveryBase(Options options);
  virtual ~SerialDeliveryBase();

  // Hands the queue to the handler until it is empty (the drain routine of
  // lane `lane`).
  virtual void Drain(int lane) = 0;

  // Starts a drain on a free lane if the queued items need one (see the
  // header comment); true: the caller dispatches it (ScheduleDrain) with
  // `*lane` and `*generation`.
  bool StartDrainLocked(int* lane, uint64_t* generation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Dispatches the drain of `lane` and `generation`, `owner` kept alive
  // with it.
  void ScheduleDrain(int lane, uint64_t generation, std::shared_ptr<const void> owner);
  // The drain of `generation` on `lane` will not run (refused or dropped):
  // the next Add() dispatches a new one.
  void ReleaseDrain(int lane, uint64_t generation);
  // The three below run for every item a drain hands over, so they are
  // defined here, where the compiler can inline them into Drain().
  // `lane`'s handler call is over (it threw: `threw`): waiters may go on.
  void EndRunLocked(int lane, bool threw) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Lane& l = lanes_[static_cast<size_t>(lane)];
    if (!l.running) return;
    l.running = false;
    l.routine = nullptr;
    --running_;
    if (threw) ++stats_.handler_exceptions;
    // Waiters join idle_ under mu_, which we hold: none now, none to wake.
    if (!idle_.empty()) idle_.WakeAll();
  }
  // `lane` takes an item, in routine `self`.
  void BeginRunLocked(int lane, const scheduler::CRoutine* self)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Lane& l = lanes_[static_cast<size_t>(lane)];
    l.running = true;
    l.routine = self;
    ++running_;
  }
  // `lane`'s drain ends (its handler call is over).
  void EndDrainLocked(int lane) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Lane& l = lanes_[static_cast<size_t>(lane)];
    if (!l.in_flight) return;
    l.in_flight = false;
    --in_flight_;
  }
  // Runs `handler` (user code); false if it threw (logged here).
  // RoutineCancelled and forced unwinding pass through.
  bool Invoke(absl::FunctionRef<void()> handler);

  // Resets the lane's state if the routine unwinds (cancelled at a
  // suspension point in the handler or in the drain's Yield): the queue
  // can drain again, and waiters go on.
  class DrainScope {
   public:
    DrainScope(SerialDeliveryBase* delivery, int lane)
        : delivery_(delivery), lane_(lane) {}
    ~DrainScope();
    DrainScope(const DrainScope&) = delete;
    DrainScope& operator=(const DrainScope&) = delete;
    // The drain ends normally (its state is reset under the lock already).
    void Finish() { finished_ = true; }

   private:
    SerialDeliveryBase* const delivery_;
    const int lane_;
    bool finished_ = false;
  };

  // One drain routine's slot.
  struct Lane {
    // A drain routine is dispatched and has not finished.
    bool in_flight = false;
    // The drain's number, so a late ReleaseDrain cannot clear a newer one.
    uint64_t generation = 0;
    // The handler is running, in routine `routine`.
    bool running = false;
    const scheduler::CRoutine* routine = nullptr;
  };

  const Options options_;

  // mu_ protects the following state (and the derived class's queue).
  mutable Mutex mu_;
  // Woken when a handler call ends: AwaitIdle() waits here.
  WaitList idle_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  // stopped_, readable without the lock (stopped()).
  std::atomic<bool> closed_{false};
  // options_.lanes of them.
  std::vector<Lane> lanes_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;  // lanes with in_flight
  int running_ ABSL_GUARDED_BY(mu_) = 0;    // lanes with running
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // the last drain's number
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
  // drain is queued or running. False when it was not queued: after
  // Close() (counted as dropped_stopped), or refused by a full queue
  // (Overflow::kRefuseNewest); `item` is destroyed.
  bool Add(T item, const std::shared_ptr<const void>& owner) {
    return Offer(item, owner) == Admission::kQueued;
  }
  // Add(), leaving a refused `item` with the caller (moved from only when
  // queued). An oldest item dropped for it (Overflow::kDropOldest) is put
  // into `*displaced` if given (the caller handles it outside the lock),
  // destroyed after the lock otherwise.
  Admission Offer(T& item, const std::shared_ptr<const void>& owner,
                  std::optional<T>* displaced = nullptr);
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
  void Drain(int lane) override;

  const Handler handler_;
  scheduler::RingQueue<T> queue_ ABSL_GUARDED_BY(mu_);
};

// --- implementation of the template ---------------------------------------

template <typename T>
typename SerialDeliveryBase::Admission SerialDelivery<T>::Offer(
    T& item, const std::shared_ptr<const void>& owner, std::optional<T>* displaced) {
  std::optional<T> overflow;  // the dropped oldest item, destroyed after the lock
  if (displaced == nullptr) displaced = &overflow;
  int lane = 0;
  uint64_t generation = 0;
  {
    MutexLock lock(&mu_);
    ++stats_.added;
    if (stopped_) {
      ++stats_.dropped_stopped;
      return Admission::kStopped;
    }
    if (options_.capacity != 0 && queue_.size() >= options_.capacity) {
      if (options_.overflow == Options::Overflow::kRefuseNewest) {
        ++stats_.refused_full;
        return Admission::kRefusedFull;
      }
      displaced->emplace(queue_.pop_front());
      ++stats_.dropped_overflow;
      --stats_.pending;
    }
    queue_.push_back(std::move(item));
    ++stats_.pending;
    if (!StartDrainLocked(&lane, &generation)) return Admission::kQueued;
  }
  ScheduleDrain(lane, generation, owner);
  return Admission::kQueued;
}

template <typename T>
void SerialDelivery<T>::Close(std::vector<T>* dropped) {
  scheduler::RingQueue<T> left;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    closed_.store(true, std::memory_order_release);
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
void SerialDelivery<T>::Drain(int lane) {
  const scheduler::CRoutine* const self = scheduler::CRoutine::Current();
  DrainScope scope(this, lane);
  int in_slice = 0;
  bool threw = false;
  for (;;) {
    // Declared in the loop: the item is released before the next one is
    // taken, while the handler still counts as running.
    T item;
    bool yield = false;
    {
      MutexLock lock(&mu_);
      EndRunLocked(lane, threw);
      threw = false;
      if (stopped_ || queue_.empty()) {
        EndDrainLocked(lane);
        scope.Finish();
        return;
      }
      if (in_slice == options_.items_per_slice) {
        yield = true;
      } else {
        item = queue_.pop_front();
        --stats_.pending;
        ++stats_.delivered;
        BeginRunLocked(lane, self);
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
