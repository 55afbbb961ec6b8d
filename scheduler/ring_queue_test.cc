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
