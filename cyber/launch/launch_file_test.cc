#include "cyber/launch/launch_file.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace cyber {
namespace launch {
namespace {

LaunchParseOptions NoDagCheck() {
  LaunchParseOptions options;
  options.base_dir = "/graphs";
  options.check_dag_files = false;
  return options;
}

TEST(LaunchFileTest, CyberRtElementsAndOurs) {
  const char* text = R"(<cyber>
  <module>
    <name>imu</name>
    <dag_conf>imu.dag</dag_conf>
    <process_name>drivers</process_name>
    <exception_handler>respawn</exception_handler>
    <respawn_limit>5</respawn_limit>
    <respawn_delay>250ms</respawn_delay>
    <respawn_on>always</respawn_on>
    <required>true</required>
  </module>
  <module>
    <name>lidar</name>
    <dag_conf>/abs/lidar.dag</dag_conf>
    <dag_conf>lidar2.dag</dag_conf>
    <process_name>drivers</process_name>
    <respawn_limit>5</respawn_limit>
  </module>
  <module>
    <name>planner</name>
    <type>library</type>
    <dag_conf>planner.dag</dag_conf>
    <process_name>planner</process_name>
    <exception_handler>exit</exception_handler>
    <start_after>drivers</start_after>
    <wait_for_writer>/sensor/imu</wait_for_writer>
    <wait_for_writer>/sensor/lidar</wait_for_writer>
    <ready_timeout>2m</ready_timeout>
  </module>
  <module>
    <name>loose</name>
    <dag_conf>loose.dag</dag_conf>
  </module>
</cyber>
)";
  absl::StatusOr<LaunchPlan> plan = ParseLaunch(text, "robot.launch", NoDagCheck());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->processes.size(), 3u);
  const ProcessPlan& drivers = plan->processes[0];
  EXPECT_EQ(drivers.name, "drivers");
  EXPECT_EQ(drivers.where, "robot.launch:2");
  EXPECT_EQ(drivers.modules, (std::vector<std::string>{"imu", "lidar"}));
  EXPECT_EQ(drivers.dag_files,
            (std::vector<std::string>{"/graphs/imu.dag", "/abs/lidar.dag", "/graphs/lidar2.dag"}));
  EXPECT_EQ(drivers.exception_handler, ExceptionHandler::kRespawn);
  EXPECT_EQ(drivers.respawn_limit, 5);
  EXPECT_EQ(drivers.respawn_delay, absl::Milliseconds(250));
  EXPECT_EQ(drivers.respawn_on, RespawnOn::kAlways);
  EXPECT_TRUE(drivers.required);
  EXPECT_TRUE(drivers.start_after.empty());

  const ProcessPlan& planner = plan->processes[1];
  EXPECT_EQ(planner.name, "planner");
  EXPECT_EQ(planner.exception_handler, ExceptionHandler::kExit);
  EXPECT_EQ(planner.start_after, (std::vector<std::string>{"drivers"}));
  EXPECT_EQ(planner.wait_for_writer,
            (std::vector<std::string>{"/sensor/imu", "/sensor/lidar"}));
  EXPECT_EQ(planner.ready_timeout, absl::Minutes(2));
  EXPECT_FALSE(planner.required);

  // Cyber RT's defaults, and its shared default process.
  const ProcessPlan& loose = plan->processes[2];
  EXPECT_EQ(loose.name, kDefaultProcessName);
  EXPECT_EQ(loose.exception_handler, ExceptionHandler::kNone);
  EXPECT_EQ(loose.respawn_limit, 3);
  EXPECT_EQ(loose.respawn_delay, absl::Seconds(1));
  EXPECT_EQ(loose.respawn_on, RespawnOn::kFailure);
  EXPECT_EQ(loose.ready_timeout, absl::Seconds(30));
  EXPECT_EQ(FindProcess(*plan, "planner"), &planner);
  EXPECT_EQ(FindProcess(*plan, "nobody"), nullptr);
}

// The example's own file parses, with its dag files found beside it.
TEST(LaunchFileTest, TheExampleParses) {
  const std::string path = std::string(std::getenv("TEST_SRCDIR")) + "/" +
                           std::getenv("TEST_WORKSPACE") +
                           "/examples/sensor_polling/sensor_polling.launch";
  absl::StatusOr<LaunchPlan> plan = ParseLaunchFile(path);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->processes.size(), 2u);
  EXPECT_EQ(plan->processes[0].name, "pollers");
  EXPECT_EQ(plan->processes[1].name, "fusion");
}

TEST(LaunchFileTest, UnreadableFileIsNotFound) {
  absl::StatusOr<LaunchPlan> plan = ParseLaunchFile("/nonexistent/x.launch");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(plan.status().message()).find("/nonexistent/x.launch"), std::string::npos);
}

struct BadLaunch {
  const char* name;
  const char* text;
  const char* expected;
};

class LaunchErrorTest : public testing::TestWithParam<BadLaunch> {};

TEST_P(LaunchErrorTest, NamesFileLineElementAndValue) {
  absl::StatusOr<LaunchPlan> plan = ParseLaunch(GetParam().text, "bad.launch", NoDagCheck());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(plan.status().message()).find(GetParam().expected), std::string::npos)
      << plan.status();
}

#define MODULE(body) "<cyber>\n<module>\n<name>m</name>\n<dag_conf>m.dag</dag_conf>\n" body "</module>\n</cyber>\n"

INSTANTIATE_TEST_SUITE_P(
    Errors, LaunchErrorTest,
    testing::Values(
        BadLaunch{"Xml", "<cyber>\n<module>\n</cyber>", "bad.launch:3: </cyber> closes <module>"},
        BadLaunch{"Root", "<launch/>", "bad.launch:1: the root element is <launch>; a launch file's is <cyber>"},
        BadLaunch{"NoModule", "<cyber>\n</cyber>", "bad.launch:1: <cyber> has no <module>"},
        BadLaunch{"NotModule", "<cyber>\n<node/>\n</cyber>", "bad.launch:2: <node> is not an element of <cyber>"},
        BadLaunch{"UnknownElement", MODULE("<dag_cnof>x</dag_cnof>\n"),
                  "bad.launch:5: <dag_cnof> is not an element of <module> (did you mean <dag_conf>?)"},
        BadLaunch{"NoName", "<cyber>\n<module>\n<dag_conf>a.dag</dag_conf>\n</module>\n</cyber>",
                  "bad.launch:2: <module> has no <name>"},
        BadLaunch{"TwoNames", MODULE("<name>n</name>\n"), "bad.launch:5: <name>: a module has one name"},
        BadLaunch{"SameModuleTwice",
                  "<cyber>\n<module><name>m</name><dag_conf>a</dag_conf></module>\n"
                  "<module><name>m</name><dag_conf>b</dag_conf></module>\n</cyber>",
                  "bad.launch:3: <name>: module \"m\" is named twice"},
        BadLaunch{"NoDag", "<cyber>\n<module>\n<name>m</name>\n</module>\n</cyber>",
                  "bad.launch:2: module \"m\" has no <dag_conf>"},
        BadLaunch{"EmptyDag", MODULE("<dag_conf> </dag_conf>\n"), "bad.launch:5: <dag_conf> is empty"},
        BadLaunch{"NestedElement", MODULE("<required><x/></required>\n"),
                  "bad.launch:5: <required> holds an element <x>"},
        BadLaunch{"ProcessName", MODULE("<process_name>a/b</process_name>\n"),
                  "<process_name>: \"a/b\" has the character '/'"},
        BadLaunch{"Type", MODULE("<type>binary</type>\n"), "bad.launch:5: <type>: \"binary\" is not supported"},
        BadLaunch{"Handler", MODULE("<exception_handler>restart</exception_handler>\n"),
                  "bad.launch:5: <exception_handler>: \"restart\" is not respawn or exit"},
        BadLaunch{"Limit", MODULE("<respawn_limit>-1</respawn_limit>\n"),
                  "bad.launch:5: <respawn_limit>: \"-1\" is not a whole number >= 0"},
        BadLaunch{"Delay", MODULE("<respawn_delay>1</respawn_delay>\n"),
                  "bad.launch:5: <respawn_delay>: \"1\" is not a duration"},
        BadLaunch{"Timeout", MODULE("<ready_timeout>soon</ready_timeout>\n"),
                  "bad.launch:5: <ready_timeout>: \"soon\" is not a duration"},
        BadLaunch{"RespawnOn", MODULE("<respawn_on>crash</respawn_on>\n"),
                  "bad.launch:5: <respawn_on>: \"crash\" is not failure or always"},
        BadLaunch{"Required", MODULE("<required>yes</required>\n"),
                  "bad.launch:5: <required>: \"yes\" is not true or false"},
        BadLaunch{"StartAfterSelf", MODULE("<process_name>p</process_name>\n<start_after>p</start_after>\n"),
                  "bad.launch:6: <start_after>: process \"p\" cannot wait for itself"},
        BadLaunch{"StartAfterLater",
                  "<cyber>\n<module><name>a</name><dag_conf>a</dag_conf><process_name>pa</process_name>"
                  "</module>\n<module><name>b</name><dag_conf>b</dag_conf><process_name>pb</process_name>\n"
                  "<start_after>pc</start_after></module>\n"
                  "<module><name>c</name><dag_conf>c</dag_conf><process_name>pc</process_name></module>\n"
                  "</cyber>",
                  "bad.launch:4: <start_after>: \"pc\" is not a process_name that comes earlier in the "
                  "file (did you mean \"pa\"?); earlier: pa"},
        BadLaunch{"WaitForWriter", MODULE("<wait_for_writer></wait_for_writer>\n"),
                  "bad.launch:5: <wait_for_writer> is empty"},
        BadLaunch{"Disagree",
                  "<cyber>\n<module><name>a</name><dag_conf>a</dag_conf><process_name>p</process_name>\n"
                  "<respawn_delay>1s</respawn_delay></module>\n"
                  "<module><name>b</name><dag_conf>b</dag_conf><process_name>p</process_name>\n"
                  "<respawn_delay>2s</respawn_delay></module>\n</cyber>",
                  "bad.launch:5: <respawn_delay>: \"2s\" differs from \"1s\" given for process \"p\" "
                  "at bad.launch:3"}),
    [](const testing::TestParamInfo<BadLaunch>& info) { return std::string(info.param.name); });

TEST(LaunchFileTest, MissingDagFileNamesWhereItLooked) {
  LaunchParseOptions options;
  options.base_dir = "/nonexistent_dir";
  absl::StatusOr<LaunchPlan> plan = ParseLaunch(
      "<cyber>\n<module>\n<name>m</name>\n<dag_conf>missing.dag</dag_conf>\n</module>\n</cyber>",
      "bad.launch", options);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(std::string(plan.status().message())
                .find("bad.launch:4: <dag_conf>: \"missing.dag\" is not a file beside the launch "
                      "file (/nonexistent_dir) nor in the current directory"),
            std::string::npos)
      << plan.status();
  plan = ParseLaunch(
      "<cyber>\n<module>\n<name>m</name>\n<dag_conf>/no/such.dag</dag_conf>\n</module>\n</cyber>",
      "bad.launch", options);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(std::string(plan.status().message())
                .find("bad.launch:4: <dag_conf>: \"/no/such.dag\" is not a file"),
            std::string::npos)
      << plan.status();
}

}  // namespace
}  // namespace launch
}  // namespace cyber
