#include "cyber/launch/launch_summary.h"

#include <signal.h>
#include <sys/wait.h>

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cyber {
namespace launch {
namespace {

TEST(LaunchSummaryTest, OwnSummaryIsTheLastRunsTableWithoutGlogLines) {
  const std::string log =
      "cyber_launch: start 1 of pollers at x: mainboard -d p.dag\n"
      "component            class      procs\n"
      "imu                  ImuPoller  5\n"
      "cyber_launch: start 2 of pollers at y: mainboard -d p.dag\n"
      "I20261128 04:00:00.000000 123 launcher.cc:1] started component \"imu\"\n"
      "some other line\n"
      "component            class      procs\n"
      "I1128 04:00:01.000000 123 mainboard.cc:1] mainboard: stopping\n"
      "imu                  ImuPoller  900\n"
      "\n"
      "channel   type\n"
      "/sensor/imu ImuReading\n"
      "\n\n";
  EXPECT_EQ(ProcessOwnSummary(log),
            "component            class      procs\n"
            "imu                  ImuPoller  900\n"
            "\n"
            "channel   type\n"
            "/sensor/imu ImuReading\n");
  // A run killed before it printed one: nothing (not the earlier run's).
  EXPECT_EQ(ProcessOwnSummary(log + "cyber_launch: start 3 of pollers at z: mainboard\n"), "");
}

// A lockstep run failed naming "pollers" lost, while fusion was the one
// killed (DDS can declare a living peer lost too): the supervisor's record
// names fusion, the first to end on its own.
TEST(LaunchSummaryTest, FirstToEndOnItsOwnNamesWhatReallyEndedFirst) {
  LaunchOutcome outcome;
  ProcessRecord pollers;
  pollers.name = "pollers";
  pollers.state = ProcessRecord::State::kDown;
  pollers.last_wait_status = 1 << 8;  // exit 1, after the failed run
  pollers.last_exit = absl::Seconds(9);
  ProcessRecord fusion;
  fusion.name = "fusion";
  fusion.state = ProcessRecord::State::kDown;
  fusion.last_wait_status = SIGKILL;  // killed
  fusion.last_exit = absl::Seconds(5);
  ProcessRecord stopped;  // stopped by cyber_launch: not "on its own"
  stopped.name = "stopped";
  stopped.state = ProcessRecord::State::kDown;
  stopped.last_wait_status = SIGINT;
  stopped.stop_signals = "INT";
  stopped.last_exit = absl::Seconds(1);
  outcome.processes = {pollers, fusion, stopped};
  const std::string said = FirstToEndOnItsOwn(outcome, "process \"pollers\" was lost");
  EXPECT_TRUE(absl::StartsWith(said, "; the first process to end on its own: fusion (")) << said;
  EXPECT_TRUE(absl::StrContains(said, "9")) << said;
  // Already named: nothing to add.
  EXPECT_EQ(FirstToEndOnItsOwn(outcome, "process \"fusion\" was lost"), "");
  // None ended on its own: nothing.
  outcome.processes = {stopped};
  EXPECT_EQ(FirstToEndOnItsOwn(outcome, "process \"pollers\" was lost"), "");
}

TEST(LaunchSummaryTest, ProcessTableNamesExitsSignalsAndRespawns) {
  LaunchOutcome outcome;
  outcome.reason = "stop requested";
  ProcessRecord a;
  a.name = "pollers";
  a.state = ProcessRecord::State::kDown;
  a.starts = 2;
  a.respawns = 1;
  a.respawn_limit = 3;
  a.last_wait_status = 0;  // exit 0
  a.stop_signals = "INT";
  a.log_path = "/logs/pollers.log";
  ProcessRecord b;
  b.name = "fusion";
  b.state = ProcessRecord::State::kDown;
  b.starts = 1;
  b.respawn_limit = 3;
  b.last_wait_status = SIGKILL;  // killed
  b.stop_signals = "INT, TERM, KILL";
  b.log_path = "/logs/fusion.log";
  ProcessRecord c;
  c.name = "planner";
  c.failure = "not ready within ready_timeout 1s: channel /x has no writer";
  outcome.processes = {a, b, c};
  const std::string table = ProcessTable(outcome);
  EXPECT_TRUE(absl::StrContains(table, "process ")) << table;
  EXPECT_TRUE(absl::StrContains(table, "pollers")) << table;
  EXPECT_TRUE(absl::StrContains(table, "1/3")) << table;
  EXPECT_TRUE(absl::StrContains(table, "exit 0")) << table;
  EXPECT_TRUE(absl::StrContains(table, "signal 9 (KILL)")) << table;
  EXPECT_TRUE(absl::StrContains(table, "INT, TERM, KILL")) << table;
  EXPECT_TRUE(absl::StrContains(table, "not started")) << table;
  EXPECT_TRUE(absl::StrContains(table, "planner: not ready within ready_timeout 1s")) << table;
  const std::string summary = LaunchSummary("x.launch", outcome);
  EXPECT_TRUE(absl::StartsWith(summary, "cyber_launch: x.launch ended: stop requested (exit code 0)\n"))
      << summary;
}

}  // namespace
}  // namespace launch
}  // namespace cyber
