#include "scheduler/ring_queue.h"

#include <memory>

#include "gtest/gtest.h"

namespace cyber {
namespace scheduler {
namespace {

TEST(RingQueueTest, FifoAcrossWrapAndGrowth) {
  RingQueue<int> q;
  int next_in = 0;
  int next_out = 0;
  // Interleave so the head wraps around before and after each growth.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < round + 3; ++i) q.push_back(next_in++);
    for (int i = 0; i < round + 1; ++i) {
      ASSERT_FALSE(q.empty());
      EXPECT_EQ(q.front(), next_out);
      EXPECT_EQ(q.pop_front(), next_out++);
    }
    EXPECT_EQ(q.size(), static_cast<size_t>(next_in - next_out));
  }
  while (!q.empty()) EXPECT_EQ(q.pop_front(), next_out++);
  EXPECT_EQ(next_out, next_in);
}

TEST(RingQueueTest, SteadyStateNeverGrows) {
  RingQueue<int> q;
  for (int i = 0; i < 10; ++i) q.push_back(i);
  const size_t capacity = q.capacity();
  for (int i = 0; i < 100000; ++i) {
    q.push_back(i);
    q.pop_front();
  }
  EXPECT_EQ(q.capacity(), capacity);
  EXPECT_EQ(q.size(), 10u);
}

TEST(RingQueueTest, AMovedFromQueueIsEmptyAndUsable) {
  RingQueue<int> a;
  for (int i = 0; i < 20; ++i) a.push_back(i);
  a.pop_front();
  RingQueue<int> b(std::move(a));
  EXPECT_EQ(b.size(), 19u);
  EXPECT_EQ(b.pop_front(), 1);
  EXPECT_TRUE(a.empty());  // NOLINT: moved from on purpose
  a.push_back(7);
  EXPECT_EQ(a.pop_front(), 7);
  RingQueue<int> c;
  c = std::move(b);
  EXPECT_EQ(c.size(), 18u);
  EXPECT_EQ(c.pop_front(), 2);
}

TEST(RingQueueTest, PopReleasesTheSlot) {
  RingQueue<std::shared_ptr<int>> q;
  auto value = std::make_shared<int>(7);
  q.push_back(value);
  EXPECT_EQ(value.use_count(), 2);
  std::shared_ptr<int> out = q.pop_front();
  out.reset();
  // Nothing left in the ring holds it.
  EXPECT_EQ(value.use_count(), 1);
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
