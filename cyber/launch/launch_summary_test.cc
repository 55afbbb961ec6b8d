#include "cyber/launch/launch_summary.h"

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
