#include "scheduler/execution_context.h"

#include <utility>

#include "cyber/common/log.h"

#if defined(__SANITIZE_THREAD__)
#define CYBER_TSAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CYBER_TSAN_FIBERS 1
#endif
#endif

#if defined(CYBER_TSAN_FIBERS)
#include <sanitizer/tsan_interface.h>
#endif

namespace cyber {
namespace scheduler {

namespace {

// ThreadSanitizer does not know about stack switches (Boost 1.74 has no TSan
// support): each context is a TSan fiber, and every switch is announced
// right before it happens. No-ops in other builds.
#if defined(CYBER_TSAN_FIBERS)
void* TsanCreateFiber() { return __tsan_create_fiber(0); }
void TsanDestroyFiber(void* f) { __tsan_destroy_fiber(f); }
void* TsanCurrentFiber() { return __tsan_get_current_fiber(); }
void TsanSwitchTo(void* f) { __tsan_switch_to_fiber(f, 0); }
#else
void* TsanCreateFiber() { return nullptr; }
void TsanDestroyFiber(void*) {}
void* TsanCurrentFiber() { return nullptr; }
void TsanSwitchTo(void*) {}
#endif

}  // namespace

ExecutionContext::ExecutionContext(StackPool* stacks)
    : tsan_fiber_(TsanCreateFiber()) {
  fiber_ = boost::context::fiber(
      std::allocator_arg, PooledStackAllocator(stacks),
      [this](boost::context::fiber&& caller) {
        caller_ = std::move(caller);
        Loop();  // only left by the forced unwind of ~ExecutionContext
        return std::move(caller_);
      });
}

ExecutionContext::~ExecutionContext() {
  if (fiber_) {
    // Resuming a parked fiber to destroy it unwinds its stack (Boost throws
    // forced_unwind at its suspension point) and comes back here.
    tsan_caller_ = TsanCurrentFiber();
    TsanSwitchTo(tsan_fiber_);
    fiber_ = boost::context::fiber();
    TsanSwitchTo(tsan_caller_);
  }
  TsanDestroyFiber(tsan_fiber_);
}

void ExecutionContext::Loop() {
  while (true) {
    (*body_)();  // the routine's entry point; never throws (see CRoutine)
    body_done_ = true;
    SwitchOut();
  }
}

bool ExecutionContext::Enter(std::function<void()>* body) {
  if (body != nullptr) {  // a new body for this (idle) context
    body_ = body;
    body_done_ = false;
  }
  tsan_caller_ = TsanCurrentFiber();
  TsanSwitchTo(tsan_fiber_);
  fiber_ = std::move(fiber_).resume();
  return body_done_;
}

void ExecutionContext::SwitchOut() {
  TsanSwitchTo(tsan_caller_);
  caller_ = std::move(caller_).resume();
}

ContextPool::ContextPool(size_t stack_size, size_t max_cached)
    : stacks_(stack_size, max_cached), max_cached_(max_cached) {}

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

}  // namespace scheduler
}  // namespace cyber
