// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// ExecutionContext and ContextPool: reusable coroutine contexts (a stack and
// a suspended fiber looping over routine bodies) that CRoutines borrow.
//
// Why a loop instead of one fiber per routine: creating a fiber per routine
// costs a context set-up each time, and, more importantly, a fiber that
// *returns* leaves the final switch to Boost's internals, where no sanitizer
// annotation can be placed exactly before it. Here every switch, in either
// direction, is a plain resume() with the ThreadSanitizer annotation right
// before it: the context runs body after body and parks between them. A
// context is only torn down when its pool is destroyed (or trimmed), by
// unwinding its fiber.
//
// Every switch into the context also installs its own record of the
// exceptions being handled and in flight, and every switch back keeps it
// and restores the thread's (exception_state.h): a body that suspends in a
// catch handler or while unwinding finds its own exceptions when it
// continues, on whichever thread, and leaves none to the thread or to other
// routines. A body returns with an empty record, so the next body on the
// context starts with one.
//
// Threads: a context is used by one routine, on one processor at a time.
// ContextPool is thread-safe.

#ifndef SCHEDULER_EXECUTION_CONTEXT_H_
#define SCHEDULER_EXECUTION_CONTEXT_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "boost/context/fiber.hpp"
#include "cyber/common/log.h"
#include "cyber/common/mutex.h"
#include "scheduler/exception_state.h"
#include "scheduler/routine_stack.h"
#include "scheduler/tsan_fiber.h"

namespace cyber {
namespace scheduler {

class ExecutionContext {
 public:
  explicit ExecutionContext(StackPool* stacks);
  ~ExecutionContext();  // unwinds the parked fiber
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  // Processor side: runs `body` (on first entry) or continues it (after a
  // SwitchOut), until the body calls SwitchOut() or returns. Returns true if
  // the body returned (the context is free again).
  // Inline, like SwitchOut(): a stack switch is a few nanoseconds, and
  // every call level around it costs about as much again (returns mispredict
  // after the switch). Always inlined: the compiler's size heuristics would
  // otherwise decide it, and Resume() around it, by a few instructions.
  __attribute__((always_inline)) bool Enter(std::function<void()>* body) {
    if (body != nullptr) {  // a new body for this (idle) context
      DCHECK(exceptions_.empty()) << "a body ended inside a handler";
      body_ = body;
      body_done_ = false;
    }
    // The body comes back here, on this thread, so `thread` is still this
    // thread's record after the switch.
    ExceptionState* const thread = ThreadExceptionState();
    const ExceptionState outside = Exchange(thread, exceptions_);
    tsan_caller_ = tsan_fiber::Current();
    tsan_fiber::SwitchTo(tsan_fiber_);
    fiber_ = std::move(fiber_).resume();
    exceptions_ = Exchange(thread, outside);
    return body_done_;
  }
  // Inside the body: back to the processor that called Enter(); returns when
  // some processor calls Enter() again.
  void SwitchOut() {
    tsan_fiber::SwitchTo(tsan_caller_);
    caller_ = std::move(caller_).resume();
  }

 private:
  void Loop();

  boost::context::fiber fiber_;   // the context, while parked
  boost::context::fiber caller_;  // the processor, while the body runs
  std::function<void()>* body_ = nullptr;
  bool body_done_ = false;
  void* tsan_fiber_ = nullptr;
  void* tsan_caller_ = nullptr;
  // The body's exceptions handled and in flight, while it is switched out.
  ExceptionState exceptions_;
};

class ContextPool {
 public:
  ContextPool(size_t stack_size, size_t max_cached);
  ~ContextPool();
  ContextPool(const ContextPool&) = delete;
  ContextPool& operator=(const ContextPool&) = delete;

  std::unique_ptr<ExecutionContext> Acquire();
  void Release(std::unique_ptr<ExecutionContext> context);
  // Creates contexts until `contexts` idle ones are cached (at most
  // max_cached), so that many routines can start at once without making a
  // context (and its stack). Returns the number cached.
  size_t Reserve(size_t contexts);

  StackPool::Stats stack_stats() const { return stacks_.stats(); }

 private:
  StackPool stacks_;  // outlives the contexts (declared first)
  const size_t max_cached_;
  Mutex mu_;
  std::vector<std::unique_ptr<ExecutionContext>> free_ ABSL_GUARDED_BY(mu_);
};

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_EXECUTION_CONTEXT_H_
