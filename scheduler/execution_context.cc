#include "scheduler/execution_context.h"

#include <utility>

#include "cyber/common/log.h"
#include "scheduler/tsan_fiber.h"

namespace cyber {
namespace scheduler {

ExecutionContext::ExecutionContext(StackPool* stacks)
    : tsan_fiber_(tsan_fiber::Create()) {
  fiber_ = boost::context::fiber(
      std::allocator_arg, PooledStackAllocator(stacks),
      [this](boost::context::fiber&& caller) {
        caller_ = std::move(caller);
        Loop();  // only left by the forced unwind of ~ExecutionContext
        return std::move(caller_);
      });
  // Started at once, to its first park in Loop(): every context is then a
  // started fiber parked at one suspension point, so destroying it always
  // unwinds a parked stack. (A context that never ran a body, kept by
  // ContextPool::Reserve, would otherwise be destroyed unstarted, and
  // Boost's ucontext backend, used under ASan, enters the fiber's function
  // to unwind it: Loop() would run with no body.)
  ScopedExceptionState exceptions(&exceptions_);
  tsan_caller_ = tsan_fiber::Current();
  tsan_fiber::SwitchTo(tsan_fiber_);
  fiber_ = std::move(fiber_).resume();
}

ExecutionContext::~ExecutionContext() {
  if (fiber_) {
    // Resuming a parked fiber to destroy it unwinds its stack (Boost throws
    // forced_unwind at its suspension point) and comes back here. That
    // exception is the context's own, thrown and caught on its stack.
    ScopedExceptionState exceptions(&exceptions_);
    tsan_caller_ = tsan_fiber::Current();
    tsan_fiber::SwitchTo(tsan_fiber_);
    fiber_ = boost::context::fiber();
    tsan_fiber::SwitchTo(tsan_caller_);
  }
  tsan_fiber::Destroy(tsan_fiber_);
}

void ExecutionContext::Loop() {
  while (true) {
    SwitchOut();  // parked until Enter() brings a body
    (*body_)();   // the routine's entry point; never throws (see CRoutine)
    body_done_ = true;
  }
}

ContextPool::ContextPool(size_t stack_size, size_t max_cached)
    : stacks_(stack_size, max_cached), max_cached_(max_cached) {
  MutexLock lock(&mu_);
  free_.reserve(max_cached_);  // Release() never grows the list
}

ContextPool::~ContextPool() {
  MutexLock lock(&mu_);
  free_.clear();  // unwinds each parked context, then returns its stack
}

std::unique_ptr<ExecutionContext> ContextPool::Acquire() {
  {
    MutexLock lock(&mu_);
    if (!free_.empty()) {
      std::unique_ptr<ExecutionContext> c = std::move(free_.back());
      free_.pop_back();
      return c;
    }
  }
  return std::make_unique<ExecutionContext>(&stacks_);
}

void ContextPool::Release(std::unique_ptr<ExecutionContext> context) {
  {
    MutexLock lock(&mu_);
    if (free_.size() < max_cached_) {
      free_.push_back(std::move(context));
      return;
    }
  }
  context.reset();  // beyond the cache: unwind and free, outside the lock
}

size_t ContextPool::Reserve(size_t contexts) {
  const size_t target = contexts < max_cached_ ? contexts : max_cached_;
  while (true) {
    {
      MutexLock lock(&mu_);
      if (free_.size() >= target) return free_.size();
    }
    // Made outside the lock (it maps a stack); a concurrent Release may
    // overshoot the target by a few, never the cache's bound.
    Release(std::make_unique<ExecutionContext>(&stacks_));
  }
}

}  // namespace scheduler
}  // namespace cyber
