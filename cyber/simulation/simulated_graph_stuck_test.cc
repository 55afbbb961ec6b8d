// A simulated graph that deadlocks fails at once with a report, instead of
// hanging until Bazel's timeout (SimulatedGraph::Options::stuck_after):
//
//  * a stop stuck behind a Clear() that stops a timer while holding the
//    lock its callback needs (cyber/mainboard/testing/stuck_stop_components.h):
//    the report names the component whose Shutdown() is in progress, the
//    one not reached, and the timer stop with its caller;
//  * a run whose routine blocks the driving thread (waits for a future
//    that nothing will fulfil): the report says what blocks;
//  * a stop that deadlocks while another timer keeps simulated time
//    moving (the worker parks between tries instead of blocking): reported
//    once Options::stop_time_limit of simulated time has passed with no
//    component stopped;
//  * and what makes progress is not reported: a stop that needs simulated
//    time to pass step by step, many slow routines at one instant.
//
// Death tests in the "threadsafe" style (the child re-runs the test alone),
// so no thread of an earlier test is forked half-way. The deaths wait for
// stuck_after of wall time without progress, which a loaded machine only
// makes longer: no assertion depends on speed.

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>

#include "absl/time/time.h"
#include "cyber/simulation/simulated_graph.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"

namespace cyber {
namespace {

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// "ticker" starts first, "stuck" second: stopped in reverse order, "stuck"
// is in progress when the stop sticks and "ticker" is never reached.
constexpr char kStuckGraph[] = R"(
module_config {
  timer_components { class_name: "Ticker" config { name: "ticker" interval: 10 } }
  timer_components { class_name: "StuckStop" config { name: "stuck" interval: 10 } }
}
)";

SimulatedGraph::Options Watched(absl::Duration stuck_after) {
  SimulatedGraph::Options o;
  o.stuck_after = stuck_after;
  return o;
}

class SimulatedGraphStuckTest : public testing::Test {
 protected:
  SimulatedGraphStuckTest() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(SimulatedGraphStuckTest, AStopThatDeadlocksFailsWithTheReport) {
  const std::string dag = WriteFile("stuck.dag", kStuckGraph);
  EXPECT_DEATH(
      {
        SimulatedGraph graph(Watched(absl::Seconds(3)));
        if (!graph.Launch({dag}).ok()) std::exit(1);
        graph.RunFor(absl::Milliseconds(100));
        graph.Stop();  // never returns
      },
      "simulated graph \"sim\": stuck: Stop\\(\\) has made no progress for [0-9.]+m?s "
      "of wall time \\(SimulatedGraph::Options::stuck_after\\) at [0-9.]+m?s of simulated "
      "time\n"
      "simulated graph \"sim\": components not stopped: \"stuck\" \\(Shutdown\\(\\) in "
      "progress\\), \"ticker\"\n"
      "simulated graph \"sim\": timer stops in progress:\n"
      "simulated graph \"sim\":   timer \"stuck_worker\": Stop\\(\\) waiting [0-9.]+m?s "
      "for its running callback; caller: thread [0-9]+ \"[^\"]*\", in component \"stuck\" "
      "Shutdown\\(\\)\n"
      "component +class .*\n"
      "ticker +Ticker .*\n"
      "stuck +StuckStop .*\n"
      "simulated graph \"sim\": aborting: the graph cannot go on");
}

TEST_F(SimulatedGraphStuckTest, ARunWhoseRoutineBlocksTheDrivingThreadFailsWithTheReport) {
  EXPECT_DEATH(
      {
        SimulatedGraph graph(Watched(absl::Seconds(3)));
        std::promise<void> never;
        // A routine that waits for what no routine will do: with one
        // thread, the whole graph stops with it.
        if (!graph.After(absl::Milliseconds(20), [&] { never.get_future().wait(); }).ok()) {
          std::exit(1);
        }
        graph.RunFor(absl::Seconds(1));  // never returns
      },
      "simulated graph \"sim\": stuck: RunFor\\(\\)/RunUntil\\(\\) has made no progress "
      "for [0-9.]+m?s of wall time \\(SimulatedGraph::Options::stuck_after\\) at 20ms of "
      "simulated time\n"
      "simulated graph \"sim\": components not stopped: none\n"
      "simulated graph \"sim\": timer stops in progress: none\n"
      "simulated graph \"sim\": the driving thread has not come back from a routine");
}

// "parked" waits for its lock in a routine that sleeps between tries, and
// "ticker" keeps simulated time moving: the stop never ends, though time
// moves. Reported once stop_time_limit has passed with no component
// stopped.
constexpr char kParkedStuckGraph[] = R"(
module_config {
  timer_components { class_name: "Ticker" config { name: "ticker" interval: 10 } }
  timer_components { class_name: "ParkedStuckStop" config { name: "parked" interval: 10 } }
}
)";

TEST_F(SimulatedGraphStuckTest, AStopThatDeadlocksWhileTimeMovesFailsWithTheReport) {
  const std::string dag = WriteFile("parked.dag", kParkedStuckGraph);
  EXPECT_DEATH(
      {
        SimulatedGraph::Options o;
        o.stuck_after = absl::Seconds(60);  // the wall watch is not what fires
        o.stop_time_limit = absl::Milliseconds(20);
        SimulatedGraph graph(o);
        if (!graph.Launch({dag}).ok()) std::exit(1);
        graph.RunFor(absl::Milliseconds(100));
        graph.Stop();  // never returns
      },
      "simulated graph \"sim\": stuck: Stop\\(\\) has let 20ms of simulated time pass "
      "\\(SimulatedGraph::Options::stop_time_limit\\) while no component finished its "
      "shutdown at [0-9.]+m?s of simulated time\n"
      "simulated graph \"sim\": components not stopped: \"parked\" \\(Shutdown\\(\\) in "
      "progress\\), \"ticker\"\n"
      "simulated graph \"sim\": timer stops in progress:\n"
      // The stop runs at simulation speed: it may have waited less than a
      // millisecond of wall time ("0").
      "simulated graph \"sim\":   timer \"parked_worker\": Stop\\(\\) waiting ([0-9.]+m?s|0) "
      "for its running callback; caller: thread [0-9]+ \"[^\"]*\", in component \"parked\" "
      "Shutdown\\(\\)\n");
}

// Spins the thread for `d` of wall time (steady clock): real work that no
// simulated time stands for.
void BusyFor(absl::Duration d) {
  const auto until = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(d);
  while (std::chrono::steady_clock::now() < until) {
  }
}

TEST_F(SimulatedGraphStuckTest, ManyBusyRoutinesAtOneInstantAreNotStuck) {
  // 40 actions due at one instant, each 50 ms of real work: 2 s of wall
  // time at that instant, twice stuck_after (1 s), yet each routine comes
  // back after a twentieth of it. Every routine that returns is progress.
  // Spun on the steady clock, so a fast machine does not shorten the
  // total; a loaded one stretches a routine's 50 ms, but not twentyfold.
  // In a child process, so an abort fails this test instead of the binary.
  constexpr int kRoutines = 40;
  EXPECT_EXIT(
      {
        SimulatedGraph graph(Watched(absl::Seconds(1)));
        int ran = 0;
        for (int i = 0; i < kRoutines; ++i) {
          if (!graph.After(absl::Milliseconds(10), [&] {
                     BusyFor(absl::Milliseconds(50));
                     ++ran;
                   }).ok()) {
            std::exit(2);
          }
        }
        graph.RunFor(absl::Milliseconds(20));
        graph.Stop();
        std::exit(ran == kRoutines ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(SimulatedGraphOptionsTest, ABadStuckAfterOrStopTimeLimitIsReportedAndReplaced) {
  SimulatedGraph::Options o;
  o.name = "bad";
  o.stuck_after = absl::ZeroDuration();
  o.stop_time_limit = -absl::Seconds(1);
  // The defaults replace them: the graph runs and stops normally.
  SimulatedGraph graph(o);
  int ran = 0;
  ASSERT_TRUE(graph.After(absl::Milliseconds(4), [&] { ++ran; }).ok());
  graph.RunFor(absl::Milliseconds(10));
  graph.Stop();
  EXPECT_EQ(ran, 1);
}

TEST_F(SimulatedGraphStuckTest, AStopThatMovesTimeStepByStepIsNotStuck) {
  // The stop waits for an action that sleeps 40 times: simulated time
  // must move 40 times for it to end, and does so whenever the stop waits
  // for it.
  constexpr int kSleeps = 40;
  SimulatedGraph graph(Watched(absl::Seconds(3)));
  int slept = 0;
  ASSERT_TRUE(graph
                  .After(absl::Milliseconds(10),
                         [&] {
                           for (int i = 0; i < kSleeps; ++i) {
                             scheduler::CRoutine::SleepFor(absl::Milliseconds(5));
                             ++slept;
                           }
                         })
                  .ok());
  graph.RunFor(absl::Milliseconds(20));  // the action has begun and sleeps
  ASSERT_GE(slept, 1);
  ASSERT_LT(slept, 5);  // most sleeps are left for the stop
  graph.Stop();  // waits for the action's remaining sleeps
  EXPECT_EQ(slept, kSleeps);
}

}  // namespace
}  // namespace cyber
