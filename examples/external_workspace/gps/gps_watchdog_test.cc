// The GPS watchdog graph on simulated time: the GPS dies at 2.025 s, after
// its fix at 2.000 s, and the timeout fires exactly 150 ms later, once.

#include <vector>

#include "cyber/testing/graph_test.h"
#include "gps/gps_components.h"
#include "gtest/gtest.h"

namespace gps {
namespace {

using cyber::GraphTest;

TEST_F(GraphTest, TimeoutFiresExactlyWhenTheGpsStops) {
  ASSERT_TRUE(Launch().ok());
  auto fixes = graph().Tap<Fix>("/gps/fix");
  auto alarms = graph().Tap<FixTimeout>("/gps/timeout");
  ASSERT_TRUE(fixes.ok() && alarms.ok());
  ASSERT_TRUE(graph()
                  .After(absl::Milliseconds(2025),
                         [&] { graph().launcher().StopComponent("gps").IgnoreError(); })
                  .ok());
  graph().RunFor(absl::Seconds(5));

  EXPECT_EQ((*fixes)->size(), 40u);  // 50 ms, 100 ms, ..., 2000 ms
  ASSERT_EQ((*alarms)->size(), 1u);
  EXPECT_EQ((*alarms)->received()[0].at, absl::Milliseconds(2150));
  EXPECT_EQ((*alarms)->received()[0].message->last_seq, 40u);
}

}  // namespace
}  // namespace gps
