// cyber_graph_test(strict = False): the same typo graph launches, with the
// warnings kept for the test to look at.

#include "cyber/mainboard/testing/graph_check_components.h"
#include "cyber/testing/graph_test.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

TEST_F(GraphTest, StrictFalseLaunchesAGraphWithWarnings) {
  EXPECT_FALSE(GraphTestStrict());
  const absl::Status s = Launch();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(graph().launcher().ChannelWarnings().size(), 2u);
}

}  // namespace
}  // namespace cyber
