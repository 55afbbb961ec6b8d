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
//       EXPECT_TRUE(graph().launcher().StopComponent("gps").ok());
//     }).ok());
//     graph().RunFor(absl::Seconds(3));
//     ...
//   }
//
// Why a fixture and a main of our own: the rule passes the dag files as
// --cyber_graph_dag=<runfiles path> arguments, so a test names its graph
// once, in BUILD, and runs from any workspace.
//
// Strict by default: the rule's `strict` attribute (True unless set) is
// passed as --cyber_graph_strict=true|false, and the fixture's graph then
// launches in strict mode (cyber/mainboard/launcher.h): a channel read and
// never written, or written and never read, or a service called and served
// by no one (with the served name it looks like), fails Launch() with every
// such warning listed. Declare a channel written on purpose for nobody in the
// writer's dag entry (`unread_outputs: "/alarm"`), or set strict = False
// with a comment saying why. A test may change it before Launch():
// graph().launcher().set_strict(false).
//
// Launch() also logs its error (glog, to stderr), so a plain
// ASSERT_TRUE(Launch().ok()) shows why it failed.
//
// A graph that deadlocks (a Clear() that stops a timer while holding the
// lock its callback needs, a routine that blocks the only thread) does not
// hang until Bazel's timeout: after 10 s of wall time without progress, or
// a stop that lets 10 s of simulated time pass with no component stopping,
// the graph prints what it waits for (components not stopped, timer stops
// in progress with their callers) and aborts the test binary
// (SimulatedGraph::Options::stuck_after and stop_time_limit,
// cyber/simulation/simulated_graph.h). The end of a test stops the graph
// (in reverse file order) the same way, at simulation speed.
//
// A recording replayed into the graph: the rule's `recording` (an MCAP
// file) and `recording_channels` reach the fixture's graph as
// SimulatedGraph::Options::recording, unless the options given to the
// constructor name a recording of their own. Launch() reads it and checks
// its channels against the graph's readers; each recorded message then
// arrives at its recorded instant during graph().Run*(), after the graph's
// own timers of that instant (cyber/simulation/simulated_graph.h):
//
//   TEST_F(GraphTest, FusionOfTheRecordedDrive) {
//     ASSERT_TRUE(Launch().ok());
//     graph().RunFor(absl::Seconds(10));
//     EXPECT_EQ(component<Fusion>("fusion")->fused(), 1000u);
//     EXPECT_EQ(graph().TraceDigest(), "...");  // or: equal across runs
//   }
//
// Options of the graph (its scheduler conf, the start instant, those two
// limits) come through the constructor of a fixture of one's own:
//
//   class SlowShutdownTest : public cyber::GraphTest {
//    protected:
//     SlowShutdownTest() : GraphTest(Options()) {}
//     static cyber::SimulatedGraph::Options Options() {
//       cyber::SimulatedGraph::Options o;
//       o.stop_time_limit = absl::Minutes(2);  // the arm parks slowly
//       return o;
//     }
//   };
//   TEST_F(SlowShutdownTest, ArmParksBeforeTheDriverStops) { ... }
//
// Threads: as SimulatedGraph (the test's thread drives it).

#ifndef CYBER_TESTING_GRAPH_TEST_H_
#define CYBER_TESTING_GRAPH_TEST_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/simulation/simulated_graph.h"
#include "gtest/gtest.h"

namespace cyber {

// The `dags` of the cyber_graph_test rule, in order (runfiles paths).
const std::vector<std::string>& GraphTestDags();
// The rule's `strict` attribute (false in a binary not made by the rule).
bool GraphTestStrict();
// The rule's `recording` (runfiles path) and `recording_channels`; an
// empty path when the rule names none.
const RecordingInput& GraphTestRecording();

class GraphTest : public testing::Test {
 protected:
  GraphTest() : GraphTest(SimulatedGraph::Options()) {}
  // The graph made with `options` (see above).
  explicit GraphTest(SimulatedGraph::Options options)
      : graph_(std::make_unique<SimulatedGraph>(WithRuleRecording(std::move(options)))) {
    graph_->launcher().set_strict(GraphTestStrict());
  }
  // Launches every dag of the rule on this test's graph; logs an error.
  absl::Status Launch();
  SimulatedGraph& graph() { return *graph_; }
  // The launched component `name` as a T, to read its state or call it:
  //   Planner* planner = component<Planner>("planner");
  //   ASSERT_NE(planner, nullptr);
  //   graph().RunFor(absl::Seconds(2));
  //   EXPECT_EQ(planner->answered(), 20u);
  // Null, after ADD_FAILURE() with the reason (no running component of
  // that name, naming the running ones; or one of another class, naming
  // it). The pointer is valid until the component is stopped and
  // destroyed (graph().Stop(), the end of the test); nothing runs between
  // graph().Run*() calls, so the test may touch it freely there.
  template <typename T>
  T* component(const std::string& name) {
    absl::StatusOr<T*> found = graph_->Find<T>(name);
    if (!found.ok()) {
      ADD_FAILURE() << found.status().message();
      return nullptr;
    }
    return *found;
  }

 private:
  // `options`, with the rule's recording unless they name one.
  static SimulatedGraph::Options WithRuleRecording(SimulatedGraph::Options options) {
    if (options.recording.path.empty()) options.recording = GraphTestRecording();
    return options;
  }

  std::unique_ptr<SimulatedGraph> graph_;
};

}  // namespace cyber

#endif  // CYBER_TESTING_GRAPH_TEST_H_
