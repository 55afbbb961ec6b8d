// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// RoutineStack and StackPool: guard-paged stacks for coroutines, reused.
//
// Why: a stackful coroutine needs its own stack. Allocating one per routine
// with mmap is slow (a syscall pair, page faults), so stacks are pooled: a
// finished routine's stack goes back to the pool and the next routine takes
// it. Every stack has an inaccessible guard page below it, so a stack
// overflow is a clean SIGSEGV on the guard page instead of silent corruption
// of whatever lies below.
//
// Memory is reserved with mmap (MAP_NORESERVE): pages are only committed as
// the routine touches them, so a generous size costs address space, not RAM.
//
// Threads: StackPool is thread-safe. A stack is used by one routine at a time.

#ifndef SCHEDULER_ROUTINE_STACK_H_
#define SCHEDULER_ROUTINE_STACK_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "boost/context/stack_context.hpp"
#include "cyber/common/mutex.h"

namespace cyber {
namespace scheduler {

inline constexpr size_t kDefaultStackSize = size_t{256} << 10;  // 256 KiB
inline constexpr size_t kMinStackSize = size_t{16} << 10;

class StackPool {
 public:
  // `stack_size`: usable bytes per stack (rounded up to whole pages; the
  // guard page comes on top). `max_cached`: free stacks kept for reuse.
  // REQUIRES: stack_size >= kMinStackSize.
  StackPool(size_t stack_size, size_t max_cached);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  // A stack (reused or new): sctx.sp is its top, sctx.size its usable size.
  boost::context::stack_context Allocate();
  void Release(boost::context::stack_context sctx);

  size_t stack_size() const { return stack_size_; }
  struct Stats {
    uint64_t mapped = 0;  // stacks created with mmap
    uint64_t reused = 0;  // allocations served from the pool
    size_t cached = 0;    // free stacks held now
    size_t in_use = 0;
  };
  Stats stats() const;

 private:
  const size_t page_size_;
  const size_t stack_size_;
  const size_t max_cached_;
  mutable Mutex mu_;
  std::vector<boost::context::stack_context> free_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

// The StackAllocator boost::context::fiber expects, backed by a StackPool.
class PooledStackAllocator {
 public:
  explicit PooledStackAllocator(StackPool* pool) : pool_(pool) {}
  boost::context::stack_context allocate() { return pool_->Allocate(); }
  void deallocate(boost::context::stack_context& sctx) { pool_->Release(sctx); }

 private:
  StackPool* pool_;
};

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_ROUTINE_STACK_H_
