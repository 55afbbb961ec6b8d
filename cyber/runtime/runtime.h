// Runtime: one owner of what a graph of components runs on — a clock, a
// timer system (timing wheel and tick thread), a scheduler (coroutine pool,
// processor groups from a conf) and a channel bus.
//
// Why one owner: these four are wired to each other (timer callbacks run on
// the scheduler, SleepFor arms the wheel, reader deliveries are routines,
// everything reads the one clock) and must be shut down in one order. A
// simulated graph owns a runtime on a simulated clock; a test can make its
// own and share nothing with other tests:
//
//   cyber::Runtime::Options o;
//   o.name = "test";
//   cyber::Runtime rt(o);
//   cyber::Timer t(options, rt.timers());
//   auto f = rt.scheduler()->Async([] { cyber::SleepFor(absl::Milliseconds(5)); });
//
// Code that runs on behalf of a runtime finds it by one rule
// (cyber/common/runtime_scope.h): the runtime's routines (timer and
// reader callbacks, Async tasks) have its scope installed by its
// scheduler; any other code enters it with `ScopedRuntime s(rt.scope());`
// and then a plain `cyber::Timer`, `cyber::Async`, `Node("x")`,
// `Time::Now()` use this runtime.
//
// The process runtime is one of these too (cyber/runtime/process_runtime.h:
// made on first use or by cyber::Init, on the steady clock, its scheduler
// and tick thread from the --scheduler_* flags).
//
// Shutdown() is ordered: the transport to other processes first (nothing
// more arrives from or leaves for them), then timers (no new callbacks), then the
// scheduler (cancels and drains its routines, joins its processors); the
// bus is freed last. Timers may outlive the runtime: a Timer then gets
// FailedPrecondition (the timer system refuses arms once shut down).
//
// Threads: accessors from any thread; Shutdown() and the destructor not from
// the runtime's own routines or callbacks.

#ifndef CYBER_RUNTIME_RUNTIME_H_
#define CYBER_RUNTIME_RUNTIME_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "cyber/common/runtime_scope.h"
#include "cyber/time/clock.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/transport/remote_transport.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"
#include "timer/timing_wheel.h"

namespace cyber {

class Runtime {
 public:
  struct Options {
    std::string name = "runtime";
    // The clock the whole runtime follows; null: the steady clock.
    // REQUIRES: outlives the runtime.
    Clock* clock = nullptr;
    // Processor groups and task priorities; empty: one group of one
    // processor per core (one, without threads).
    scheduler::SchedulerConfig config;
    // false: no tick thread and no processor threads. The owner steps the
    // timer system (timers()->Step) and runs queued routines
    // (scheduler()->RunReady) on its own thread: a simulated graph.
    bool run_threads = true;
    absl::Duration tick = timer::kTimerResolution;
    // The tick thread's name; empty: `name` + "-tick".
    std::string tick_thread_name;
    size_t stack_size = scheduler::kDefaultStackSize;
    // The most timers pending at once on its timer system; 0: no cap
    // (timer::TimerSystem::Options::max_pending_timers).
    size_t max_pending_timers = 0;
    // See scheduler::Scheduler::Options::anticipate_timer_work.
    bool anticipate_timer_work = true;
    // The transport to other processes, owned from here on: set on the bus
    // (its protobuf channels reach other processes, channel_bus.h) and
    // shut down first by Shutdown(). Null: every channel stays in the
    // process (a test, a simulated graph).
    std::shared_ptr<RemoteTransport> remote;
  };

  explicit Runtime(Options options);
  ~Runtime();  // Shutdown()
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Timers, then the scheduler. Idempotent.
  void Shutdown();

  const std::string& name() const { return name_; }
  Clock* clock() const { return clock_; }
  timer::TimerSystem* timers() { return &timers_; }
  scheduler::Scheduler* scheduler() { return &scheduler_; }
  ChannelBus* bus() { return bus_.get(); }
  // The transport to other processes; null when channels stay in-process.
  RemoteTransport* remote() const { return remote_.get(); }
  // What code running on behalf of this runtime has installed (see above).
  const RuntimeScope* scope() const { return scheduler_.scope(); }

 private:
  const std::string name_;
  Clock* const clock_;
  // First in, last out: deliveries in flight reach the bus.
  const std::unique_ptr<ChannelBus> bus_;
  const std::shared_ptr<RemoteTransport> remote_;
  scheduler::Scheduler scheduler_;
  timer::TimerSystem timers_;  // dispatches into scheduler_
};

}  // namespace cyber

#endif  // CYBER_RUNTIME_RUNTIME_H_
