#include "scheduler/block_pool.h"

namespace cyber {
namespace scheduler {

BlockPool::BlockPool(size_t max_cached) : max_cached_(max_cached) {
  MutexLock lock(&mu_);
  free_.reserve(max_cached_);
}

BlockPool::~BlockPool() {
  MutexLock lock(&mu_);
  for (void* block : free_) ::operator delete(block);
}

void* BlockPool::Allocate(size_t bytes) {
  {
    MutexLock lock(&mu_);
    if (block_bytes_ == 0) block_bytes_ = bytes;
    if (bytes == block_bytes_) {
      if (!free_.empty()) {
        void* block = free_.back();
        free_.pop_back();
        ++stats_.reused;
        return block;
      }
      ++stats_.allocated;
    } else {
      ++stats_.other_sizes;
    }
  }
  return ::operator new(bytes);
}

void BlockPool::Deallocate(void* block, size_t bytes) {
  {
    MutexLock lock(&mu_);
    if (bytes == block_bytes_ && free_.size() < max_cached_) {
      free_.push_back(block);
      return;
    }
  }
  ::operator delete(block);
}

size_t BlockPool::Reserve(size_t bytes, size_t blocks) {
  MutexLock lock(&mu_);
  if (block_bytes_ == 0) block_bytes_ = bytes;
  if (bytes != block_bytes_) return 0;
  const size_t target = blocks < max_cached_ ? blocks : max_cached_;
  while (free_.size() < target) {
    free_.push_back(::operator new(bytes));  // capacity reserved: no growth
    ++stats_.allocated;
  }
  return free_.size();
}

size_t BlockPool::block_bytes() const {
  MutexLock lock(&mu_);
  return block_bytes_;
}

BlockPool::Stats BlockPool::stats() const {
  MutexLock lock(&mu_);
  Stats s = stats_;
  s.cached = free_.size();
  return s;
}

}  // namespace scheduler
}  // namespace cyber
