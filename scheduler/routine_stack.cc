#include "scheduler/routine_stack.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cyber/common/log.h"

namespace cyber {
namespace scheduler {

namespace {

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

StackPool::StackPool(size_t stack_size, size_t max_cached)
    : page_size_(static_cast<size_t>(sysconf(_SC_PAGESIZE))),
      stack_size_(RoundUp(stack_size, page_size_)),
      max_cached_(max_cached) {
  ACHECK(stack_size >= kMinStackSize)
      << "StackPool: stack size " << stack_size << " bytes is below the minimum "
      << kMinStackSize;
}

StackPool::~StackPool() {
  MutexLock lock(&mu_);
  ACHECK(stats_.in_use == 0) << "StackPool destroyed with " << stats_.in_use
                             << " stacks still in use";
  for (const auto& sctx : free_) {
    char* top = static_cast<char*>(sctx.sp);
    munmap(top - sctx.size - page_size_, sctx.size + page_size_);
  }
}

boost::context::stack_context StackPool::Allocate() {
  {
    MutexLock lock(&mu_);
    ++stats_.in_use;
    if (!free_.empty()) {
      boost::context::stack_context sctx = free_.back();
      free_.pop_back();
      ++stats_.reused;
      stats_.cached = free_.size();
      return sctx;
    }
    ++stats_.mapped;
  }
  const size_t total = stack_size_ + page_size_;
  void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  ACHECK(base != MAP_FAILED) << "StackPool: mmap of " << total
                             << " bytes failed: " << strerror(errno);
  // The lowest page is the guard: stacks grow down into it on overflow.
  ACHECK(mprotect(base, page_size_, PROT_NONE) == 0)
      << "StackPool: mprotect of the guard page failed: " << strerror(errno);
  boost::context::stack_context sctx;
  sctx.size = stack_size_;
  sctx.sp = static_cast<char*>(base) + total;
  return sctx;
}

void StackPool::Release(boost::context::stack_context sctx) {
  {
    MutexLock lock(&mu_);
    --stats_.in_use;
    if (free_.size() < max_cached_) {
      free_.push_back(sctx);
      stats_.cached = free_.size();
      return;
    }
  }
  char* top = static_cast<char*>(sctx.sp);
  munmap(top - sctx.size - page_size_, sctx.size + page_size_);
}

StackPool::Stats StackPool::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace scheduler
}  // namespace cyber
