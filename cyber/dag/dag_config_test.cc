#include "cyber/dag/dag_config.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/timer.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace dag {
namespace {

namespace fs = std::filesystem;

// Cyber RT's cyber/examples dag files, as written there. The same texts are
// in testdata/ as real files.
constexpr char kTimerExample[] = R"(# Define all coms in DAG streaming.
module_config {
    module_library : "/apollo/bazel-bin/cyber/examples/timer_component_example/libtimer_component_example.so"
    timer_components {
        class_name : "TimerComponentSample"
        config {
            name : "timer"
            interval : 10
        }
    }
}
)";

constexpr char kCommonExample[] = R"(# Define all coms in DAG streaming.
module_config {
    module_library : "/apollo/bazel-bin/cyber/examples/common_component_example/libcommon_component_example.so"
    components {
        class_name : "CommonComponentSample"
        config {
            name : "common"
            readers {
                channel: "/apollo/prediction"
            }
            readers {
                channel: "/apollo/test"
            }
        }
      }
}
)";

constexpr char kTestdata[] = "cyber/dag/testdata/";

SourceLocation Loc(const std::string& file, int line, int column) {
  SourceLocation where;
  where.file = file;
  where.line = line;
  where.column = column;
  return where;
}

// Asserts that `status` has `code` and a message containing every piece of
// `expected`.
void ExpectStatus(const absl::Status& status, absl::StatusCode code,
                  std::initializer_list<absl::string_view> expected) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), code) << status;
  for (absl::string_view piece : expected) {
    EXPECT_NE(status.message().find(piece), absl::string_view::npos)
        << "missing \"" << piece << "\" in: " << status.message();
  }
}

void ExpectLocation(const SourceLocation& actual,
                    const SourceLocation& expected) {
  EXPECT_EQ(actual.ToString(), expected.ToString());
}

void ExpectTimerExample(const Graph& graph, const std::string& file) {
  EXPECT_EQ(graph.path, file);
  ASSERT_EQ(graph.modules.size(), 1u);
  const ModuleSpec& module = graph.modules[0];
  EXPECT_EQ(module.module_library,
            "/apollo/bazel-bin/cyber/examples/timer_component_example/"
            "libtimer_component_example.so");
  ExpectLocation(module.where, Loc(file, 2, 1));
  EXPECT_TRUE(module.components.empty());
  ASSERT_EQ(module.timer_components.size(), 1u);
  const TimerComponentSpec& timer = module.timer_components[0];
  EXPECT_EQ(timer.class_name, "TimerComponentSample");
  EXPECT_EQ(timer.name, "timer");
  EXPECT_EQ(timer.interval, absl::Milliseconds(10));
  EXPECT_EQ(timer.config_file_path, "");
  EXPECT_EQ(timer.flag_file_path, "");
  ExpectLocation(timer.where, Loc(file, 4, 5));
}

void ExpectCommonExample(const Graph& graph, const std::string& file) {
  EXPECT_EQ(graph.path, file);
  ASSERT_EQ(graph.modules.size(), 1u);
  const ModuleSpec& module = graph.modules[0];
  EXPECT_EQ(module.module_library,
            "/apollo/bazel-bin/cyber/examples/common_component_example/"
            "libcommon_component_example.so");
  ExpectLocation(module.where, Loc(file, 2, 1));
  EXPECT_TRUE(module.timer_components.empty());
  ASSERT_EQ(module.components.size(), 1u);
  const ComponentSpec& common = module.components[0];
  EXPECT_EQ(common.class_name, "CommonComponentSample");
  EXPECT_EQ(common.name, "common");
  EXPECT_EQ(common.config_file_path, "");
  EXPECT_EQ(common.flag_file_path, "");
  ExpectLocation(common.where, Loc(file, 4, 5));
  ASSERT_EQ(common.readers.size(), 2u);
  EXPECT_EQ(common.readers[0].channel, "/apollo/prediction");
  EXPECT_EQ(common.readers[0].pending_queue_size, 1u);  // Cyber's default
  ExpectLocation(common.readers[0].where, Loc(file, 8, 13));
  EXPECT_EQ(common.readers[1].channel, "/apollo/test");
  EXPECT_EQ(common.readers[1].pending_queue_size, 1u);
  ExpectLocation(common.readers[1].where, Loc(file, 11, 13));
}

TEST(SourceLocationTest, ToString) {
  EXPECT_EQ(Loc("a.dag", 3, 7).ToString(), "a.dag:3:7");
  EXPECT_EQ(Loc("a.dag", 0, 0).ToString(), "a.dag");
}

TEST(ParseGraphTest, CyberTimerComponentExample) {
  absl::StatusOr<Graph> graph = ParseGraph(kTimerExample, "timer.dag");
  ASSERT_TRUE(graph.ok()) << graph.status();
  ExpectTimerExample(*graph, "timer.dag");
}

TEST(ParseGraphTest, CyberCommonComponentExample) {
  absl::StatusOr<Graph> graph = ParseGraph(kCommonExample, "common.dag");
  ASSERT_TRUE(graph.ok()) << graph.status();
  ExpectCommonExample(*graph, "common.dag");
}

TEST(LoadGraphFileTest, CyberExampleFiles) {
  const std::string timer_path =
      absl::StrCat(kTestdata, "timer_component_example.dag");
  absl::StatusOr<Graph> timer = LoadGraphFile(timer_path);
  ASSERT_TRUE(timer.ok()) << timer.status();
  ExpectTimerExample(*timer, timer_path);

  const std::string common_path =
      absl::StrCat(kTestdata, "common_component_example.dag");
  absl::StatusOr<Graph> common = LoadGraphFile(common_path);
  ASSERT_TRUE(common.ok()) << common.status();
  ExpectCommonExample(*common, common_path);

  // Launched together they do not clash.
  EXPECT_TRUE(CheckGraphs({*timer, *common}).ok());
}

// The reader of a one-reader component whose readers entry carries `qos`.
std::string QosDag(const std::string& qos) {
  return absl::StrCat(
      "module_config {\n"
      "  components {\n"
      "    class_name: \"Fusion\"\n"
      "    config {\n"
      "      name: \"fusion\"\n"
      "      readers {\n"
      "        channel: \"/perception/obstacles\"\n",
      qos,
      "        pending_queue_size: 5\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "}\n");
}

TEST(ParseGraphTest, QosProfileBecomesTheChannelQosBetweenProcesses) {
  struct Case {
    const char* qos;
    ChannelQos expected;
  };
  ChannelQos cyber_defaults;  // a qos_profile with nothing set: Cyber's defaults
  cyber_defaults.depth = 1;
  ChannelQos keep_last_10 = cyber_defaults;
  keep_last_10.depth = 10;
  ChannelQos keep_all = cyber_defaults;
  keep_all.history = ChannelQos::History::kKeepAll;
  keep_all.reliability = ChannelQos::Reliability::kBestEffort;
  keep_all.durability = ChannelQos::Durability::kTransientLocal;
  ChannelQos shared_6mib = cyber_defaults;
  shared_6mib.depth = 2;
  shared_6mib.data_sharing_max_bytes = 6 << 20;
  for (const Case& c : std::vector<Case>{
           {"qos_profile { history: HISTORY_SYSTEM_DEFAULT reliability: "
            "RELIABILITY_SYSTEM_DEFAULT durability: DURABILITY_SYSTEM_DEFAULT }\n",
            cyber_defaults},
           {"qos_profile { history: HISTORY_KEEP_LAST depth: 10 mps: 100 "
            "reliability: RELIABILITY_RELIABLE durability: DURABILITY_VOLATILE }\n",
            keep_last_10},
           {"qos_profile { history: HISTORY_KEEP_ALL reliability: RELIABILITY_BEST_EFFORT "
            "durability: DURABILITY_TRANSIENT_LOCAL }\n",
            keep_all},
           {"qos_profile { depth: 2 data_sharing_max_bytes: 6291456 }\n", shared_6mib},
           {"qos_profile { }\n", cyber_defaults},
           {"", ChannelQos()},  // no qos_profile: the transport's defaults
       }) {
    absl::StatusOr<Graph> graph = ParseGraph(QosDag(c.qos), "qos.dag");
    ASSERT_TRUE(graph.ok()) << c.qos << ": " << graph.status();
    const ComponentSpec& fusion = graph->modules[0].components[0];
    ASSERT_EQ(fusion.readers.size(), 1u);
    EXPECT_EQ(fusion.readers[0].channel, "/perception/obstacles");
    EXPECT_EQ(fusion.readers[0].pending_queue_size, 5u);
    EXPECT_EQ(fusion.readers[0].qos, c.expected)
        << c.qos << ": got " << fusion.readers[0].qos.ToString();
    ExpectLocation(fusion.readers[0].where, Loc("qos.dag", 6, 7));
  }
}

TEST(ParseGraphTest, SeveralModulesInFileOrderAndComponentsWithoutReaders) {
  absl::StatusOr<Graph> graph = ParseGraph(
      R"(module_config {
  module_library: "liba.so"
  components { class_name: "Logger" config { name: "logger" } }
  timer_components { class_name: "Poll" config { name: "fast" interval: 2 } }
  timer_components { class_name: "Poll" config { name: "slow" interval: 86400000 } }
}
module_config {
  timer_components { class_name: "Beat" config { name: "beat" interval: 1000 } }
}
)",
      "several.dag");
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_EQ(graph->modules.size(), 2u);
  const ModuleSpec& a = graph->modules[0];
  EXPECT_EQ(a.module_library, "liba.so");
  ASSERT_EQ(a.components.size(), 1u);
  EXPECT_EQ(a.components[0].name, "logger");
  EXPECT_TRUE(a.components[0].readers.empty());  // allowed
  ExpectLocation(a.components[0].where, Loc("several.dag", 3, 3));
  ASSERT_EQ(a.timer_components.size(), 2u);
  EXPECT_EQ(a.timer_components[0].name, "fast");
  EXPECT_EQ(a.timer_components[0].interval, absl::Milliseconds(2));
  EXPECT_EQ(a.timer_components[1].name, "slow");
  EXPECT_EQ(a.timer_components[1].interval, absl::Hours(24));
  ExpectLocation(a.timer_components[1].where, Loc("several.dag", 5, 3));

  const ModuleSpec& b = graph->modules[1];
  EXPECT_EQ(b.module_library, "");  // kept as written: not checked here
  ExpectLocation(b.where, Loc("several.dag", 7, 1));
  ASSERT_EQ(b.timer_components.size(), 1u);
  EXPECT_EQ(b.timer_components[0].class_name, "Beat");
  EXPECT_EQ(b.timer_components[0].interval, absl::Seconds(1));
}

TEST(ParseGraphTest, ListSyntaxKeepsEachElementsOwnLocation) {
  // protobuf records one position per field name, not per list element, so
  // once a list is used an element is located at its first field.
  const char* text = R"(module_config {
  components: [
    { class_name: "A" config { name: "a" } },
    { class_name: "B" config { name: "b" } }
  ]
  components { class_name: "C" config { name: "c" } }
  timer_components: { class_name: "T" config { name: "t" interval: 10 } }
}
)";
  absl::StatusOr<Graph> graph = ParseGraph(text, "list.dag");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ModuleSpec& module = graph->modules[0];
  ASSERT_EQ(module.components.size(), 3u);
  ExpectLocation(module.components[0].where, Loc("list.dag", 3, 7));
  ExpectLocation(module.components[1].where, Loc("list.dag", 4, 7));
  ExpectLocation(module.components[2].where, Loc("list.dag", 6, 16));
  ASSERT_EQ(module.timer_components.size(), 1u);
  ExpectLocation(module.timer_components[0].where, Loc("list.dag", 7, 3));

  std::string duplicate = text;
  duplicate.replace(duplicate.find("name: \"b\""), 9, "name: \"a\"");
  ExpectStatus(ParseGraph(duplicate, "list.dag").status(),
               absl::StatusCode::kInvalidArgument,
               {"list.dag:4:7: component \"a\": name is already used by the "
                "component at list.dag:3:7; component"});
}

TEST(ParseGraphTest, UnreadOutputsOfBothKindsOfComponentInFileOrder) {
  absl::StatusOr<Graph> graph = ParseGraph(R"(
module_config {
  components {
    class_name: "Watchdog"
    config {
      name: "watchdog"
      readers { channel: "/gps/fix" }
      unread_outputs: "/gps/timeout"
      unread_outputs: "/gps/stale"
      remote_inputs: "/gps/fix"
      remote_services: "/gps/reset"
    }
  }
  timer_components {
    class_name: "Monitor"
    config { name: "monitor" interval: 100 unread_outputs: "/health"
             remote_inputs: "/imu" remote_inputs: "/lidar"
             remote_services: "/map/tile" remote_services: "/route" }
  }
  timer_components {
    class_name: "Poller"
    config { name: "poller" interval: 100 }
  }
})",
                                           "alarms.dag");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ModuleSpec& module = graph->modules[0];
  EXPECT_EQ(module.components[0].unread_outputs,
            (std::vector<std::string>{"/gps/timeout", "/gps/stale"}));
  EXPECT_EQ(module.timer_components[0].unread_outputs,
            std::vector<std::string>{"/health"});
  EXPECT_TRUE(module.timer_components[1].unread_outputs.empty());
  EXPECT_EQ(module.components[0].remote_inputs, std::vector<std::string>{"/gps/fix"});
  EXPECT_EQ(module.timer_components[0].remote_inputs,
            (std::vector<std::string>{"/imu", "/lidar"}));
  EXPECT_TRUE(module.timer_components[1].remote_inputs.empty());
  EXPECT_EQ(module.components[0].remote_services, std::vector<std::string>{"/gps/reset"});
  EXPECT_EQ(module.timer_components[0].remote_services,
            (std::vector<std::string>{"/map/tile", "/route"}));
  EXPECT_TRUE(module.timer_components[1].remote_services.empty());
}

// --- Errors ------------------------------------------------------------------

void ExpectInvalid(const std::string& text,
                   std::initializer_list<absl::string_view> expected) {
  absl::StatusOr<Graph> graph = ParseGraph(text, "bad.dag");
  ASSERT_FALSE(graph.ok()) << "accepted:\n" << text;
  ExpectStatus(graph.status(), absl::StatusCode::kInvalidArgument, expected);
}

TEST(ParseGraphErrorTest, QosDepthZeroIsNamed) {
  ExpectInvalid(QosDag("qos_profile { depth: 0 }\n"),
                {"bad.dag:", "\"fusion\"", "\"/perception/obstacles\"",
                 "qos_profile depth 0 must be at least 1"});
}

// One module with one timer component "Poller" whose config fields start
// on line 6, column 7; the config block is at line 5, column 5.
std::string TimerDag(const std::string& config_fields) {
  return absl::StrCat(
      "module_config {\n"
      "  module_library: \"libpoll.so\"\n"
      "  timer_components {\n"
      "    class_name: \"Poller\"\n"
      "    config {\n"
      "      ",
      config_fields,
      "\n"
      "    }\n"
      "  }\n"
      "}\n");
}

// The same shape with a (non-timer) component "Fusion".
std::string ComponentDag(const std::string& config_fields) {
  return absl::StrCat(
      "module_config {\n"
      "  module_library: \"libfusion.so\"\n"
      "  components {\n"
      "    class_name: \"Fusion\"\n"
      "    config {\n"
      "      ",
      config_fields,
      "\n"
      "    }\n"
      "  }\n"
      "}\n");
}

TEST(ParseGraphErrorTest, SyntaxErrorsNameFileLineAndField) {
  // protobuf puts some errors (an unknown field name, a repeated singular
  // field) at the token after the offending one: the line is exact, the
  // quoted line shows the field.
  ExpectInvalid(TimerDag("name: \"poll\" intervall: 10"),
                {"bad.dag:6:", "syntax error",
                 "no field named \"intervall\"", "TimerComponentConfig",
                 "(in: name: \"poll\" intervall: 10)"});
  ExpectInvalid(TimerDag("name: \"poll\"\n      interval: \"ten\""),
                {"bad.dag:7:17: syntax error", "Expected integer",
                 "(in: interval: \"ten\")"});
  ExpectInvalid(TimerDag("name: \"poll\"\n      interval: -5"),
                {"bad.dag:7:", "syntax error", "(in: interval: -5)"});
  ExpectInvalid("module_config {\n  components {\n",
                {"bad.dag:3:1: syntax error", "end of file"});
  ExpectInvalid(TimerDag("name: \"a\" name: \"b\" interval: 10"),
                {"bad.dag:6:", "syntax error", "\"name\"",
                 "specified multiple times"});
  // Readers belong to components, not timer components.
  ExpectInvalid(TimerDag("name: \"poll\" interval: 10\n"
                         "      readers { channel: \"/a\" }"),
                {"bad.dag:7:", "no field named \"readers\""});
  ExpectInvalid(ComponentDag("name: \"fusion\"\n"
                             "      readers {\n"
                             "        channel: \"/a\"\n"
                             "        qos_profile { history: KEEP_LAST }\n"
                             "      }"),
                {"bad.dag:9:", "syntax error", "\"KEEP_LAST\"",
                 "\"history\""});
  ExpectInvalid("dag_config {}\n",
                {"bad.dag:1:", "no field named \"dag_config\"", "DagConfig"});
}

TEST(ParseGraphErrorTest, NoModules) {
  for (const char* text : {"", "# nothing but a comment\n"}) {
    ExpectInvalid(text, {"bad.dag:1:1: no module_config"});
  }
}

TEST(ParseGraphErrorTest, ModuleWithoutComponents) {
  ExpectInvalid(
      "module_config { module_library: \"liba.so\" }",
      {"bad.dag:1:1: module_config[0] (module_library \"liba.so\") has no "
       "components and no timer_components"});
  ExpectInvalid(
      absl::StrCat(TimerDag("name: \"poll\" interval: 10"),
                   "\n  module_config {\n  }\n"),
      {"bad.dag:11:3: module_config[1] has no components and no "
       "timer_components"});
}

TEST(ParseGraphErrorTest, ClassName) {
  // Missing: the component block's location.
  ExpectInvalid(
      "module_config {\n"
      "  timer_components { config { name: \"poll\" interval: 10 } }\n"
      "}\n",
      {"bad.dag:2:3: timer component \"poll\": class_name is missing"});
  ExpectInvalid(
      "module_config {\n"
      "  components {\n"
      "    config { name: \"fusion\" }\n"
      "    class_name: \"\"\n"
      "  }\n"
      "}\n",
      {"bad.dag:4:5: component \"fusion\": class_name \"\" is empty"});
  // Neither name: the component is named by its index.
  ExpectInvalid(
      "module_config {\n"
      "  components { class_name: \"A\" config { name: \"a\" } }\n"
      "  components { }\n"
      "}\n",
      {"bad.dag:3:3: components[1]: class_name is missing"});
}

TEST(ParseGraphErrorTest, ConfigName) {
  ExpectInvalid(TimerDag("interval: 10"),
                {"bad.dag:5:5: timer_components[0] (class_name \"Poller\"): "
                 "config.name is missing"});
  ExpectInvalid(TimerDag("interval: 10 name: \"\""),
                {"bad.dag:6:20: timer_components[0] (class_name \"Poller\"): "
                 "config.name \"\" is empty"});
  ExpectInvalid(ComponentDag("name: \"\""),
                {"bad.dag:6:7: components[0] (class_name \"Fusion\"): "
                 "config.name \"\" is empty"});
  ExpectInvalid(
      "module_config {\n  components { class_name: \"Fusion\" }\n}\n",
      {"bad.dag:2:3: components[0] (class_name \"Fusion\"): config.name is "
       "missing (no config)"});
}

TEST(ParseGraphErrorTest, TimerInterval) {
  // The Timer's words (timer/period_rules.h), after the location.
  ExpectInvalid(TimerDag("interval: 0 name: \"poll\""),
                {"bad.dag:6:7: timer component \"poll\": interval 0 must be "
                 "positive"});
  // Missing: the config block's location.
  ExpectInvalid(TimerDag("name: \"poll\""),
                {"bad.dag:5:5: timer component \"poll\": interval not set (a "
                 "timer component needs a positive one, in milliseconds)"});
}

// The loader accepts exactly the periods a Timer accepts: one function
// decides both (timer::CheckPeriod).
TEST(ParseGraphErrorTest, TheLoaderAndTheTimerAgreeOnTheLimits) {
  timer::SimulatedTimerSystem system;
  const auto timer_status = [&](absl::Duration period) {
    TimerOptions o;
    o.name = "poll";
    o.period = period;
    o.callback = [] {};
    Timer t(std::move(o), &system.driver());
    absl::Status s = t.Schedule();
    t.Stop();
    return s;
  };
  // Zero: refused by both, in the same words.
  absl::StatusOr<Graph> zero = ParseGraph(TimerDag("interval: 0 name: \"poll\""), "bad.dag");
  ASSERT_FALSE(zero.ok());
  const absl::Status timer_zero = timer_status(absl::ZeroDuration());
  EXPECT_EQ(timer_zero.message(), "timer \"poll\": period 0 must be positive");
  EXPECT_EQ(zero.status().message(),
            "bad.dag:6:7: timer component \"poll\": interval 0 must be positive");
  // 1 ms (below the 2 ms tick: served exactly) and the largest uint32 of
  // milliseconds (~49.7 days): accepted by both.
  for (uint32_t ms : {1u, 2u, 4294967295u}) {
    absl::StatusOr<Graph> g = ParseGraph(
        TimerDag(absl::StrCat("interval: ", ms, " name: \"poll\"")), "ok.dag");
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->modules[0].timer_components[0].interval, absl::Milliseconds(ms));
    EXPECT_TRUE(timer_status(absl::Milliseconds(ms)).ok()) << ms;
  }
}

TEST(ParseGraphErrorTest, Readers) {
  ExpectInvalid(ComponentDag("name: \"fusion\"\n"
                             "      readers { channel: \"/a\" }\n"
                             "      readers { channel: \"\" }"),
                {"bad.dag:8:17: component \"fusion\": readers[1]: channel "
                 "\"\" is empty"});
  ExpectInvalid(ComponentDag("name: \"fusion\"\n"
                             "      readers { pending_queue_size: 2 }"),
                {"bad.dag:7:7: component \"fusion\": readers[0]: channel is "
                 "missing"});
  ExpectInvalid(
      ComponentDag("name: \"fusion\"\n"
                   "      readers { channel: \"/a\" pending_queue_size: 0 }"),
      {"bad.dag:7:31: component \"fusion\": reader of channel \"/a\": "
       "pending_queue_size 0 must be at least 1"});
}

TEST(ParseGraphErrorTest, RemoteInputs) {
  ExpectInvalid(ComponentDag("name: \"fusion\"\n"
                             "      remote_inputs: \"\""),
                {"bad.dag:7:7: component \"fusion\": remote_inputs[0] \"\" is "
                 "empty: name a channel the component reads"});
  ExpectInvalid(TimerDag("name: \"poller\" interval: 10\n"
                         "      remote_inputs: \"/imu\"\n"
                         "      remote_inputs: \"/imu\""),
                {"bad.dag:8:7: timer component \"poller\": remote_inputs[1] "
                 "\"/imu\" is listed twice"});
}

TEST(ParseGraphErrorTest, RemoteServices) {
  ExpectInvalid(ComponentDag("name: \"planner\"\n"
                             "      remote_services: \"\""),
                {"bad.dag:7:7: component \"planner\": remote_services[0] \"\" is "
                 "empty: name a service the component calls"});
  ExpectInvalid(TimerDag("name: \"planner\" interval: 10\n"
                         "      remote_services: \"/route\"\n"
                         "      remote_services: \"/route\""),
                {"bad.dag:8:7: timer component \"planner\": remote_services[1] "
                 "\"/route\" is listed twice"});
}

TEST(ParseGraphErrorTest, UnreadOutputs) {
  ExpectInvalid(ComponentDag("name: \"fusion\"\n"
                             "      unread_outputs: \"/a\" unread_outputs: \"\""),
                {"bad.dag:7:28: component \"fusion\": unread_outputs[1] \"\" is "
                 "empty: name a channel the component writes"});
  ExpectInvalid(TimerDag("name: \"poller\" interval: 10\n"
                         "      unread_outputs: \"/alarm\"\n"
                         "      unread_outputs: \"/alarm\""),
                {"bad.dag:8:7: timer component \"poller\": unread_outputs[1] "
                 "\"/alarm\" is listed twice"});
}

TEST(ParseGraphErrorTest, DuplicateNamesInOneFileShowBothLocations) {
  // The timer component comes first in the text although its module lists
  // components before timer components: "first" follows the text.
  ExpectInvalid(
      "module_config {\n"
      "  timer_components { class_name: \"T\" config { name: \"x\" "
      "interval: 10 } }\n"
      "}\n"
      "module_config {\n"
      "  components { class_name: \"C\" config { name: \"x\" } }\n"
      "}\n",
      {"bad.dag:5:3: component \"x\": name is already used by the timer "
       "component at bad.dag:2:3"});
  ExpectInvalid(
      "module_config {\n"
      "  components { class_name: \"C\" config { name: \"y\" } }\n"
      "  components { class_name: \"D\" config { name: \"y\" } }\n"
      "}\n",
      {"bad.dag:3:3: component \"y\"", "bad.dag:2:3"});
}

// --- Files -------------------------------------------------------------------

std::string TestTmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// Writes `content` to `path`, creating its directory.
void WriteFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path);
  out << content;
  ASSERT_TRUE(out.good()) << path;
}

TEST(ParseGraphFilesTest, RelativePathsResolveAgainstTheDagDirectory) {
  const fs::path dir = fs::path(TestTmpDir()) / "resolve" / "dags";
  WriteFile(dir / "conf" / "poll.pb.txt", "rate: 10\n");
  WriteFile(dir / "flags" / "poll.flag", "--v=1\n");
  const std::string dag = (dir / "poll.dag").string();
  WriteFile(dag, TimerDag("name: \"poll\" interval: 10\n"
                          "      config_file_path: \"conf/poll.pb.txt\"\n"
                          "      flag_file_path: \"flags/poll.flag\""));
  absl::StatusOr<Graph> graph = LoadGraphFile(dag);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const TimerComponentSpec& poll = graph->modules[0].timer_components[0];
  EXPECT_EQ(poll.config_file_path, (dir / "conf" / "poll.pb.txt").string());
  EXPECT_EQ(poll.flag_file_path, (dir / "flags" / "poll.flag").string());
}

TEST(ParseGraphFilesTest, CurrentDirectoryComesFirst) {
  // Tests run in the workspace root of their runfiles, where testdata/ is.
  const std::string relative =
      absl::StrCat(kTestdata, "common_component_example.dag");
  const fs::path cwd = fs::current_path();
  const fs::path dir = fs::path(TestTmpDir()) / "precedence";
  WriteFile(dir / relative, "# the copy beside the dag\n");
  absl::StatusOr<Graph> graph = ParseGraph(
      ComponentDag(absl::StrCat("name: \"fusion\" config_file_path: \"",
                                relative, "\"")),
      (dir / "fusion.dag").string());
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->modules[0].components[0].config_file_path,
            (cwd / relative).string());
}

TEST(ParseGraphFilesTest, RelativeDagDirectoryIsMadeAbsolute) {
  // The dag's directory is relative to the current directory; the stored
  // path is absolute all the same.
  absl::StatusOr<Graph> graph = ParseGraph(
      TimerDag("name: \"poll\" interval: 10 "
               "flag_file_path: \"timer_component_example.dag\""),
      absl::StrCat(kTestdata, "poll.dag"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->modules[0].timer_components[0].flag_file_path,
            (fs::current_path() / kTestdata / "timer_component_example.dag")
                .string());
}

TEST(ParseGraphFilesTest, AbsolutePathIsKeptAsWritten) {
  const fs::path file = fs::path(TestTmpDir()) / "absolute" / "fusion.conf";
  WriteFile(file, "x: 1\n");
  absl::StatusOr<Graph> graph = ParseGraph(
      ComponentDag(absl::StrCat("name: \"fusion\" config_file_path: \"",
                                file.string(), "\"")),
      "elsewhere/fusion.dag");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->modules[0].components[0].config_file_path, file.string());
}

TEST(ParseGraphFilesTest, MissingFilesAreNotFoundNamingBothPlaces) {
  const fs::path dir = fs::path(TestTmpDir()) / "missing";
  const std::string dag = (dir / "fusion.dag").string();
  const std::string cwd = fs::current_path().string();

  absl::StatusOr<Graph> graph = ParseGraph(
      ComponentDag("name: \"fusion\" config_file_path: \"conf/none.conf\""),
      dag);
  ExpectStatus(graph.status(), absl::StatusCode::kNotFound,
               {absl::StrCat(dag, ":6:22: component \"fusion\": "
                                  "config_file_path \"conf/none.conf\": no "
                                  "such file"),
                absl::StrCat("\"", cwd, "/conf/none.conf\""),
                absl::StrCat("\"", dir.string(), "/conf/none.conf\"")});

  graph = ParseGraph(TimerDag("name: \"poll\" interval: 10\n"
                              "      flag_file_path: \"poll.flag\""),
                     dag);
  ExpectStatus(graph.status(), absl::StatusCode::kNotFound,
               {absl::StrCat(dag, ":7:7: timer component \"poll\": "
                                  "flag_file_path \"poll.flag\": no such "
                                  "file"),
                absl::StrCat("\"", cwd, "/poll.flag\""),
                absl::StrCat("\"", dir.string(), "/poll.flag\"")});

  // A directory is not a config file.
  fs::create_directories(dir / "conf.d");
  graph = ParseGraph(
      ComponentDag("name: \"fusion\" config_file_path: \"conf.d\""), dag);
  ExpectStatus(graph.status(), absl::StatusCode::kNotFound,
               {"config_file_path \"conf.d\": no such file"});

  // An absolute path is tried once.
  graph = ParseGraph(
      ComponentDag("name: \"fusion\" config_file_path: \"/no/such.conf\""),
      dag);
  ExpectStatus(graph.status(), absl::StatusCode::kNotFound,
               {"config_file_path \"/no/such.conf\": no such file (tried "
                "\"/no/such.conf\")"});
}

// Sets an environment variable for one test, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), /*overwrite=*/1);
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* const name_;
  std::optional<std::string> old_;
};

// `bazel run` starts the binary in its runfiles; the user's shell was in
// $BUILD_WORKING_DIRECTORY, where a path typed relative to it is found.
TEST(ParseGraphFilesTest, BuildWorkingDirectoryIsTriedAfterTheDagDirectory) {
  const fs::path root = fs::path(TestTmpDir()) / "bazel_run";
  const fs::path shell_dir = root / "shell";
  WriteFile(shell_dir / "conf" / "user.conf", "# typed relative to the shell\n");
  WriteFile(shell_dir / "conf" / "both.conf", "# the shell's copy\n");
  const fs::path dag_dir = root / "dags";
  WriteFile(dag_dir / "conf" / "both.conf", "# the copy beside the dag\n");
  const ScopedEnv env("BUILD_WORKING_DIRECTORY", shell_dir.string());

  absl::StatusOr<Graph> graph = ParseGraph(
      ComponentDag("name: \"fusion\" config_file_path: \"conf/user.conf\""),
      (dag_dir / "fusion.dag").string());
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->modules[0].components[0].config_file_path,
            (shell_dir / "conf" / "user.conf").string());

  // The dag's directory comes first.
  graph = ParseGraph(
      TimerDag("name: \"poll\" interval: 10 flag_file_path: \"conf/both.conf\""),
      (dag_dir / "poll.dag").string());
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->modules[0].timer_components[0].flag_file_path,
            (dag_dir / "conf" / "both.conf").string());
}

TEST(ParseGraphFilesTest, MissingFileUnderBazelRunNamesEveryPlaceTried) {
  const fs::path root = fs::path(TestTmpDir()) / "bazel_run_missing";
  const fs::path shell_dir = root / "shell";
  fs::create_directories(shell_dir);
  const std::string dag = (root / "dags" / "fusion.dag").string();
  const std::string cwd = fs::current_path().string();
  const ScopedEnv env("BUILD_WORKING_DIRECTORY", shell_dir.string());

  absl::StatusOr<Graph> graph = ParseGraph(
      ComponentDag("name: \"fusion\" config_file_path: \"conf/none.conf\""), dag);
  ExpectStatus(graph.status(), absl::StatusCode::kNotFound,
               {"config_file_path \"conf/none.conf\": no such file (tried ",
                absl::StrCat("\"", cwd, "/conf/none.conf\""),
                absl::StrCat("\"", (root / "dags").string(), "/conf/none.conf\""),
                absl::StrCat("\"", shell_dir.string(),
                             "/conf/none.conf\" ($BUILD_WORKING_DIRECTORY)")});

  // An absolute path is tried once, whatever the environment.
  graph = ParseGraph(
      ComponentDag("name: \"fusion\" config_file_path: \"/no/such.conf\""), dag);
  ExpectStatus(graph.status(), absl::StatusCode::kNotFound,
               {"config_file_path \"/no/such.conf\": no such file (tried "
                "\"/no/such.conf\")"});
}

TEST(LoadGraphFileTest, MissingFileIsNotFound) {
  const std::string path = (fs::path(TestTmpDir()) / "absent.dag").string();
  absl::StatusOr<Graph> graph = LoadGraphFile(path);
  ExpectStatus(graph.status(), absl::StatusCode::kNotFound,
               {path, "cannot open dag file"});
}

TEST(LoadGraphFileTest, ErrorsNameTheFilePath) {
  const std::string path = (fs::path(TestTmpDir()) / "bad.dag").string();
  WriteFile(path, TimerDag("name: \"poll\" interval: 0"));
  absl::StatusOr<Graph> graph = LoadGraphFile(path);
  ExpectStatus(graph.status(), absl::StatusCode::kInvalidArgument,
               {absl::StrCat(path, ":6:20:"), "interval 0"});
}

// --- Several graphs ------------------------------------------------------------

TEST(CheckGraphsTest, DuplicateNameAcrossFilesShowsBothLocations) {
  absl::StatusOr<Graph> a = ParseGraph(
      "module_config {\n"
      "  components { class_name: \"A\" config { name: \"planning\" } }\n"
      "}\n",
      "a.dag");
  absl::StatusOr<Graph> b = ParseGraph(
      "# b\n"
      "module_config {\n"
      "  timer_components { class_name: \"P\" config { name: \"other\" "
      "interval: 10 } }\n"
      "  timer_components { class_name: \"B\" config { name: \"planning\" "
      "interval: 10 } }\n"
      "}\n",
      "b.dag");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(CheckGraphs({*a}).ok());
  EXPECT_TRUE(CheckGraphs({*b}).ok());
  EXPECT_TRUE(CheckGraphs({}).ok());
  ExpectStatus(CheckGraphs({*a, *b}), absl::StatusCode::kInvalidArgument,
               {"b.dag:4:3: timer component \"planning\": name is already "
                "used by the component at a.dag:2:3"});
  ExpectStatus(CheckGraphs({*b, *a}), absl::StatusCode::kInvalidArgument,
               {"a.dag:2:3: component \"planning\"", "b.dag:4:3"});
  ExpectStatus(CheckGraphs({*a, *a}), absl::StatusCode::kInvalidArgument,
               {"a.dag:2:3", "same dag file loaded twice"});
}

}  // namespace
}  // namespace dag
}  // namespace cyber
