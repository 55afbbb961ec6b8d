// cyber_channel, cyber_node and cyber_service's commands against real
// processes: inspect_test_peer (testing/) writers and a service on a random
// DDS domain, each announcing itself; the commands run in this process on
// a DomainGraph of its own, as the programs run them, with their output in
// a string. The last tests run the programs themselves (exit statuses,
// stdout).
//
// No assertion on time except the two targets the tools promise: hz within
// 1% of a 100 Hz and a 1 kHz writer (the writers' timers run on start +
// k * period and catch up a late call, so over a window of 3 s of messages
// they write at their rate; what is measured is the tool), and a process killed with
// -9 leaving the list within its lease (3 s) + 1 s. Every other wait is
// kPatience, which only bounds a failing test.

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/inspect/channel_command.h"
#include "cyber/inspect/node_command.h"
#include "cyber/inspect/service_command.h"
#include "cyber/transport/dds/shm_cleanup.h"
#include "cyber/transport/dds/testing/dds_test_process.h"
#include "cyber/transport/dds/testing/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace inspect {
namespace {

using dds_test::kPatience;
using dds_test::RunfilePath;
using dds_test::Subprocess;
using ::testing::HasSubstr;
using ::testing::Not;

struct Output {
  absl::Status status;
  std::string text;
};

class InspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    domain_ = dds_test::RandomDomain();
    setenv("CYBER_DOMAIN_ID", std::to_string(domain_).c_str(), 1);
    auto options = graph::DomainGraphOptionsFromEnvironment("inspect_test");
    ASSERT_TRUE(options.ok()) << options.status();
    auto joined = graph::DomainGraph::Join(*options);
    ASSERT_TRUE(joined.ok()) << joined.status();
    graph_ = *std::move(joined);
  }

  void TearDown() override {
    // Last started first: a peer inherited the stdin pipes of those started
    // before it (Subprocess's pipes are not close-on-exec), so an earlier
    // peer sees its stdin close only once the later ones have exited.
    while (!peers_.empty()) peers_.pop_back();  // closes its stdin, waits for it
    if (graph_) graph_->Leave();
    // A peer killed with -9 leaves its shared-memory files; nobody holds them.
    dds::RemoveDeadPeerSegments();
  }

  Subprocess* StartPeer(const std::vector<std::string>& mode_and_options) {
    std::vector<std::string> argv = {RunfilePath("cyber/inspect/testing/inspect_test_peer"),
                                     mode_and_options[0], std::to_string(domain_)};
    argv.insert(argv.end(), mode_and_options.begin() + 1, mode_and_options.end());
    peers_.push_back(std::make_unique<Subprocess>(argv));
    EXPECT_TRUE(peers_.back()->WaitForLine("ready", kPatience).has_value())
        << mode_and_options[0];
    return peers_.back().get();
  }

  // Waits until the graph shows `channel` with a writer.
  void AwaitWriter(const std::string& channel) {
    EXPECT_TRUE(graph_->WaitUntil(
        [&](const graph::DomainGraph& g) {
          auto c = g.Channel(channel);
          return c.ok() && !c->writers.empty();
        },
        kPatience))
        << channel;
  }

  // Stops a stream command that never ends (a failing test) after kPatience.
  static StopFn Bounded() {
    const absl::Time give_up = absl::Now() + kPatience;
    return [give_up] { return absl::Now() > give_up; };
  }

  Output Channel(const std::vector<std::string>& args) {
    auto parsed = ParseChannelArgs(args);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (!parsed.ok()) return {parsed.status(), ""};
    std::ostringstream out;
    absl::Status status = RunChannelCommand(*parsed, *graph_, out, Bounded());
    return {status, out.str()};
  }

  Output Node(const std::vector<std::string>& args) {
    auto parsed = ParseNodeArgs(args);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (!parsed.ok()) return {parsed.status(), ""};
    std::ostringstream out;
    absl::Status status = RunNodeCommand(*parsed, *graph_, out);
    return {status, out.str()};
  }

  Output Service(const std::vector<std::string>& args) {
    auto parsed = ParseServiceArgs(args);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (!parsed.ok()) return {parsed.status(), ""};
    std::ostringstream out;
    absl::Status status = RunServiceCommand(*parsed, *graph_, out);
    return {status, out.str()};
  }

  uint32_t domain_ = 0;
  std::unique_ptr<graph::DomainGraph> graph_;
  std::vector<std::unique_ptr<Subprocess>> peers_;
};

// The last "average rate: X" of hz's output.
double LastAverageRate(const std::string& out) {
  double rate = -1;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::ConsumePrefix(&line, "average rate: ")) {
      EXPECT_TRUE(absl::SimpleAtod(line, &rate));
    }
  }
  return rate;
}

TEST_F(InspectTest, ListInfoAndTypeShowTheRunningGraph) {
  StartPeer({"cloud"});
  Subprocess* rate = StartPeer({"rate", "/test/probe", "50"});
  AwaitWriter("/test/cloud");
  AwaitWriter("/test/probe");
  ASSERT_TRUE(graph_->WaitUntil(
      [](const graph::DomainGraph& g) {
        auto c = g.Channel("/test/probe");
        return c.ok() && !c->readers.empty();
      },
      kPatience));

  const Output list = Channel({"list"});
  ASSERT_TRUE(list.status.ok()) << list.status;
  EXPECT_EQ(list.text, "The number of channels is: 2\n/test/cloud\n/test/probe\n");

  const Output info = Channel({"info", "/test/probe"});
  ASSERT_TRUE(info.status.ok()) << info.status;
  EXPECT_THAT(info.text, HasSubstr("/test/probe\n\ttype: cyber.inspect_test.Probe\n"));
  EXPECT_THAT(info.text, HasSubstr("\twriters (1):\n\t\trate_writer in rate_peer@"));
  EXPECT_THAT(info.text, HasSubstr(absl::StrCat(":", rate->pid(), "  type: cyber.inspect_test.Probe"
                                                "  qos: reliable, volatile, keep last")));
  EXPECT_THAT(info.text, HasSubstr("\treaders (1):\n\t\tcloud_reader in cloud_peer@"));
  // Both peers run on this host: Fast-DDS links them by shared memory.
  EXPECT_THAT(info.text, HasSubstr("\tlinks (1):\n\t\trate_peer@"));
  EXPECT_THAT(info.text, ::testing::ContainsRegex("-> cloud_peer@[^:]+:[0-9]+: shm\n"));
  EXPECT_THAT(info.text, Not(HasSubstr("type conflict")));

  const Output type = Channel({"type", "/test/cloud"});
  ASSERT_TRUE(type.status.ok()) << type.status;
  EXPECT_THAT(type.text, ::testing::StartsWith("cyber.inspect_test.Cloud\n"));
  EXPECT_THAT(type.text, HasSubstr("message Cloud {"));
  EXPECT_THAT(type.text, HasSubstr("repeated .cyber.inspect_test.Point points = 2;"));
  // The types it uses are defined too.
  EXPECT_THAT(type.text, HasSubstr("message Point {\n  optional double x = 1;"));
  EXPECT_THAT(type.text, HasSubstr("message Header {"));
}

TEST_F(InspectTest, UnknownChannelNamesTheClosest) {
  StartPeer({"cloud"});
  AwaitWriter("/test/cloud");
  for (const char* command : {"info", "echo", "hz", "type"}) {
    const Output out = Channel({command, "/test/clod"});
    EXPECT_EQ(out.status.code(), absl::StatusCode::kNotFound) << command;
    EXPECT_THAT(std::string(out.status.message()), HasSubstr("did you mean \"/test/cloud\"?"))
        << command;
  }
  const Output bw = Channel({"bw", "/test/cloud", "/test/clod"});
  EXPECT_EQ(bw.status.code(), absl::StatusCode::kNotFound);
}

TEST_F(InspectTest, EmptyDomainSaysWhereItLooked) {
  const Output list = Channel({"list"});
  ASSERT_TRUE(list.status.ok()) << list.status;
  EXPECT_THAT(list.text, HasSubstr("The number of channels is: 0\nNo channel found in domain " +
                                   std::to_string(domain_)));
  const Output info = Channel({"info", "/sensor/imu"});
  EXPECT_EQ(info.status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(info.status.message()),
              HasSubstr("domain " + std::to_string(domain_)));
  EXPECT_THAT(Node({"list"}).text, HasSubstr("No node found in domain"));
  EXPECT_THAT(Service({"list"}).text, HasSubstr("No service found in domain"));
}

TEST_F(InspectTest, EchoPrintsTextFormatCountAndField) {
  StartPeer({"cloud"});
  AwaitWriter("/test/cloud");

  const Output echo = Channel({"echo", "/test/cloud", "-n", "2"});
  ASSERT_TRUE(echo.status.ok()) << echo.status;
  const std::vector<std::string> messages = absl::StrSplit(echo.text, "---\n", absl::SkipEmpty());
  ASSERT_EQ(messages.size(), 2u) << echo.text;
  for (const std::string& m : messages) {
    EXPECT_THAT(m, ::testing::MatchesRegex(
                       "header \\{\n  stamp: [0-9]+\n  frame_id: \"base\"\n\\}\n"
                       "points \\{\n  x: 0.5\n  y: 0\n\\}\n"
                       "points \\{\n  x: 1.5\n  y: 1\n\\}\n"
                       "points \\{\n  x: 2.5\n  y: 2\n\\}\n"
                       "kind: LIDAR\n"));
  }

  const Output field = Channel({"echo", "/test/cloud", "-n", "3", "-f", "points[1].x"});
  ASSERT_TRUE(field.status.ok()) << field.status;
  EXPECT_EQ(field.text, "1.5\n---\n1.5\n---\n1.5\n---\n");

  const Output bad = Channel({"echo", "/test/cloud", "-f", "header.stmp"});
  EXPECT_EQ(bad.status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(bad.status.message()), HasSubstr("did you mean \"stamp\"?"));
}

// The target: within 1% of a 100 Hz and a 1 kHz writer, over 3 s of
// messages each.
TEST_F(InspectTest, HzWithinOnePercentAt100HzAnd1kHz) {
  StartPeer({"rate", "/test/rate100", "100"});
  StartPeer({"rate", "/test/rate1k", "1000"});
  AwaitWriter("/test/rate100");
  AwaitWriter("/test/rate1k");

  const Output hz100 = Channel({"hz", "/test/rate100", "-n", "300", "-w", "300"});
  ASSERT_TRUE(hz100.status.ok()) << hz100.status;
  const double r100 = LastAverageRate(hz100.text);
  EXPECT_LT(std::abs(r100 - 100.0) / 100.0, 0.01) << hz100.text;
  EXPECT_THAT(hz100.text, ::testing::ContainsRegex(
                              "\tmin: [0-9.]+s max: [0-9.]+s std dev: [0-9.]+s window: 300\n$"));

  const Output hz1k = Channel({"hz", "/test/rate1k", "-n", "3000", "-w", "3000"});
  ASSERT_TRUE(hz1k.status.ok()) << hz1k.status;
  const double r1k = LastAverageRate(hz1k.text);
#if defined(__SANITIZE_THREAD__)
  // Under ThreadSanitizer the writer itself (5-15x slower) stalls for
  // 100 ms at times on a loaded 2-core machine, so the 1 kHz it is asked
  // for is not what it sends: the figure is printed, not held to 1%.
  EXPECT_GT(r1k, 0.0) << hz1k.text;
#else
  EXPECT_LT(std::abs(r1k - 1000.0) / 1000.0, 0.01) << hz1k.text;
#endif
  EXPECT_THAT(hz1k.text, HasSubstr("window: 3000\n"));
  std::printf("measured: %.3f Hz for 100 Hz, %.3f Hz for 1000 Hz\n", r100, r1k);
}

TEST_F(InspectTest, BwReportsSeveralChannelsWithSizes) {
  // Probe{seq < 128, 100-byte payload}: 2 + 2 + 100 = 104 bytes.
  StartPeer({"rate", "/test/big", "100", "100"});
  StartPeer({"rate", "/test/small", "50", "10"});
  AwaitWriter("/test/big");
  AwaitWriter("/test/small");
  const Output bw = Channel({"bw", "/test/big", "/test/small", "-n", "20", "-w", "20"});
  ASSERT_TRUE(bw.status.ok()) << bw.status;
  // The last report: both channels, their sizes; payload 10 -> 14 or 15 bytes.
  const size_t last = bw.text.rfind("/test/big\n");
  ASSERT_NE(last, std::string::npos) << bw.text;
  const std::string report = bw.text.substr(last);
  EXPECT_THAT(report, ::testing::MatchesRegex(
                          "/test/big\naverage: [0-9.]+ KB/s\n\tmean: 10[45] B min: 10[45] B max: "
                          "10[45] B window: 20\n"
                          "/test/small\naverage: [0-9.]+ B/s\n\tmean: 1[45] B min: 1[45] B max: "
                          "1[45] B window: 20\n"));
}

TEST_F(InspectTest, NodesListAndInfo) {
  StartPeer({"cloud"});
  StartPeer({"serve"});
  ASSERT_TRUE(graph_->WaitUntil(
      [](const graph::DomainGraph& g) { return g.Nodes().size() == 3; }, kPatience));
  const Output list = Node({"list"});
  ASSERT_TRUE(list.status.ok()) << list.status;
  EXPECT_THAT(list.text, ::testing::MatchesRegex("The number of nodes is: 3\n"
                                                 "cloud_reader\tcloud_peer@[^\n]+\n"
                                                 "cloud_writer\tcloud_peer@[^\n]+\n"
                                                 "echo_server\techo_peer@[^\n]+\n"));
  const Output info = Node({"info", "cloud_writer"});
  ASSERT_TRUE(info.status.ok()) << info.status;
  EXPECT_THAT(info.text, HasSubstr("Node: cloud_writer\n\tprocess: cloud_peer@"));
  EXPECT_THAT(info.text, HasSubstr("\twrites (1):\n\t\t/test/cloud\n\treads (0):\n"));
  const Output server = Node({"info", "echo_server"});
  EXPECT_THAT(server.text, HasSubstr("\tserves (1):\n\t\t/test/echo\n"));
  const Output unknown = Node({"info", "echo_srver"});
  EXPECT_EQ(unknown.status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(unknown.status.message()), HasSubstr("did you mean \"echo_server\"?"));
}

TEST_F(InspectTest, ServicesListInfoAndCall) {
  Subprocess* server = StartPeer({"serve"});
  ASSERT_TRUE(graph_->WaitUntil(
      [](const graph::DomainGraph& g) { return g.Service("/test/echo").ok(); }, kPatience));
  EXPECT_EQ(Service({"list"}).text, "The number of services is: 1\n/test/echo\n");
  const Output info = Service({"info", "/test/echo"});
  EXPECT_THAT(info.text, HasSubstr("/test/echo\n\trequest: cyber.inspect_test.EchoRequest\n"
                                   "\tresponse: cyber.inspect_test.EchoResponse\n"
                                   "\tservers (1):\n\t\techo_server in echo_peer@"));

  const Output call =
      Service({"call", "/test/echo", "text: \"hi\" repeat: 3", "--timeout", "10s"});
  ASSERT_TRUE(call.status.ok()) << call.status;
  EXPECT_EQ(call.text, absl::StrCat("text: \"hihihi\"\nserver_pid: ", server->pid(), "\n"));

  // The server's error: its code and message.
  const Output failed =
      Service({"call", "/test/echo", "text: \"x\" fail_code: 5", "--timeout", "10s"});
  EXPECT_EQ(failed.status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(failed.status.message()), HasSubstr("echo refuses \"x\""));

  // Never answered: the timeout, naming the service and the timeout.
  const Output held = Service({"call", "/test/echo", "hold: true", "--timeout", "300ms"});
  EXPECT_EQ(held.status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(held.status.message()), HasSubstr("/test/echo"));
  EXPECT_THAT(std::string(held.status.message()), HasSubstr("300ms"));

  const Output bad_text = Service({"call", "/test/echo", "txt: 1"});
  EXPECT_EQ(bad_text.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_text.status.message()), HasSubstr("column"));

  const Output unknown = Service({"info", "/test/echp"});
  EXPECT_EQ(unknown.status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(unknown.status.message()), HasSubstr("did you mean \"/test/echo\"?"));
}

// The target: never stale. A writer killed with -9 leaves the list within
// its lease (3 s) + 1 s.
TEST_F(InspectTest, KilledProcessLeavesTheListWithinItsLease) {
  StartPeer({"cloud"});
  Subprocess* doomed = StartPeer({"rate", "/test/doomed", "10"});
  AwaitWriter("/test/cloud");
  AwaitWriter("/test/doomed");
  EXPECT_THAT(Channel({"list"}).text, HasSubstr("/test/doomed\n"));

  doomed->Kill(SIGKILL);
  ASSERT_TRUE(doomed->Wait(kPatience).has_value());
  const absl::Time killed = absl::Now();
  const bool gone = graph_->WaitUntil(
      [](const graph::DomainGraph& g) { return !g.Channel("/test/doomed").ok(); },
      absl::Seconds(3) + absl::Seconds(1));
  const absl::Duration took = absl::Now() - killed;
  EXPECT_TRUE(gone) << "still listed " << took << " after kill -9";
  std::printf("/test/doomed left the graph %s after kill -9\n",
              absl::FormatDuration(took).c_str());
  // cloud_peer writes /test/cloud and reads /test/probe. It may have been
  // dropped for a moment too and found again (see domain_graph_test's
  // AProcessThatLeavesOrIsKilledDropsOut: Fast-DDS's shared-memory port
  // lock of a process killed holding it delays its peers' announcements).
  AwaitWriter("/test/cloud");
  EXPECT_EQ(Channel({"list"}).text, "The number of channels is: 2\n/test/cloud\n/test/probe\n");
}

// The example's pollers in a mainboard (pollers.dag: IMU at 100 Hz on
// /sensor/imu, lidar at 10 Hz on /sensor/lidar), beside a peer: what a user
// of the example sees. The tools are not compiled with the example's
// messages; they decode them from the announced descriptors.
TEST_F(InspectTest, MainboardOfTheExample) {
  auto mainboard = std::make_unique<Subprocess>(std::vector<std::string>{
      RunfilePath("examples/sensor_polling/mainboard"), "--process_name=pollers",
      "--status=never", "-d", RunfilePath("examples/sensor_polling/pollers.dag")});
  StartPeer({"cloud"});
  AwaitWriter("/sensor/imu");
  AwaitWriter("/sensor/lidar");
  AwaitWriter("/test/cloud");

  const Output list = Channel({"list"});
  EXPECT_EQ(list.text,
            "The number of channels is: 4\n/sensor/imu\n/sensor/lidar\n/test/cloud\n/test/probe\n");

  const Output info = Channel({"info", "/sensor/imu"});
  EXPECT_THAT(info.text, HasSubstr("/sensor/imu\n\ttype: sensor_polling.ImuReading\n"
                                   "\twriters (1):\n\t\timu in pollers@"));

  const Output type = Channel({"type", "/sensor/imu"});
  EXPECT_THAT(type.text, HasSubstr("message ImuReading {"));
  EXPECT_THAT(type.text, HasSubstr("message Vector3 {"));

  const Output echo = Channel({"echo", "/sensor/imu", "-n", "3"});
  ASSERT_TRUE(echo.status.ok()) << echo.status;
  const std::vector<std::string> messages = absl::StrSplit(echo.text, "---\n", absl::SkipEmpty());
  ASSERT_EQ(messages.size(), 3u) << echo.text;
  EXPECT_THAT(messages[0], ::testing::ContainsRegex("^seq: [0-9]+\nstamp_ns: [0-9]+\naccel \\{"));

  const Output seq = Channel({"echo", "/sensor/lidar", "-n", "2", "-f", "seq"});
  EXPECT_THAT(seq.text, ::testing::MatchesRegex("[0-9]+\n---\n[0-9]+\n---\n"));

  // The IMU poller is a TimerComponent: a runtime timer that skips a period
  // its starved call missed, so its rate is checked loosely here; the 1%
  // target is checked against the exact writer above.
  const Output hz = Channel({"hz", "/sensor/imu", "-n", "200"});
  ASSERT_TRUE(hz.status.ok()) << hz.status;
  EXPECT_NEAR(LastAverageRate(hz.text), 100.0, 5.0) << hz.text;

  const Output nodes = Node({"list"});
  EXPECT_THAT(nodes.text, ::testing::ContainsRegex("\nimu\tpollers@[^\n]+\n"));
  EXPECT_THAT(nodes.text, ::testing::ContainsRegex("\nlidar\tpollers@[^\n]+\n"));

  mainboard->Kill(SIGINT);
  EXPECT_TRUE(mainboard->Wait(kPatience).has_value());
}

// The programs themselves: --help, bad arguments, an error, a result.
class ProgramTest : public InspectTest {
 protected:
  // Runs `program` (cyber/tools/<program>/<program>) with `args`; its
  // stdout and exit status.
  std::pair<std::string, int> Run(const std::string& program,
                                  const std::vector<std::string>& args) {
    std::vector<std::string> argv = {RunfilePath("cyber/tools/" + program + "/" + program)};
    argv.insert(argv.end(), args.begin(), args.end());
    Subprocess p(argv);
    std::string out;
    while (std::optional<std::string> line = p.ReadLine(kPatience)) out += *line + "\n";
    std::optional<int> status = p.Wait(kPatience);
    EXPECT_TRUE(status.has_value() && WIFEXITED(*status)) << program;
    return {out, status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1};
  }
};

TEST_F(ProgramTest, HelpBadArgumentsErrorsAndResults) {
  for (const char* program : {"cyber_channel", "cyber_node", "cyber_service"}) {
    auto [help, code] = Run(program, {"--help"});
    EXPECT_EQ(code, 0) << program;
    EXPECT_THAT(help, HasSubstr(absl::StrCat("usage: ", program, " <command> [args]")));
    EXPECT_THAT(help, HasSubstr("list"));
    EXPECT_EQ(Run(program, {"frobnicate"}).second, 2) << program;
    EXPECT_EQ(Run(program, {}).second, 2) << program;
  }
  EXPECT_THAT(Run("cyber_channel", {"--help"}).first, HasSubstr("hz CHANNEL [-w WINDOW] [-n N]"));
  EXPECT_EQ(Run("cyber_channel", {"echo", "/a", "-x"}).second, 2);
  EXPECT_EQ(Run("cyber_channel", {"echo", "/a", "-n", "zero"}).second, 2);

  StartPeer({"cloud"});
  StartPeer({"serve"});
  AwaitWriter("/test/cloud");
  ASSERT_TRUE(graph_->WaitUntil(
      [](const graph::DomainGraph& g) { return g.Service("/test/echo").ok(); }, kPatience));

  auto [list, list_code] = Run("cyber_channel", {"list"});
  EXPECT_EQ(list_code, 0);
  EXPECT_EQ(list, "The number of channels is: 2\n/test/cloud\n/test/probe\n");
  EXPECT_EQ(Run("cyber_channel", {"info", "/test/clod"}).second, 1);
  auto [echo, echo_code] = Run("cyber_channel", {"echo", "/test/cloud", "-n", "1", "-f", "kind"});
  EXPECT_EQ(echo_code, 0);
  EXPECT_EQ(echo, "LIDAR\n---\n");
  auto [call, call_code] = Run("cyber_service", {"call", "/test/echo", "text: \"a\"", "--timeout=10s"});
  EXPECT_EQ(call_code, 0);
  EXPECT_THAT(call, HasSubstr("text: \"a\"\n"));
  EXPECT_EQ(Run("cyber_service", {"call", "/test/echo", "hold: true", "--timeout", "200ms"}).second,
            1);
  auto [nodes, nodes_code] = Run("cyber_node", {"list"});
  EXPECT_EQ(nodes_code, 0);
  EXPECT_THAT(nodes, HasSubstr("echo_server\techo_peer@"));
}

// hz without -n runs until Ctrl-C: a report a second, then SIGINT ends it
// with exit 0 and nothing left running.
TEST_F(ProgramTest, HzRunsUntilSigint) {
  StartPeer({"rate", "/test/steady", "100"});
  AwaitWriter("/test/steady");
  Subprocess hz({RunfilePath("cyber/tools/cyber_channel/cyber_channel"), "hz", "/test/steady"});
  // Two reports: it runs, and keeps running.
  ASSERT_TRUE(hz.WaitForLine("average rate: ", kPatience).has_value());
  ASSERT_TRUE(hz.WaitForLine("average rate: ", kPatience).has_value());
  hz.Kill(SIGINT);
  std::optional<int> status = hz.Wait(kPatience);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
}

}  // namespace
}  // namespace inspect
}  // namespace cyber
