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
// Delivery (a SerialDelivery, serial_delivery.h, holds the queue and runs
// the drains):
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
// the other); two callbacks of one node may each shut the node down
// (Node::Shutdown), also at the same moment.
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
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/mutex.h"
#include "cyber/time/wait_list.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/transport/node_endpoint.h"
#include "scheduler/croutine.h"
#include "cyber/transport/serial_delivery.h"
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
  size_t pending_queue_size() const { return delivery_.options().capacity; }

  ReaderStats stats() const {
    const transport_internal::SerialDeliveryStats d = delivery_.stats();
    ReaderStats s;
    s.received = d.added;
    s.delivered = d.delivered;
    s.dropped_overflow = d.dropped_overflow;
    s.dropped_shutdown = d.dropped_stopped;
    s.dispatch_refusals = d.dispatch_refusals;
    s.callback_exceptions = d.handler_exceptions;
    s.pending = d.pending;
    return s;
  }

  void Shutdown() override;
  bool is_shut_down() const override {
    MutexLock lock(&mu_);
    return shut_down_;
  }

  // Called by Writer<M>::Write for every reader of the channel. Never blocks
  // on the callback.
  void Deliver(const std::shared_ptr<const M>& message) {
    delivery_.Add(message, this->shared_from_this());
  }

 private:
  friend class Node;

  using Delivery = transport_internal::SerialDelivery<std::shared_ptr<const M>>;

  // transport_internal::NodeEndpoint, for Node::Shutdown().
  bool RunsCallbackIn(const scheduler::CRoutine* routine) const override {
    return delivery_.RunsHandlerIn(routine);
  }
  void ShutdownAmong(const ShutdownPeers& peers) override {
    ShutdownExcept([&peers](const scheduler::CRoutine* r) { return peers.Contains(r); });
  }
  void RecheckPeers() override { delivery_.RecheckWaiters(); }
  // Shutdown(), not waiting for a callback running in a routine `skip`
  // accepts.
  void ShutdownExcept(absl::FunctionRef<bool(const scheduler::CRoutine*)> skip);

  Reader(std::string node,
         std::shared_ptr<transport_internal::Channel<M>> channel,
         std::shared_ptr<scheduler::Scheduler> scheduler, timer::Route route,
         Callback callback, size_t capacity)
      : node_(std::move(node)),
        channel_(std::move(channel)),
        scheduler_owner_(std::move(scheduler)),
        callback_(std::move(callback)),
        delivery_(DeliveryOptions(node_, channel_->name(), scheduler_owner_.get(),
                                  route, capacity),
                  [this](std::shared_ptr<const M>& message) { callback_(message); }) {}

  static typename Delivery::Options DeliveryOptions(
      const std::string& node, const std::string& channel,
      scheduler::Scheduler* scheduler, timer::Route route, size_t capacity) {
    typename Delivery::Options o;
    o.name = absl::StrCat("node \"", node, "\": reader on channel \"", channel, "\"");
    o.handler = "callback";
    o.routine = "delivery";
    o.scheduler = scheduler;
    o.route = route;  // where its drains run
    o.capacity = capacity;
    o.items_per_slice = kMessagesPerSlice;
    return o;
  }

  // Subscribes to the channel, unless already shut down.
  void Attach();

  const std::string node_;
  const std::shared_ptr<transport_internal::Channel<M>> channel_;
  // The node's (see Node::scheduler_owner_): may hold the process scheduler.
  const std::shared_ptr<scheduler::Scheduler> scheduler_owner_;
  const Callback callback_;
  // The pending messages and the routine that delivers them.
  Delivery delivery_;

  // mu_ protects the following state.
  mutable Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
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
void Reader<M>::Shutdown() {
  ShutdownExcept([](const scheduler::CRoutine*) { return false; });
}

template <typename M>
void Reader<M>::ShutdownExcept(
    absl::FunctionRef<bool(const scheduler::CRoutine*)> skip) {
  // The pending messages are dropped (counted as dropped_shutdown) before
  // the reader reads as shut down: once is_shut_down() is true, no message
  // queued before it runs, even when the running callback ends at once.
  delivery_.Close();
  bool detach = false;
  {
    MutexLock lock(&mu_);
    detach = !std::exchange(shut_down_, true);
  }
  // Waits out a running callback, unless we are that callback (or `skip`
  // says so).
  delivery_.StopExcept(skip);
  if (detach) channel_->Remove(this);
}

}  // namespace cyber

#endif  // CYBER_NODE_READER_H_
