// What a cyber_graph_test (cyber/testing/graph_test.bzl) gives its test code:
// the graph files the rule named, and a fixture with a SimulatedGraph.
//
//   # BUILD
//   load("@cyber_timer//cyber/testing:graph_test.bzl", "cyber_graph_test")
//   cyber_graph_test(
//       name = "gps_watchdog_test",
//       dags = ["gps_watchdog.dag"],
//       srcs = ["gps_watchdog_test.cc"],
//       deps = [":gps_components"],
//   )
//
//   // gps_watchdog_test.cc
//   using cyber::GraphTest;
//   TEST_F(GraphTest, TimeoutFiresWhenTheGpsStops) {
//     ASSERT_TRUE(Launch().ok());              // every dag of the rule
//     auto alarms = graph().Tap<Alarm>("/gps/timeout");
//     ASSERT_TRUE(graph().After(absl::Seconds(2), [&] {
//       graph().launcher().StopComponent("gps").IgnoreError();
//     }).ok());
//     graph().RunFor(absl::Seconds(3));
//     ...
//   }
//
// Why a fixture and a main of our own: the rule passes the dag files as
// --cyber_graph_dag=<runfiles path> arguments, so a test names its graph
// once, in BUILD, and runs from any workspace.
//
// Threads: as SimulatedGraph (the test's thread drives it).

#ifndef CYBER_TESTING_GRAPH_TEST_H_
#define CYBER_TESTING_GRAPH_TEST_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cyber/simulation/simulated_graph.h"
#include "gtest/gtest.h"

namespace cyber {

// The `dags` of the cyber_graph_test rule, in order (runfiles paths).
const std::vector<std::string>& GraphTestDags();

class GraphTest : public testing::Test {
 protected:
  GraphTest() : graph_(std::make_unique<SimulatedGraph>()) {}
  // Launches every dag of the rule on this test's graph.
  absl::Status Launch() { return graph_->Launch(GraphTestDags()); }
  SimulatedGraph& graph() { return *graph_; }

 private:
  std::unique_ptr<SimulatedGraph> graph_;
};

}  // namespace cyber

#endif  // CYBER_TESTING_GRAPH_TEST_H_
