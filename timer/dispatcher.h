// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Dispatcher: where due timer callbacks run.
//
// Why an interface: the timer layer must not depend on the scheduler above
// it (see docs/architecture.md, "Layers"). The tick thread only decides *that* a timer
// is due; a Dispatcher decides *where* its callback runs: in the scheduler's
// coroutine pool (the process default after cyber::Init), on a small
// callback executor (timer/callback_executor.h, the fallback without Init),
// or inline on the calling thread (InlineDispatcher, for deterministic
// simulation).
//
// Contract for implementations: Dispatch() must not block for long and must
// not call back into the caller's timer; it either accepts the task (which
// then runs exactly once, unless the dispatcher is destroyed first) or
// refuses it by returning false (queue full, shutting down), in which case
// the task is destroyed without running and the caller handles the refusal.
// Thread-safe.
//
// Routes. Work carries its route (the design contract, "The runtime"): a priority
// and a processor group, both taken from the scheduler conf entry of the
// timer, component or task it runs for. The timer layer knows no groups:
// it asks its dispatcher once, when a timer binds to a configuration
// (RouteFor), keeps the Route (two ints, no allocation) and hands it back
// with every call. What `group` means is the dispatcher's (the scheduler:
// the index of a processor group); 0 is its default.

#ifndef TIMER_DISPATCHER_H_
#define TIMER_DISPATCHER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace cyber {
namespace timer {

// Thrown through a callback by a dispatcher that is cancelling it (the
// scheduler at shutdown). The timer layer lets it pass instead of treating
// it as a callback failure.
struct ExecutionCancelled {};

// Where a dispatched task runs: its priority (where the dispatcher orders
// work by priority, higher first) and its processor group (an index the
// dispatcher gave out through RouteFor; 0 is the default group).
struct Route {
  int priority = 0;
  int group = 0;
  bool operator==(const Route& o) const {
    return priority == o.priority && group == o.group;
  }
  bool operator!=(const Route& o) const { return !(*this == o); }
};

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;
  // Runs `task` once, soon, at `priority` (where the dispatcher orders work
  // by priority, higher first; others ignore it). Returns false if refused.
  virtual bool Dispatch(std::function<void()> task, int priority) = 0;
  bool Dispatch(std::function<void()> task) {
    return Dispatch(std::move(task), 0);
  }
  // As Dispatch(task, priority), holding `owner` until the task has run or
  // been dropped. A caller can then pass a task of two trivially copyable
  // words pointing into `owner`, which std::function stores without
  // allocating, and still keep what it points to alive. The default wraps
  // both into one task (an allocation); the scheduler keeps `owner` beside
  // the routine instead, and the timer's fire path allocates nothing.
  virtual bool Dispatch(std::function<void()> task, int priority,
                        std::shared_ptr<const void> owner);
  // As above, on `route` (priority and group). The default ignores the
  // group: Dispatch(task, route.priority, owner).
  virtual bool Dispatch(std::function<void()> task, Route route,
                        std::shared_ptr<const void> owner);
  // Batched hand-over. Between BeginBatch() and EndBatch() on one thread,
  // a dispatcher may hold back the tasks that thread dispatches and hand
  // them to its workers together at EndBatch(): one lock and at most one
  // wake-up per worker for the batch, instead of one per task. A task is
  // still accepted or refused by its Dispatch() call; only its start may
  // wait for EndBatch(). The tick thread brackets each pass with these
  // (DispatchBatch below). Calls on one thread do not nest. Default: no
  // batching.
  virtual void BeginBatch() {}
  virtual void EndBatch() {}
  // When the timer system next expects to hand this dispatcher work: the
  // instant of its wheel's next event (an expiry or a cascade, so it may
  // bring nothing), or nullopt for "nothing expected" (empty wheel, shut
  // down). Pushed by the timer system whenever that changes: its tick
  // thread in each pass, before EndBatch() hands the pass's work over;
  // Arm/Cancel on the arming thread when they move the next event later
  // (one that moves it earlier wakes the tick thread, which announces).
  // Only a timer system whose clock is real steady time announces
  // (Clock::ToSteadyTime); on a simulated clock it never calls this. Calls
  // are serialized per timer system and the last one holds; several timer
  // systems feeding one dispatcher interleave.
  // Called under a lock of the timer system: must be quick (a store), must
  // not block and must not call into the timer system. Default: ignored.
  virtual void ExpectWork(
      std::optional<std::chrono::steady_clock::time_point> /*when*/) {}
  // Early hand-over: how long before an event's instant this dispatcher
  // takes the event's work (0, the default: only once it is due). With a
  // lead, a timer system whose clock is real steady time wakes that much
  // before each event, processes it then and hands its work over in a
  // batch opened with a `not_before` instant (DispatchBatch below): the
  // dispatcher must not begin any of it before then, and has the time
  // meanwhile to get a worker ready (the scheduler's sleeps on its own
  // timer until then: two wake-ups side by side instead of two in series,
  // and the callback still never early). A call handed over early and not
  // yet begun is a queued call: its timer's Stop() or Cancel() drops it.
  // Read once, when a timer system is made on this dispatcher.
  virtual std::chrono::nanoseconds HandOverLead() const {
    return std::chrono::nanoseconds(0);
  }
  // The priority for work named `name` when its owner leaves it unset (a
  // timer with TimerOptions::priority == kPriorityFromConf): e.g. the
  // scheduler conf's `tasks { name prio }`. Default 0.
  virtual int PriorityFor(const std::string& name) const;
  // The route for work named `name` (its conf entry's priority and group).
  // Cheap enough to call when a timer binds, never per call. Default:
  // {PriorityFor(name), 0}.
  virtual Route RouteFor(const std::string& name) const;
};

// A batch of Dispatch() calls on this thread, for its scope (see
// Dispatcher::BeginBatch).
//
// An early batch (made with `not_before`) hands over work ahead of its
// time (Dispatcher::HandOverLead): for its scope, NotBefore() on this
// thread says when that work may begin, and every dispatcher that is
// handed work on this thread meanwhile must hold it until then — also one
// that is not `dispatcher` (a routine of another scheduler woken from its
// sleep by the same pass). Only a timer system's tick pass opens one.
class DispatchBatch {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;
  explicit DispatchBatch(Dispatcher* dispatcher);
  DispatchBatch(Dispatcher* dispatcher, SteadyTime not_before);
  ~DispatchBatch();
  DispatchBatch(const DispatchBatch&) = delete;
  DispatchBatch& operator=(const DispatchBatch&) = delete;

  // The not-before instant of the early batch open on this thread, if
  // one is (see above); nullopt otherwise.
  static std::optional<SteadyTime> NotBefore();

 private:
  Dispatcher* const dispatcher_;
  const std::optional<SteadyTime> outer_;  // the enclosing batch's (none)
};

// Runs each task on the calling thread before Dispatch() returns. With a
// SimulatedClock this makes a whole timer system deterministic: callbacks run
// on the tick thread, in expiry order. Not for production use: a slow
// callback would delay every other timer.
class InlineDispatcher final : public Dispatcher {
 public:
  using Dispatcher::Dispatch;
  bool Dispatch(std::function<void()> task, int /*priority*/) override {
    task();
    return true;
  }
  bool Dispatch(std::function<void()> task, int /*priority*/,
                std::shared_ptr<const void> /*owner*/) override {
    task();  // `owner` is held by this call until the task has run
    return true;
  }
  bool Dispatch(std::function<void()> task, Route /*route*/,
                std::shared_ptr<const void> /*owner*/) override {
    task();  // `owner` is held by this call until the task has run
    return true;
  }
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_DISPATCHER_H_
