// RuntimeScope: which runtime the code running on this thread belongs to.
// The one lookup rule of the process, in one place.
//
// Why: a runtime (cyber/runtime/runtime.h) owns a clock, a timer system, a
// scheduler and a channel bus. Code that runs on behalf of a runtime —
// routines (timer and reader callbacks, Async tasks, CreateTask bodies),
// component Init()/Clear() — must use *that* runtime's pieces when it says
// `cyber::Time::Now()`, `cyber::Timer t(100, cb, false)`, `cyber::Async(f)`,
// `SleepFor(d)` or `Node("x")`, without passing them around: a simulated
// graph's component follows the graph's simulated clock and scheduler, not
// the process's real ones. Before this, three thread-locals (clock, timer
// system, scheduler) kept in step by three installers decided it, and each
// entry point had its own rule.
//
// The rule: the scope installed on this thread (ScopedRuntime, below) names
// the runtime; every lookup reads one field of it:
//   clock      cyber/time/ambient_clock.h   (Time::Now, Rate, Duration::Sleep)
//   timers     timer/ambient_timer_system.h (a Timer without a TickDriver)
//   scheduler  scheduler/default_scheduler.h (Async, CreateTask, Node)
//   bus        cyber/transport/node.h       (Node's channels)
// A field left null means "the process default" for that piece. Outside
// any scope, every piece is the process default.
//
// Who installs a scope: a scheduler around each resume of one of its
// routines (inline, CRoutine::Resume), the launcher around a component's
// Init()/Clear()/shutdown, a simulated graph around the code it drives, and
// any test with ScopedRuntime.
//
// This header sits below every layer that reads it (time, timer, scheduler,
// transport): it names their types by forward declaration only.
//
// Threads: a scope object's fields are atomics, written by its owner while
// it wires the runtime (a scheduler learns its timer system after it
// starts) and read from any thread. The installed scope is per thread;
// ScopedRuntime is used on the thread that made it, and nests.

#ifndef CYBER_RUNTIME_RUNTIME_SCOPE_H_
#define CYBER_RUNTIME_RUNTIME_SCOPE_H_

#include <atomic>
#include <string>

namespace cyber {

class Clock;
class ChannelBus;
namespace timer {
class TimerSystem;
}  // namespace timer
namespace scheduler {
class Scheduler;
}  // namespace scheduler

struct RuntimeScope {
  explicit RuntimeScope(std::string scope_name) : name(std::move(scope_name)) {}
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;

  const std::string name;  // the runtime's name, for logs
  // Each: null means the process default for that piece. Owned elsewhere
  // (by the runtime); valid while the scope is installed anywhere.
  std::atomic<Clock*> clock{nullptr};
  std::atomic<timer::TimerSystem*> timers{nullptr};
  std::atomic<scheduler::Scheduler*> scheduler{nullptr};
  std::atomic<ChannelBus*> bus{nullptr};
};

namespace runtime_internal {
// The variable behind CurrentRuntimeScope() and ScopedRuntime, for code
// that runs on its thread's own stack and never across a coroutine switch
// (a processor resuming a routine: CRoutine::Resume), where an inline
// access is safe. Everybody else calls CurrentRuntimeScope(), which is out
// of line so that code in a routine that moved threads reads its new
// thread's value.
inline thread_local const RuntimeScope* t_scope = nullptr;
}  // namespace runtime_internal

// The scope installed on this thread, or null outside any runtime's code.
const RuntimeScope* CurrentRuntimeScope();

// One field of the installed scope (&RuntimeScope::clock, ::timers,
// ::scheduler, ::bus), or null when no scope is installed or it names
// none: the one lookup every layer makes, e.g.
//   Clock* c = FromCurrentRuntime(&RuntimeScope::clock);
template <typename T>
T* FromCurrentRuntime(std::atomic<T*> RuntimeScope::*field) {
  const RuntimeScope* const scope = CurrentRuntimeScope();
  return scope != nullptr ? (scope->*field).load(std::memory_order_acquire)
                          : nullptr;
}

// Installs `scope` (null: none, i.e. the process defaults) on this thread
// until destroyed; then the previous one is back.
class ScopedRuntime {
 public:
  explicit ScopedRuntime(const RuntimeScope* scope);
  ~ScopedRuntime();
  ScopedRuntime(const ScopedRuntime&) = delete;
  ScopedRuntime& operator=(const ScopedRuntime&) = delete;

 private:
  const RuntimeScope* const previous_;
};

}  // namespace cyber

#endif  // CYBER_RUNTIME_RUNTIME_SCOPE_H_
