// Reader<M>: one subscription to a channel. Messages written to the channel
// are queued here and handed to the reader's callback in a scheduler routine.
//
// Why this shape (as in Cyber RT): the writer must never wait for a reader, a
// slow reader must not slow the others, and a sensor-rate reader that falls
// behind wants the freshest data, not a growing backlog. So each reader has
// its own bounded queue of pending messages (pending_queue_size, default 1):
// when it is full the OLDEST pending message is dropped and counted. A write
// only pushes into the queues; the callback runs later on the scheduler.
//
// Delivery:
//  * Deliver() (called by Writer::Write) pushes the message and, if no drain
//    routine of this reader is in flight, Dispatch()es one. The drain pops
//    messages and calls the callback for each until the queue is empty. So
//    the callback runs in a scheduler routine (CRoutine::Current() != null),
//    never on the writer's thread, never concurrently with itself, and in the
//    order messages were pushed (per writer: write order; concurrent writers
//    interleave in the order their pushes took this reader's lock).
//  * The drain runs on the reader's route (timer::Route: priority and
//    processor group), its node's: for a component's node, the scheduler
//    conf entry named like the component (Node::route()).
//  * A drain hands the processor back (CRoutine::Yield) every
//    kMessagesPerSlice messages, so one busy reader does not starve other
//    routines of its processor group.
//  * If the scheduler refuses the drain (max_routines reached, or shut down),
//    the refusal is counted (dispatch_refusals) and logged (AERROR_EVERY 100,
//    naming node and channel); the messages stay pending and the next write
//    tries again. A drain the scheduler drops without running it (queued at
//    scheduler shutdown) is noticed the same way. Nothing is lost silently:
//      received == delivered + dropped_overflow + dropped_shutdown + pending.
//  * A callback that throws is caught, logged with node and channel, counted
//    (callback_exceptions), and delivery continues with the next message.
//    RoutineCancelled (the scheduler is stopping) passes through: the drain
//    ends and the messages it did not deliver stay pending.
//
// Shutdown() is synchronous: when it returns the callback is not running and
// will not run again; pending messages are dropped (counted as
// dropped_shutdown) and the reader leaves its channel. Called from inside the
// reader's own callback it returns at once (the running callback finishes
// normally; no further call follows). Called from another routine it parks
// that routine (its processor runs other routines meanwhile, including the
// callback it waits for, e.g. one suspended in SleepFor) until the callback
// has finished; called from a thread it blocks.
// Two callbacks must not shut down each other's readers (each would wait for
// the other).
//
// What a callback may do: anything, including writing to any channel (also its
// own), creating readers and writers, shutting down its own reader or node,
// and suspending (Yield, SleepFor). It runs under no transport lock.
//
// Readers are created by Node::CreateReader and owned by their Node (and by
// the channel while subscribed), so dropping the returned shared_ptr does not
// unsubscribe; Shutdown() or Node::Shutdown() does.
//
// Threads: every method is thread-safe. The Node's scheduler must outlive the
// reader's subscription (i.e. shut the node down before the scheduler is
// destroyed).

#ifndef CYBER_NODE_READER_H_
#define CYBER_NODE_READER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "boost/context/fiber.hpp"  // forced_unwind, which must pass through
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
#include "cyber/time/wait_list.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/transport/node_endpoint.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/dispatcher.h"  // timer::Route

namespace cyber {

struct ReaderStats {
  uint64_t received = 0;          // messages pushed by writers
  uint64_t delivered = 0;         // messages handed to the callback
  uint64_t dropped_overflow = 0;  // oldest pending dropped: queue was full
  uint64_t dropped_shutdown = 0;  // pending at (or arriving after) Shutdown
  uint64_t dispatch_refusals = 0;    // drain routines the scheduler refused
  uint64_t callback_exceptions = 0;  // callbacks that threw
  size_t pending = 0;                // queued now, not yet handed over
};


template <typename M>
class Reader final : public transport_internal::NodeEndpoint,
                     public std::enable_shared_from_this<Reader<M>> {
 public:
  using Callback = std::function<void(const std::shared_ptr<const M>&)>;

  // Messages a drain delivers before it yields its processor.
  static constexpr int kMessagesPerSlice = 32;

  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader() override = default;

  const std::string& channel_name() const { return channel_->name(); }
  const std::string& node_name() const { return node_; }
  size_t pending_queue_size() const { return capacity_; }

  ReaderStats stats() const {
    MutexLock lock(&mu_);
    ReaderStats s = stats_;
    s.pending = pending_.size();
    return s;
  }

  void Shutdown() override;
  bool is_shut_down() const override {
    MutexLock lock(&mu_);
    return shut_down_;
  }

  // Called by Writer<M>::Write for every reader of the channel. Never blocks
  // on the callback.
  void Deliver(const std::shared_ptr<const M>& message);

 private:
  friend class Node;

  // Keeps the reader alive while a drain routine is queued or running, and
  // notices a drain the scheduler destroys without running it.
  struct DrainTask {
    DrainTask(std::shared_ptr<Reader> r, uint64_t g)
        : reader(std::move(r)), generation(g) {}
    ~DrainTask() {
      if (!started) reader->ReleaseDrain(generation);
    }
    std::shared_ptr<Reader> reader;
    const uint64_t generation;
    bool started = false;
  };

  Reader(std::string node,
         std::shared_ptr<transport_internal::Channel<M>> channel,
         std::shared_ptr<scheduler::Scheduler> scheduler, timer::Route route,
         Callback callback, size_t capacity)
      : node_(std::move(node)),
        channel_(std::move(channel)),
        scheduler_owner_(std::move(scheduler)),
        scheduler_(scheduler_owner_.get()),
        route_(route),
        callback_(std::move(callback)),
        capacity_(capacity) {}

  // Subscribes to the channel, unless already shut down.
  void Attach();
  void ScheduleDrain(uint64_t generation);
  // The drain of `generation` will not run (refused or dropped): let the next
  // Deliver dispatch a new one.
  void ReleaseDrain(uint64_t generation);
  void Drain();
  // Runs the callback; returns false if it threw (logged here).
  bool Invoke(const std::shared_ptr<const M>& message);

  const std::string node_;
  const std::shared_ptr<transport_internal::Channel<M>> channel_;
  // The node's (see Node::scheduler_owner_): may hold the process scheduler.
  const std::shared_ptr<scheduler::Scheduler> scheduler_owner_;
  scheduler::Scheduler* const scheduler_;
  const timer::Route route_;  // where its drains run
  const Callback callback_;
  const size_t capacity_;

  // mu_ protects the following state.
  mutable Mutex mu_;
  // Woken when callback_running_ turns false: Shutdown() waits here; a
  // routine parks (never blocking its processor), a thread blocks.
  WaitList callback_idle_ ABSL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<const M>> pending_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  // A drain routine is dispatched and has not finished.
  bool drain_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  // Numbers the drains, so a late ReleaseDrain cannot clear a newer one.
  uint64_t drain_generation_ ABSL_GUARDED_BY(mu_) = 0;
  // The callback is running, in routine `callback_routine_`.
  bool callback_running_ ABSL_GUARDED_BY(mu_) = false;
  const scheduler::CRoutine* callback_routine_ ABSL_GUARDED_BY(mu_) = nullptr;
  ReaderStats stats_ ABSL_GUARDED_BY(mu_);
};

// --- implementation of the template ---------------------------------------

template <typename M>
void Reader<M>::Attach() {
  MutexLock lock(&mu_);
  // Under mu_: Shutdown() either sees us attached (and removes us) or we see
  // it shut down and stay out.
  if (!shut_down_) channel_->Add(this->shared_from_this());
}

template <typename M>
void Reader<M>::Deliver(const std::shared_ptr<const M>& message) {
  std::shared_ptr<const M> dropped;  // destroyed after the lock is released
  uint64_t generation = 0;
  {
    MutexLock lock(&mu_);
    ++stats_.received;
    if (shut_down_) {
      ++stats_.dropped_shutdown;
      return;
    }
    if (pending_.size() >= capacity_) {
      dropped = std::move(pending_.front());
      pending_.pop_front();
      ++stats_.dropped_overflow;
    }
    pending_.push_back(message);
    if (drain_in_flight_) return;  // the running drain will pick it up
    drain_in_flight_ = true;
    generation = ++drain_generation_;
  }
  ScheduleDrain(generation);
}

template <typename M>
void Reader<M>::ScheduleDrain(uint64_t generation) {
  auto task = std::make_shared<DrainTask>(this->shared_from_this(), generation);
  const bool accepted = scheduler_->Dispatch(
      [task] {
        task->started = true;
        task->reader->Drain();
      },
      route_, nullptr);
  task.reset();  // if refused, this was the last reference: ReleaseDrain ran
  if (accepted) return;
  uint64_t refusals = 0;
  size_t pending = 0;
  {
    MutexLock lock(&mu_);
    refusals = ++stats_.dispatch_refusals;
    pending = pending_.size();
  }
  ReleaseDrain(generation);  // in case the scheduler still holds the task
  AERROR_EVERY(100) << "node \"" << node_ << "\": reader on channel \""
                    << channel_name() << "\": scheduler \"" << scheduler_->name()
                    << "\" refused the delivery routine (refusals so far: "
                    << refusals << "); " << pending
                    << " message(s) stay pending until the next write";
}

template <typename M>
void Reader<M>::ReleaseDrain(uint64_t generation) {
  MutexLock lock(&mu_);
  // Only the newest drain can be in flight, and one that never started has
  // no callback running.
  if (drain_in_flight_ && drain_generation_ == generation) {
    drain_in_flight_ = false;
  }
}

template <typename M>
void Reader<M>::Drain() {
  const scheduler::CRoutine* const self = scheduler::CRoutine::Current();
  // If the routine unwinds (cancelled at a suspension point in the callback
  // or in our Yield), the reader must be left able to drain again.
  struct Unwind {
    Reader* reader;
    bool finished = false;
    ~Unwind() {
      if (finished) return;
      MutexLock lock(&reader->mu_);
      reader->callback_running_ = false;
      reader->callback_routine_ = nullptr;
      reader->drain_in_flight_ = false;
      reader->callback_idle_.WakeAll();
    }
  } unwind{this};

  int in_slice = 0;
  bool threw = false;
  for (;;) {
    std::shared_ptr<const M> message;
    bool yield = false;
    {
      MutexLock lock(&mu_);
      if (callback_running_) {
        callback_running_ = false;
        callback_routine_ = nullptr;
        if (threw) ++stats_.callback_exceptions;
        callback_idle_.WakeAll();
      }
      if (shut_down_ || pending_.empty()) {
        drain_in_flight_ = false;
        unwind.finished = true;
        return;
      }
      if (in_slice == kMessagesPerSlice) {
        yield = true;
      } else {
        message = std::move(pending_.front());
        pending_.pop_front();
        ++stats_.delivered;
        callback_running_ = true;
        callback_routine_ = self;
      }
    }
    if (yield) {
      in_slice = 0;
      scheduler::CRoutine::Yield();
      continue;
    }
    threw = !Invoke(message);
    ++in_slice;
  }
}

template <typename M>
bool Reader<M>::Invoke(const std::shared_ptr<const M>& message) {
  try {
    callback_(message);
    return true;
  } catch (const scheduler::RoutineCancelled&) {
    throw;  // the scheduler is stopping: end the drain
  } catch (const boost::context::detail::forced_unwind&) {
    throw;  // Boost's own unwinding must pass through
  } catch (const std::exception& e) {
    AERROR_EVERY(100) << "node \"" << node_ << "\": reader on channel \""
                      << channel_name() << "\": callback threw: " << e.what();
  } catch (...) {
    AERROR_EVERY(100) << "node \"" << node_ << "\": reader on channel \""
                      << channel_name()
                      << "\": callback threw a non-std::exception";
  }
  return false;
}

template <typename M>
void Reader<M>::Shutdown() {
  std::deque<std::shared_ptr<const M>> dropped;  // released outside the lock
  bool detach = false;
  {
    MutexLock lock(&mu_);
    if (!shut_down_) {
      shut_down_ = true;
      detach = true;
      stats_.dropped_shutdown += pending_.size();
      dropped.swap(pending_);
    }
    // Wait out a running callback, unless we are that callback.
    const scheduler::CRoutine* const caller = scheduler::CRoutine::Current();
    while (callback_running_ &&
           (caller == nullptr || caller != callback_routine_)) {
      callback_idle_.Wait(&mu_);
    }
  }
  if (detach) channel_->Remove(this);
}

}  // namespace cyber

#endif  // CYBER_NODE_READER_H_
