// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// BlockPool and PoolAllocator: recycled memory for objects of one size, so
// that making a routine costs no heap allocation in the steady state.
//
// Why: every due timer callback runs in a CRoutine owned by a shared_ptr.
// A dispatch reuses a finished routine the scheduler kept (scheduler.h,
// kRecycledRoutines); only beyond those is a routine made, and its memory
// comes from here.
// std::allocate_shared with a PoolAllocator puts the routine and its
// control block in one block taken from here; when the last reference
// goes, the block comes back here instead of to malloc. The allocator
// stored in each control block holds the pool by shared_ptr, so the pool
// outlives every block it handed out, whatever order the scheduler and its
// routines go away in.
//
// A pool serves blocks of the first size it is asked for; other sizes go
// to operator new (counted in Stats::other_sizes). At most `max_cached`
// free blocks are kept; the list of free blocks is reserved up front, so
// returning a block never allocates either.
//
// Threads: every method from any thread.

#ifndef SCHEDULER_BLOCK_POOL_H_
#define SCHEDULER_BLOCK_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "cyber/common/mutex.h"

namespace cyber {
namespace scheduler {

class BlockPool {
 public:
  struct Stats {
    uint64_t allocated = 0;    // blocks taken from operator new
    uint64_t reused = 0;       // blocks served from the free list
    uint64_t other_sizes = 0;  // requests of another size (not pooled)
    size_t cached = 0;         // free blocks held now
  };

  explicit BlockPool(size_t max_cached);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // REQUIRES: the alignment the type needs is at most operator new's
  // default (PoolAllocator checks at compile time).
  void* Allocate(size_t bytes);
  void Deallocate(void* block, size_t bytes);
  // Takes blocks of `bytes` from operator new until `blocks` free ones are
  // cached (at most max_cached), so the next `blocks` Allocate() calls of
  // that size allocate nothing however late earlier blocks come back.
  // Fixes the block size if no Allocate() did yet. Returns the number of
  // free blocks cached; 0 if `bytes` is not the pool's size.
  size_t Reserve(size_t bytes, size_t blocks);
  Stats stats() const;
  // The size of the blocks pooled; 0 until the first Allocate/Reserve.
  size_t block_bytes() const;

 private:
  const size_t max_cached_;
  mutable Mutex mu_;
  size_t block_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // 0: not fixed yet
  std::vector<void*> free_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

// A standard allocator drawing on a shared BlockPool (for allocate_shared).
template <typename T>
class PoolAllocator {
 public:
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "BlockPool hands out operator new's default alignment");

  explicit PoolAllocator(std::shared_ptr<BlockPool> pool)
      : pool_(std::move(pool)) {}
  template <typename U>
  PoolAllocator(const PoolAllocator<U>& other)  // NOLINT: rebinding
      : pool_(other.pool()) {}

  T* allocate(size_t n) {
    return static_cast<T*>(pool_->Allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) { pool_->Deallocate(p, n * sizeof(T)); }

  const std::shared_ptr<BlockPool>& pool() const { return pool_; }
  template <typename U>
  bool operator==(const PoolAllocator<U>& other) const {
    return pool_ == other.pool();
  }
  template <typename U>
  bool operator!=(const PoolAllocator<U>& other) const {
    return !(*this == other);
  }

 private:
  std::shared_ptr<BlockPool> pool_;
};

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_BLOCK_POOL_H_
