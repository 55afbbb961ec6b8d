#include "scheduler/config/sched_policy.h"

#include <sched.h>

#include "gtest/gtest.h"

namespace cyber {
namespace scheduler {
namespace {

TEST(SchedPolicyTest, NamesRoundTrip) {
  for (int policy : {SCHED_OTHER, SCHED_FIFO, SCHED_RR}) {
    EXPECT_EQ(SchedPolicyFromName(SchedPolicyName(policy)), policy);
  }
  EXPECT_EQ(SchedPolicyFromName("sched_fifo"), std::nullopt);  // exact case
  EXPECT_EQ(SchedPolicyFromName("SCHED_BATCH"), std::nullopt);
  EXPECT_EQ(SchedPolicyName(SCHED_BATCH), "policy 3");
}

TEST(SchedPolicyTest, RealtimeRangeMatchesTheKernel) {
  for (int policy : {SCHED_FIFO, SCHED_RR}) {
    std::optional<PriorityRange> range = PriorityRangeFor(policy);
    ASSERT_TRUE(range.has_value());
    EXPECT_EQ(range->min, sched_get_priority_min(policy));
    EXPECT_EQ(range->max, sched_get_priority_max(policy));
  }
}

TEST(SchedPolicyTest, OtherRangeIsTheNiceRange) {
  std::optional<PriorityRange> range = PriorityRangeFor(SCHED_OTHER);
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->min, -20);
  EXPECT_EQ(range->max, 19);
  EXPECT_EQ(PriorityRangeFor(SCHED_IDLE), std::nullopt);
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
