// PostedFrontEnd (posted_front_end.h): what the benchmark's BM_Posted_*
// rows rest on. Cancel answers from the caller's view, the last command on
// an entry wins when drained, and under two producers and a consumer
// draining all along the wheel ends holding exactly what the producers'
// own records say is armed.

#include "tests/reference/posted_front_end.h"

#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace reference {
namespace {

TEST(PostedFrontEndTest, CancelAnswersFromTheCallersViewAndTheLastCommandWins) {
  PostedFrontEnd front;
  PostedEntry e;
  EXPECT_FALSE(front.Arm(&e, 3));  // was idle
  EXPECT_TRUE(front.Cancel(&e));   // was armed, though not yet applied
  EXPECT_FALSE(front.Cancel(&e));  // idle already
  EXPECT_FALSE(front.Arm(&e, 5));
  EXPECT_TRUE(front.Arm(&e, 9));   // a re-arm
  EXPECT_EQ(front.Drain(), 1u);    // queued once for all five commands
  EXPECT_EQ(front.wheel().size(), 1u);
  ASSERT_TRUE(e.floor.armed());
  EXPECT_EQ(e.floor.expires(), 9u);
  EXPECT_EQ(front.Drain(), 0u);

  EXPECT_TRUE(front.Cancel(&e));
  EXPECT_EQ(front.Drain(), 1u);
  EXPECT_EQ(front.wheel().size(), 0u);
  EXPECT_FALSE(e.floor.armed());
}

TEST(PostedFrontEndTest, EveryPostedEntryIsAppliedOnce) {
  PostedFrontEnd front;
  std::vector<PostedEntry> entries(5);
  for (int i = 4; i >= 0; --i) front.Arm(&entries[i], 10 + i);
  EXPECT_EQ(front.Drain(), 5u);
  EXPECT_EQ(front.wheel().size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(entries[i].floor.expires(), 10u + i);
  for (PostedEntry& e : entries) front.Cancel(&e);
  EXPECT_EQ(front.Drain(), 5u);
  EXPECT_EQ(front.wheel().size(), 0u);
}

// Two producers, each with its own entries (so each knows exactly what
// Cancel must answer and what the entry's last command was), and a
// consumer draining while they post.
TEST(PostedFrontEndTest, TwoProducersAndADrainingConsumerLoseNoCommand) {
  constexpr int kPerProducer = 1000;
  constexpr int kOps = 200000;
  PostedFrontEnd front;
  std::vector<PostedEntry> entries(2 * kPerProducer);
  struct Record {
    bool armed = false;
    uint64_t expires = 0;
  };
  std::vector<Record> model(entries.size());
  std::atomic<int> wrong_answers{0};
  std::atomic<int> producing{2};
  std::thread consumer([&] {
    while (producing.load(std::memory_order_acquire) > 0) front.Drain();
  });
  auto produce = [&](int first, uint32_t seed) {
    std::mt19937 rng(seed);
    for (int i = 0; i < kOps; ++i) {
      const int k = first + static_cast<int>(rng() % kPerProducer);
      if (rng() % 3 == 0) {
        if (front.Cancel(&entries[k]) != model[k].armed) wrong_answers.fetch_add(1);
        model[k].armed = false;
      } else {
        const uint64_t expires = 1 + rng() % 100000;
        if (front.Arm(&entries[k], expires) != model[k].armed) wrong_answers.fetch_add(1);
        model[k] = {true, expires};
      }
    }
    producing.fetch_sub(1, std::memory_order_release);
  };
  std::thread a(produce, 0, 1u);
  std::thread b(produce, kPerProducer, 2u);
  a.join();
  b.join();
  consumer.join();
  front.Drain();  // what the consumer had not seen linked yet
  EXPECT_EQ(wrong_answers.load(), 0);
  size_t armed = 0;
  for (size_t k = 0; k < entries.size(); ++k) {
    ASSERT_EQ(entries[k].floor.armed(), model[k].armed) << "entry " << k;
    if (model[k].armed) {
      ++armed;
      EXPECT_EQ(entries[k].floor.expires(), model[k].expires) << "entry " << k;
    }
    EXPECT_EQ(entries[k].state.load() & PostedFrontEnd::kQueued, 0u) << "entry " << k;
  }
  EXPECT_EQ(front.wheel().size(), armed);
  for (PostedEntry& e : entries) front.Cancel(&e);
  front.Drain();
  EXPECT_EQ(front.wheel().size(), 0u);
}

}  // namespace
}  // namespace reference
}  // namespace cyber
