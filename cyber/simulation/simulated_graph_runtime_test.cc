// A simulated graph owns a runtime: code it runs (actions, component
// Init(), callbacks) makes Nodes, timers and tasks on the graph's runtime,
// never on the process's.

#include <memory>

#include "absl/time/time.h"
#include "cyber/common/runtime_scope.h"
#include "cyber/simulation/simulated_graph.h"
#include "cyber/node/node.h"
#include "gtest/gtest.h"
#include "scheduler/default_scheduler.h"

namespace cyber {
namespace {

// Issue 21: a Node("x") made by graph code used the process scheduler.
TEST(SimulatedGraphRuntimeTest, ANodeMadeByGraphCodeUsesTheGraphsSchedulerAndBus) {
  SimulatedGraph graph;
  scheduler::Scheduler* node_scheduler = nullptr;
  ChannelBus* node_bus = nullptr;
  ASSERT_TRUE(graph
                  .After(absl::Milliseconds(10),
                         [&] {
                           Node node("made_by_graph_code");
                           node_scheduler = node.scheduler();
                           node_bus = node.bus();
                         })
                  .ok());
  graph.RunFor(absl::Milliseconds(20));
  EXPECT_EQ(node_scheduler, &graph.scheduler());
  EXPECT_EQ(node_bus, &graph.bus());
}

TEST(SimulatedGraphRuntimeTest, TestCodeEntersTheGraphsRuntime) {
  SimulatedGraph graph;
  {
    ScopedRuntime enter(graph.runtime().scope());
    Node node("test_code");
    EXPECT_EQ(node.scheduler(), &graph.scheduler());
    EXPECT_EQ(node.bus(), &graph.bus());
    EXPECT_EQ(scheduler::CurrentScheduler(), &graph.scheduler());
  }
  EXPECT_NE(scheduler::CurrentScheduler(), &graph.scheduler());
}

}  // namespace
}  // namespace cyber
