#include "scheduler/block_pool.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace cyber {
namespace scheduler {
namespace {

struct Payload {
  std::string text;
  int value = 0;
};

TEST(BlockPoolTest, ReusesTheBlocksOfOneSize) {
  auto pool = std::make_shared<BlockPool>(/*max_cached=*/4);
  void* a = pool->Allocate(64);
  pool->Deallocate(a, 64);
  void* b = pool->Allocate(64);
  EXPECT_EQ(a, b);  // the block came back
  pool->Deallocate(b, 64);
  const BlockPool::Stats s = pool->stats();
  EXPECT_EQ(s.allocated, 1u);
  EXPECT_EQ(s.reused, 1u);
  EXPECT_EQ(s.cached, 1u);
}

TEST(BlockPoolTest, ReservedBlocksServeTheNextAllocationsWithoutNew) {
  auto pool = std::make_shared<BlockPool>(/*max_cached=*/8);
  EXPECT_EQ(pool->Reserve(64, 5), 5u);
  EXPECT_EQ(pool->block_bytes(), 64u);
  void* blocks[5];
  for (void*& b : blocks) b = pool->Allocate(64);
  BlockPool::Stats s = pool->stats();
  EXPECT_EQ(s.allocated, 5u);  // all by Reserve
  EXPECT_EQ(s.reused, 5u);
  EXPECT_EQ(s.cached, 0u);
  for (void* b : blocks) pool->Deallocate(b, 64);
  // Held blocks do not count: Reserve tops the free list up.
  EXPECT_EQ(pool->Reserve(64, 3), 5u);
  EXPECT_EQ(pool->Reserve(64, 100), 8u);  // capped by max_cached
  EXPECT_EQ(pool->Reserve(32, 1), 0u);    // not the pool's size
  EXPECT_EQ(pool->stats().allocated, 8u);
}

TEST(BlockPoolTest, OtherSizesAreNotPooled) {
  auto pool = std::make_shared<BlockPool>(4);
  void* a = pool->Allocate(64);
  void* b = pool->Allocate(128);
  pool->Deallocate(b, 128);
  pool->Deallocate(a, 64);
  const BlockPool::Stats s = pool->stats();
  EXPECT_EQ(s.other_sizes, 1u);
  EXPECT_EQ(s.cached, 1u);  // only the 64-byte block
}

TEST(BlockPoolTest, KeepsAtMostMaxCached) {
  auto pool = std::make_shared<BlockPool>(2);
  void* blocks[3];
  for (void*& p : blocks) p = pool->Allocate(32);
  for (void* p : blocks) pool->Deallocate(p, 32);
  EXPECT_EQ(pool->stats().cached, 2u);
}

TEST(BlockPoolTest, SharedObjectsOutliveTheirPoolsOwner) {
  std::shared_ptr<Payload> payload;
  {
    auto pool = std::make_shared<BlockPool>(8);
    payload = std::allocate_shared<Payload>(PoolAllocator<Payload>(pool),
                                            Payload{"kept", 3});
    auto again = std::allocate_shared<Payload>(PoolAllocator<Payload>(pool));
    again.reset();
    EXPECT_EQ(pool->stats().cached, 1u);
  }
  // The pool's owner is gone; the control block's allocator holds the pool.
  EXPECT_EQ(payload->text, "kept");
  EXPECT_EQ(payload->value, 3);
  payload.reset();  // returns its block to the pool, which then goes
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
