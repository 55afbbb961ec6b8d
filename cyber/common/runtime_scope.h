// The runtime that the code running on this thread belongs to: the one
// lookup rule of the process, in one place.
//
// Why: a runtime (cyber/runtime/runtime.h) owns a clock, a timer system, a
// scheduler and a channel bus. Code that is given its runtime uses it (a
// Node made with `Node(name, &runtime)`, a component's context). Code that
// is given none — Cyber RT code saying `cyber::Time::Now()`,
// `cyber::Timer t(100, cb, false)`, `cyber::Async(f)`, `SleepFor(d)`,
// `Node("x")` — must still use *its* runtime: a simulated graph's component
// follows the graph's simulated clock and scheduler, not the process's real
// ones, and nothing aborts because something was not wired.
//
// The rule, for the clock, the timer system, the scheduler and the bus alike:
//   1. the scope installed on this thread (ScopedRuntime, below), if any
//      (a part it leaves null: the process runtime's, as in 2);
//   2. else the process runtime (cyber/runtime/process_runtime.h), made on
//      first use;
//   3. else nothing: a binary that links no process runtime (every public
//      label that can need one links it: //timer, //cyber/task,
//      //scheduler:default_scheduler, //cyber/node, ...) gets null, and its
//      callers a clear error.
// One exception, by design rather than by fallback: the process runtime's
// clock is always the steady clock, so "now" outside any scope reads the
// steady clock without making the process runtime (cyber/time/
// current_clock.h).
//
// Who installs a scope: a scheduler around each resume of one of its
// routines (timer and reader callbacks, Async tasks, CreateTask bodies), the
// launcher around a component's Init()/Clear()/shutdown, a simulated graph
// around the code it drives, and any test with ScopedRuntime.
//
// Layers: this header sits below every layer that reads it (time, timer,
// scheduler, node, service); it names their types by forward declaration
// only, and learns the process runtime through the maker that
// //cyber/runtime:process registers before main (SetProcessRuntimeMaker).
//
// Lifetimes: an installed scope outlives the code it is installed around
// (its runtime outlives its own code), so rule 1 needs no reference. The
// process runtime may be shut down and replaced (cyber::Init after
// cyber::Shutdown): rule 2 hands out a RuntimeRef that holds it, so what a
// caller keeps (a Node's scheduler, an Async future) keeps that runtime
// alive, never a dangling pointer.
//
// Threads: a scope object's fields are atomics, written by its owner while
// it wires the runtime and read from any thread. The installed scope is per
// thread; ScopedRuntime is used on the thread that made it, and nests.

#ifndef CYBER_COMMON_RUNTIME_SCOPE_H_
#define CYBER_COMMON_RUNTIME_SCOPE_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>

namespace cyber {

class Clock;
class ChannelBus;
namespace timer {
class TimerSystemCore;
}  // namespace timer
namespace scheduler {
class Scheduler;
}  // namespace scheduler

// A runtime's parts, as code below the runtime sees them.
struct RuntimeScope {
  explicit RuntimeScope(std::string scope_name) : name(std::move(scope_name)) {}
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;

  const std::string name;  // the runtime's name, for logs
  // Owned by the runtime; valid while the runtime lives. Null: the runtime
  // has no such part (yet).
  std::atomic<Clock*> clock{nullptr};
  std::atomic<timer::TimerSystemCore*> timers{nullptr};
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

// The scope installed on this thread (rule 1), or null.
const RuntimeScope* CurrentRuntimeScope();

// Installs `scope` (null: none) on this thread until destroyed; then the
// previous one is back.
class ScopedRuntime {
 public:
  explicit ScopedRuntime(const RuntimeScope* scope);
  ~ScopedRuntime();
  ScopedRuntime(const ScopedRuntime&) = delete;
  ScopedRuntime& operator=(const ScopedRuntime&) = delete;

 private:
  const RuntimeScope* const previous_;
};

// A runtime found by the rule, held while this object lives when it is the
// process runtime (an installed scope needs no hold). A part an installed
// scope leaves null (a bare Scheduler's scope has no bus, and no timers
// until it is given a timer system) is the process runtime's, fetched and
// held on first ask. Empty (every part null) under rule 3. A value for one
// thread: not shared.
class RuntimeRef {
 public:
  RuntimeRef() = default;
  // `installed`: an installed scope (not held), or null. `process`: the
  // process runtime's scope, held, or null (fetched when a part needs it).
  RuntimeRef(const RuntimeScope* installed,
             std::shared_ptr<const RuntimeScope> process)
      : installed_(installed), process_(std::move(process)) {}

  // The installed scope, else the process runtime's (null under rule 3).
  const RuntimeScope* scope() const {
    return installed_ != nullptr ? installed_ : ProcessScope();
  }

  // One part, or null (no runtime has it).
  template <typename T>
  T* part(std::atomic<T*> RuntimeScope::*field) const {
    return Find(field).part;
  }
  // One part, shared: a part of the process runtime keeps that runtime
  // alive while held (an aliasing shared_ptr); an installed scope's part is
  // not held (its runtime outlives its own code). Null as part().
  template <typename T>
  std::shared_ptr<T> shared_part(std::atomic<T*> RuntimeScope::*field) const {
    const Found<T> found = Find(field);
    if (found.part == nullptr) return nullptr;
    return std::shared_ptr<T>(
        found.from_process ? process_ : std::shared_ptr<const RuntimeScope>(),
        found.part);
  }

 private:
  template <typename T>
  struct Found {
    T* part;
    bool from_process;  // held through process_
  };
  // The rule for one part: the installed scope's, else the process
  // runtime's.
  template <typename T>
  Found<T> Find(std::atomic<T*> RuntimeScope::*field) const {
    if (installed_ != nullptr) {
      if (T* const p = (installed_->*field).load(std::memory_order_acquire)) {
        return {p, false};
      }
    }
    const RuntimeScope* const process = ProcessScope();
    return {process != nullptr
                ? (process->*field).load(std::memory_order_acquire)
                : nullptr,
            true};
  }
  const RuntimeScope* ProcessScope() const;

  const RuntimeScope* installed_ = nullptr;
  mutable std::shared_ptr<const RuntimeScope> process_;  // fetched lazily
};

// The runtime the calling code belongs to, by the rule above. Makes the
// process runtime on first use (rule 2).
RuntimeRef CurrentRuntime();
// Rule 2 alone: the process runtime (made on first use), whatever scope is
// installed; empty under rule 3.
RuntimeRef ProcessRuntimeScope();

// The timer system of the runtime CurrentRuntime() would name now, without
// making or holding anything: the installed scope's, else the process
// runtime's last published (null before one is made, or after a
// shutdown). For a caller that holds a part and only asks "is mine still
// the current one?" (a Timer restarting on the system it ran on). Never
// dereference it: it may be freed at any moment.
const timer::TimerSystemCore* CurrentTimerSystemHint();

// For //cyber/runtime:process only. The maker returns the process runtime
// (making it on first use), held: its scope, kept alive by the shared_ptr.
// Registered before main by a static initializer of that library.
using ProcessRuntimeMaker = std::shared_ptr<const RuntimeScope> (*)();
void SetProcessRuntimeMaker(ProcessRuntimeMaker maker);
// The process runtime's timer system now (null: none, or shut down), for
// CurrentTimerSystemHint(). Called by the process runtime when it makes,
// shuts down or replaces its runtime.
void PublishProcessTimerSystem(const timer::TimerSystemCore* timers);

}  // namespace cyber

#endif  // CYBER_COMMON_RUNTIME_SCOPE_H_
