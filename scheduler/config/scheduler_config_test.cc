#include "scheduler/config/scheduler_config.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cyber/common/log.h"
#include "gtest/gtest.h"

namespace cyber {
namespace scheduler {
namespace {

using Affinity = ProcessorGroupConfig::Affinity;

// Shaped like Cyber RT's cyber/conf/*.conf classic examples.
constexpr char kCyberConf[] = R"(# classic scheduler, two groups
scheduler_conf {
  policy: "classic"
  routine_num: 100
  default_proc_num: 16
  classic_conf {
    groups: [
      {
        name: "compute"
        processor_num: 2
        affinity: "range"
        cpuset: "0-1"
        processor_policy: "SCHED_OTHER"
        processor_prio: 0
        tasks: [
          { name: "imu" prio: 10 },
          { name: "lidar" prio: 5 }
        ]
      },
      {
        name: "io"
        processor_num: 3
        affinity: "1to1"
        cpuset: "1,0"
        processor_policy: "SCHED_FIFO"
        processor_prio: 10
        tasks: [ { name: "can" prio: 19 group_name: "io" } ]
      }
    ]
  }
}
)";

void ExpectCyberConf(const SchedulerConfig& config) {
  ASSERT_EQ(config.groups.size(), 2u);

  const ProcessorGroupConfig& compute = config.groups[0];
  EXPECT_EQ(compute.name, "compute");
  EXPECT_EQ(compute.processor_num, 2);
  EXPECT_EQ(compute.affinity, Affinity::kRange);
  EXPECT_EQ(compute.cpuset, (std::vector<int>{0, 1}));
  EXPECT_EQ(compute.policy, SCHED_OTHER);
  EXPECT_EQ(compute.priority, 0);
  EXPECT_EQ(compute.task_priorities,
            (std::map<std::string, int>{{"imu", 10}, {"lidar", 5}}));

  const ProcessorGroupConfig& io = config.groups[1];
  EXPECT_EQ(io.name, "io");
  EXPECT_EQ(io.processor_num, 3);
  EXPECT_EQ(io.affinity, Affinity::kOneToOne);
  EXPECT_EQ(io.cpuset, (std::vector<int>{1, 0}));  // order as written
  EXPECT_EQ(io.policy, SCHED_FIFO);
  EXPECT_EQ(io.priority, 10);
  EXPECT_EQ(io.task_priorities, (std::map<std::string, int>{{"can", 19}}));

  EXPECT_EQ(config.task_groups,
            (std::map<std::string, std::string>{
                {"imu", "compute"}, {"lidar", "compute"}, {"can", "io"}}));
}

TEST(ParseSchedulerConfigTest, CyberStyleConf) {
  absl::StatusOr<SchedulerConfig> config =
      ParseSchedulerConfig(kCyberConf, "compute_sched.conf");
  ASSERT_TRUE(config.ok()) << config.status();
  ExpectCyberConf(*config);
}

TEST(ParseSchedulerConfigTest, BareSchedulerConf) {
  // The same body without the `scheduler_conf { }` wrapper.
  std::string text = kCyberConf;
  const size_t open = text.find("scheduler_conf {");
  text.erase(open, std::string("scheduler_conf {").size());
  text.erase(text.rfind('}'));
  absl::StatusOr<SchedulerConfig> config = ParseSchedulerConfig(text, "bare");
  ASSERT_TRUE(config.ok()) << config.status();
  ExpectCyberConf(*config);
}

TEST(ParseSchedulerConfigTest, OmittedFieldsTakeTheirDefaults) {
  absl::StatusOr<SchedulerConfig> config = ParseSchedulerConfig(
      R"(classic_conf { groups { processor_num: 1 tasks { name: "t" } } })",
      "defaults");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->groups.size(), 1u);
  const ProcessorGroupConfig& group = config->groups[0];
  EXPECT_EQ(group.name, "default_grp");  // the schema's default
  EXPECT_EQ(group.affinity, Affinity::kRange);
  EXPECT_TRUE(group.cpuset.empty());
  EXPECT_EQ(group.policy, SCHED_OTHER);
  EXPECT_EQ(group.priority, 0);
  EXPECT_EQ(group.task_priorities.at("t"), 1);  // Cyber's default prio
  EXPECT_EQ(config->task_groups.at("t"), "default_grp");
}

TEST(ParseSchedulerConfigTest, NoGroupsFallsBackToOneDefaultGroup) {
  for (const char* text :
       {"default_proc_num: 3", "scheduler_conf { default_proc_num: 3 }",
        "default_proc_num: 3 classic_conf { }"}) {
    absl::StatusOr<SchedulerConfig> config =
        ParseSchedulerConfig(text, "fallback");
    ASSERT_TRUE(config.ok()) << text << ": " << config.status();
    ASSERT_EQ(config->groups.size(), 1u) << text;
    EXPECT_EQ(config->groups[0].name, "default");
    EXPECT_EQ(config->groups[0].processor_num, 3);
    EXPECT_TRUE(config->groups[0].cpuset.empty());
    EXPECT_EQ(config->groups[0].policy, SCHED_OTHER);
    EXPECT_TRUE(config->task_groups.empty());
  }
}

TEST(ParseSchedulerConfigTest, NoGroupsAndNoProcNumUsesHardwareThreads) {
  const int hardware = std::max(1u, std::thread::hardware_concurrency());
  for (const char* text : {"", "# nothing\n", "policy: \"classic\""}) {
    absl::StatusOr<SchedulerConfig> config = ParseSchedulerConfig(text, "hw");
    ASSERT_TRUE(config.ok()) << config.status();
    ASSERT_EQ(config->groups.size(), 1u);
    EXPECT_EQ(config->groups[0].processor_num, hardware);
  }
}

TEST(DefaultSchedulerConfigTest, OneUnpinnedGroup) {
  SchedulerConfig config = DefaultSchedulerConfig(4);
  ASSERT_EQ(config.groups.size(), 1u);
  EXPECT_EQ(config.groups[0].name, "default");
  EXPECT_EQ(config.groups[0].processor_num, 4);
  EXPECT_TRUE(config.groups[0].cpuset.empty());
  EXPECT_EQ(config.groups[0].policy, SCHED_OTHER);
  EXPECT_EQ(config.groups[0].priority, 0);
  EXPECT_GE(DefaultSchedulerConfig(0).groups[0].processor_num, 1);
}

TEST(ParseSchedulerConfigTest, CyberOnlyFieldsAreAccepted) {
  absl::StatusOr<SchedulerConfig> config = ParseSchedulerConfig(
      R"(scheduler_conf {
           policy: "classic"
           process_level_cpuset: "0-1"
           threads: [ { name: "async_log" cpuset: "1" policy: "SCHED_OTHER"
                        prio: 0 } ]
           classic_conf { groups { name: "g" processor_num: 1 } }
         })",
      "cyber_only");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->groups[0].name, "g");
}

// --- Errors ------------------------------------------------------------------

// Asserts that `text` fails with InvalidArgument and a message containing
// every piece of `expected`.
void ExpectError(const std::string& text,
                 std::initializer_list<absl::string_view> expected) {
  absl::StatusOr<SchedulerConfig> config =
      ParseSchedulerConfig(text, "bad.conf");
  ASSERT_FALSE(config.ok()) << "accepted:\n" << text;
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  for (absl::string_view piece : expected) {
    EXPECT_NE(config.status().message().find(piece), absl::string_view::npos)
        << "missing \"" << piece << "\" in: " << config.status().message();
  }
}

// A bare conf with one group whose fields start on line 4, column 5.
std::string OneGroup(const std::string& fields) {
  return absl::StrCat("policy: \"classic\"\nclassic_conf {\n  groups {\n    ",
                      fields, "\n  }\n}\n");
}

TEST(ParseSchedulerConfigErrorTest, SyntaxErrorsNameFileLineAndField) {
  // protobuf reports the column of the token after the offending one.
  ExpectError("policy: \"classic\"\nbogus_field: 1\n",
              {"bad.conf:2:12: syntax error", "no field named \"bogus_field\"",
               "SchedulerConf"});
  ExpectError(OneGroup("processor_num: \"two\""),
              {"bad.conf:4:20: syntax error", "Expected integer",
               "(line: processor_num: \"two\")"});
  ExpectError(OneGroup("processor_num: -1"),
              {"bad.conf:4:20: syntax error", "(line: processor_num: -1)"});
  ExpectError("classic_conf {\n  groups {\n",
              {"bad.conf:3:1: syntax error", "end of file"});
  ExpectError("scheduler_conf {\n  policy: \"classic\"\n  polcy: \"x\"\n}\n",
              {"bad.conf:3:8: syntax error", "no field named \"polcy\"",
               "SchedulerConf", "(line: polcy: \"x\")"});
  // A wrapped conf may not carry bare fields at top level.
  ExpectError("scheduler_conf { }\npolicy: \"classic\"\n",
              {"bad.conf:2:7: syntax error", "CyberConfig",
               "no field named \"policy\""});
}

TEST(ParseSchedulerConfigErrorTest, UnknownPolicy) {
  ExpectError("policy: \"fifo\"",
              {"bad.conf:1:1", "policy \"fifo\"", "only \"classic\""});
  // Cyber's other policy parses (its section is in the schema) but is not
  // implemented.
  ExpectError(
      "scheduler_conf {\n  policy: \"choreography\"\n"
      "  choreography_conf { choreography_processor_num: 2 }\n}\n",
      {"bad.conf:2:3", "policy \"choreography\" is not supported"});
}

TEST(ParseSchedulerConfigErrorTest, ProcessorNum) {
  ExpectError(OneGroup("processor_num: 0 name: \"compute\""),
              {"bad.conf:4:5", "group \"compute\"", "processor_num 0",
               "out of range 1..1024"});
  ExpectError(
      OneGroup("name: \"compute\"\n    processor_num: 1025"),
      {"bad.conf:5:5", "group \"compute\"", "processor_num 1025", "1..1024"});
  // Missing: the location of the group itself.
  ExpectError(
      OneGroup("name: \"compute\""),
      {"bad.conf:3:3", "group \"compute\"", "processor_num 0 (not set)"});
  ExpectError("default_proc_num: 5000",
              {"bad.conf:1:1", "default_proc_num 5000", "0..1024"});
}

TEST(ParseSchedulerConfigErrorTest, Cpuset) {
  ExpectError(OneGroup("cpuset: \"0-3,x\" name: \"compute\" processor_num: 1"),
              {"bad.conf:4:5", "group \"compute\"", "cpuset \"0-3,x\"",
               "\"x\" is not a CPU number"});
  ExpectError(OneGroup("name: \"compute\" processor_num: 1 cpuset: \"0-1024\""),
              {"bad.conf:4:38", "cpuset \"0-1024\"",
               "CPU 1024 is above the maximum index 1023"});
  ExpectError(OneGroup("name: \"g\" processor_num: 1 cpuset: \"2,0-3\""),
              {"bad.conf:4:", "CPU 2 is listed twice"});
  ExpectError("process_level_cpuset: \"0-\"",
              {"bad.conf:1:1", "process_level_cpuset \"0-\""});
  ExpectError("threads { name: \"async\" cpuset: \"a\" }",
              {"bad.conf:1:", "thread \"async\"", "cpuset \"a\""});
}

TEST(ParseSchedulerConfigErrorTest, Affinity) {
  ExpectError(OneGroup("affinity: \"ring\" name: \"compute\" processor_num: 1"),
              {"bad.conf:4:5", "group \"compute\"", "affinity \"ring\"",
               "\"range\" or \"1to1\""});
  ExpectError(OneGroup("affinity: \"1to1\" name: \"compute\" processor_num: 1"),
              {"bad.conf:4:5", "affinity \"1to1\" needs a cpuset"});
}

TEST(ParseSchedulerConfigErrorTest, ProcessorPolicy) {
  ExpectError(
      OneGroup("processor_policy: \"SCHED_BATCH\" name: \"compute\" "
               "processor_num: 1"),
      {"bad.conf:4:5", "group \"compute\"", "processor_policy \"SCHED_BATCH\"",
       "SCHED_OTHER, SCHED_FIFO, SCHED_RR"});
  ExpectError("threads { name: \"async\" policy: \"fifo\" }",
              {"bad.conf:1:", "thread \"async\"", "policy \"fifo\""});
}

TEST(ParseSchedulerConfigErrorTest, ProcessorPrioOutOfRangeForItsPolicy) {
  struct Case {
    const char* policy;
    int prio;
    const char* range;
  };
  for (const Case& c :
       {Case{"SCHED_OTHER", 20, "-20..19"}, Case{"SCHED_OTHER", -21, "-20..19"},
        Case{"SCHED_FIFO", 0, "1..99"}, Case{"SCHED_FIFO", 100, "1..99"},
        Case{"SCHED_RR", 0, "1..99"}}) {
    const std::string prio = absl::StrCat("processor_prio ", c.prio);
    ExpectError(OneGroup(absl::StrCat(
                    "processor_prio: ", c.prio, " name: \"compute\" ",
                    "processor_num: 1 processor_policy: \"", c.policy, "\"")),
                {"bad.conf:4:5", "group \"compute\"", prio,
                 absl::StrCat("out of range ", c.range, " for ", c.policy)});
  }
}

TEST(ParseSchedulerConfigErrorTest, UnsetPrioIsZeroAndInvalidForRealtime) {
  ExpectError(OneGroup("name: \"rt\" processor_num: 1 "
                       "processor_policy: \"SCHED_FIFO\""),
              {"bad.conf:3:3", "processor_prio 0 (not set)", "1..99"});
}

TEST(ParseSchedulerConfigErrorTest, TaskPrio) {
  ExpectError(OneGroup("name: \"compute\" processor_num: 1\n"
                       "    tasks { name: \"imu\" prio: 20 }"),
              {"bad.conf:5:25", "group \"compute\"", "task \"imu\"", "prio 20",
               "out of range 0..19"});
}

TEST(ParseSchedulerConfigErrorTest, DuplicateGroupNames) {
  ExpectError(
      "classic_conf {\n"
      "  groups { name: \"a\" processor_num: 1 }\n"
      "  groups { name: \"a\" processor_num: 2 }\n"
      "}\n",
      {"bad.conf:3:12", "group \"a\" is defined twice",
       "first at bad.conf:2:12"});
}

TEST(ParseSchedulerConfigErrorTest, TaskInTwoGroups) {
  ExpectError(
      "classic_conf {\n"
      "  groups { name: \"a\" processor_num: 1 tasks { name: \"imu\" } }\n"
      "  groups { name: \"b\" processor_num: 1 tasks { name: \"imu\" } }\n"
      "}\n",
      {"bad.conf:3:", "task \"imu\" is listed in group \"a\"",
       "at bad.conf:2:", "again in group \"b\""});
  ExpectError(OneGroup("name: \"a\" processor_num: 1\n"
                       "    tasks { name: \"imu\" }\n"
                       "    tasks { name: \"imu\" }"),
              {"bad.conf:6:13", "group \"a\": task \"imu\": listed twice",
               "at bad.conf:5:13"});
}

TEST(ParseSchedulerConfigErrorTest, TaskGroupNameMustMatchItsGroup) {
  ExpectError(
      "classic_conf {\n"
      "  groups { name: \"a\" processor_num: 1 }\n"
      "  groups { name: \"b\" processor_num: 1\n"
      "           tasks { name: \"imu\" group_name: \"a\" } }\n"
      "}\n",
      {"bad.conf:4:", "group \"b\": task \"imu\"", "group_name \"a\""});
}

TEST(ParseSchedulerConfigErrorTest, EmptyNames) {
  ExpectError(OneGroup("name: \"\" processor_num: 1"),
              {"bad.conf:4:5", "group name is empty"});
  ExpectError(OneGroup("name: \"g\" processor_num: 1 tasks { prio: 1 }"),
              {"bad.conf:4:", "group \"g\": task name is empty"});
}

TEST(ParseSchedulerConfigErrorTest, LocationsInsideTheCyberWrapper) {
  std::string text = kCyberConf;
  const std::string good = "processor_prio: 10";
  text.replace(text.find(good), good.size(), "processor_prio: 100");
  // Line 26 of kCyberConf, indented 8.
  ExpectError(text, {"bad.conf:26:9", "group \"io\"", "processor_prio 100"});
}

TEST(ParseSchedulerConfigErrorTest, ErrorsAreLogged) {
  FLAGS_logtostderr = true;
  ::testing::internal::CaptureStderr();
  absl::StatusOr<SchedulerConfig> config =
      ParseSchedulerConfig("policy: \"fifo\"", "logged.conf");
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(config.ok());
  EXPECT_NE(err.find("logged.conf:1:1: policy \"fifo\""), std::string::npos)
      << err;
}

// --- Files -------------------------------------------------------------------

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

TEST(LoadSchedulerConfigTest, LoadsAFile) {
  const std::string path = TempPath("compute_sched.conf");
  {
    std::ofstream out(path);
    out << kCyberConf;
  }
  absl::StatusOr<SchedulerConfig> config = LoadSchedulerConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  ExpectCyberConf(*config);
  std::remove(path.c_str());
}

TEST(LoadSchedulerConfigTest, ErrorsNameThePath) {
  const std::string path = TempPath("broken_sched.conf");
  {
    std::ofstream out(path);
    out << "scheduler_conf {\n  policy: \"classic\"\n  routine_num: x\n}\n";
  }
  absl::StatusOr<SchedulerConfig> config = LoadSchedulerConfig(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find(path + ":3:16: syntax error"),
            absl::string_view::npos)
      << config.status();
  std::remove(path.c_str());
}

TEST(LoadSchedulerConfigTest, MissingFileIsNotFound) {
  const std::string path = TempPath("no_such_dir/sched.conf");
  absl::StatusOr<SchedulerConfig> config = LoadSchedulerConfig(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(config.status().message().find(path), absl::string_view::npos)
      << config.status();
}

TEST(LoadSchedulerConfigTest, DirectoryIsAnError) {
  absl::StatusOr<SchedulerConfig> config = LoadSchedulerConfig(TempPath(""));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("cannot read"),
            absl::string_view::npos)
      << config.status();
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
