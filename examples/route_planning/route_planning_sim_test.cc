// route_planning.dag on simulated time, in one process (a cyber_graph_test):
// every call of the planner ends as the routing times say, in every run.
// The same graph as two processes in lockstep is route_planning_lockstep_test
// (BUILD): the same outcomes.

#include <cstdio>

#include "cyber/testing/graph_test.h"
#include "examples/route_planning/route_components.h"
#include "gtest/gtest.h"

namespace route_planning {
namespace {

using cyber::GraphTest;

TEST_F(GraphTest, EveryFifthRouteTimesOutTheRestAreAnsweredInTime) {
  ASSERT_TRUE(Launch().ok());
  const Planner* planner = component<Planner>("planner");
  const RoutingServer* routing = component<RoutingServer>("routing");
  ASSERT_NE(planner, nullptr);
  ASSERT_NE(routing, nullptr);
  graph().RunFor(absl::Seconds(10) + absl::Milliseconds(50));

  // 100 calls (at 100 ms, 200 ms, ..., 10 s), each decided within its 50 ms:
  // requests 5, 10, ..., 100 take 80 ms and time out at 50 ms; the other 80
  // are answered at 20 ms.
  EXPECT_EQ(planner->sent(), 100u);
  EXPECT_EQ(planner->routed(), 80u);
  EXPECT_EQ(planner->timed_out(), 20u);
  EXPECT_EQ(planner->failed(), 0u);
  // The server answered every one that was due by the end: the hard route
  // of 10 s (due at 10.08 s) is still being computed.
  EXPECT_EQ(routing->answered(), 99u);
  graph().Stop();
  std::printf("%s", cyber::Launcher::SummaryTable(graph().Stats()).c_str());
}

}  // namespace
}  // namespace route_planning
