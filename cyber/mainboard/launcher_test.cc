// Launcher: every bad graph is refused by Load(), before anything starts,
// with a message naming file, line and field; components start in file
// order (whichever their kind) and stop in reverse; channels written and
// never read (or read and never written) are warnings, silenced for a
// channel its writer lists in unread_outputs and turned into an error by
// strict mode; the final statistics count every call; a bad flag file is a
// located error. Test components are registered here.

#include "cyber/mainboard/launcher.h"

#include <algorithm>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/common/test_waits.h"
#include "cyber/testing/log_capture.h"
#include "cyber/transport/service_report.h"
#include "gflags/gflags.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"

DEFINE_int32(launcher_test_rate, 1, "set by the flag file tests");

namespace cyber {
namespace {

std::atomic<int> g_inits{0};
std::atomic<int> g_clears{0};
std::atomic<uint64_t> g_interval_in_init{0};

class CountingTimer : public TimerComponent {
 public:
  bool Init() override {
    ++g_inits;
    g_interval_in_init = GetInterval();  // valid already inside Init()
    return true;
  }
  bool Proc() override { return (++calls_ % 2) == 0; }  // every other fails
  void Clear() override { ++g_clears; }

 private:
  std::atomic<int> calls_{0};
};
CYBER_REGISTER_COMPONENT(CountingTimer)

class RefusingTimer : public TimerComponent {
 public:
  bool Init() override { return false; }
  bool Proc() override { return true; }
};
CYBER_REGISTER_COMPONENT(RefusingTimer)

struct Msg {
  int value = 0;
};
class MsgSink : public Component<Msg> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Msg>&) override { return true; }
};
CYBER_REGISTER_COMPONENT(MsgSink)

// Subscribes to a second channel itself, in Init().
std::atomic<int> g_extra_deliveries{0};
class ExtraReaderSink : public Component<Msg> {
 public:
  bool Init() override {
    auto r = node()->TryCreateReader<Msg>(
        "/extra", [](const std::shared_ptr<const Msg>&) { ++g_extra_deliveries; }, 64);
    if (!r.ok()) return false;
    extra_ = *r;
    return true;
  }
  bool Proc(const std::shared_ptr<Msg>&) override { return true; }

 private:
  std::shared_ptr<Reader<Msg>> extra_;
};
CYBER_REGISTER_COMPONENT(ExtraReaderSink)

// Init() and Clear() of these record "init NAME" / "clear NAME".
std::mutex g_order_mu;
std::vector<std::string> g_order;
void RecordOrder(const std::string& what) {
  std::lock_guard<std::mutex> lock(g_order_mu);
  g_order.push_back(what);
}
std::vector<std::string> TakeOrder() {
  std::lock_guard<std::mutex> lock(g_order_mu);
  return std::exchange(g_order, {});
}
class OrderTimer : public TimerComponent {
 public:
  bool Init() override {
    RecordOrder("init " + name());
    return true;
  }
  bool Proc() override { return true; }
  void Clear() override { RecordOrder("clear " + name()); }
};
CYBER_REGISTER_COMPONENT(OrderTimer)
class OrderSink : public Component<Msg> {
 public:
  bool Init() override {
    RecordOrder("init " + name());
    return true;
  }
  bool Proc(const std::shared_ptr<Msg>&) override { return true; }
  void Clear() override { RecordOrder("clear " + name()); }
};
CYBER_REGISTER_COMPONENT(OrderSink)

// Writes a Msg on "/imu" every period (its writer is created in Init(), as
// robot code does).
class ImuWriter : public TimerComponent {
 public:
  bool Init() override {
    writer_ = node_->CreateWriter<Msg>("/imu");
    return writer_ != nullptr;
  }
  bool Proc() override { return writer_->Write(Msg()); }

 private:
  std::shared_ptr<Writer<Msg>> writer_;
};
CYBER_REGISTER_COMPONENT(ImuWriter)

// Its first Proc() waits in g_proc_gate until the test opens it.
test::Gate* g_proc_gate = nullptr;
class GatedTimer : public TimerComponent {
 public:
  bool Init() override { return true; }
  bool Proc() override {
    if (calls_++ == 0) g_proc_gate->Wait();
    return true;
  }

 private:
  std::atomic<int> calls_{0};
};
CYBER_REGISTER_COMPONENT(GatedTimer)

// Serves "/planning/route" (request and response Msg).
class RouteServer : public TimerComponent {
 public:
  bool Init() override {
    service_ = node_->CreateService<Msg, Msg>(
        "/planning/route", [](const std::shared_ptr<Msg>&, std::shared_ptr<Msg>&) {});
    return service_ != nullptr;
  }
  bool Proc() override { return true; }

 private:
  std::shared_ptr<Service<Msg, Msg>> service_;
};
CYBER_REGISTER_COMPONENT(RouteServer)

// A client of "/planning/route" (RouteCaller) and of a typo of it
// (TypoCaller), made in Init() as robot code does.
template <const char* kService>
class Caller : public TimerComponent {
 public:
  bool Init() override {
    client_ = node_->CreateClient<Msg, Msg>(kService);
    return client_ != nullptr;
  }
  bool Proc() override { return true; }

 private:
  std::shared_ptr<Client<Msg, Msg>> client_;
};
constexpr char kRoute[] = "/planning/route";
constexpr char kRouteTypo[] = "/planning/rout";
using RouteCaller = Caller<kRoute>;
using TypoCaller = Caller<kRouteTypo>;
CYBER_REGISTER_COMPONENT(RouteCaller)
CYBER_REGISTER_COMPONENT(TypoCaller)

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

absl::Status LoadText(const std::string& name, const std::string& text) {
  Launcher launcher;
  return launcher.Load({WriteFile(name, text)});
}

void ExpectRefused(const absl::Status& s, const std::string& file_line,
                   const std::string& field) {
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(file_line), std::string::npos) << s;
  EXPECT_NE(s.message().find(field), std::string::npos) << s;
}

TEST(LauncherTest, SyntaxErrorIsRefusedWithFileAndLine) {
  ExpectRefused(LoadText("syntax.dag",
                         "module_config {\n  timer_components {\n    class_name: \"CountingTimer\"\n"
                         "    config { name: \"t\" interval: ten }\n  }\n}\n"),
                "syntax.dag:4", "interval");
}

TEST(LauncherTest, UnknownClassIsRefusedNamingItAndWhatIsLinked) {
  const absl::Status s = LoadText(
      "unknown.dag",
      "module_config {\n  timer_components {\n    class_name: \"NoSuchPoller\"\n"
      "    config { name: \"t\" interval: 10 }\n  }\n}\n");
  ExpectRefused(s, "unknown.dag:2", "class_name \"NoSuchPoller\"");
  EXPECT_NE(s.message().find("(linked in: "), std::string::npos) << s;
  EXPECT_NE(s.message().find("CountingTimer"), std::string::npos) << s;
  // With none linked in (the plain mainboard binary), the message asks
  // about alwayslink instead: cyber/mainboard/mainboard_errors_test.sh.
  EXPECT_EQ(s.message().find("alwayslink"), std::string::npos) << s;
}

TEST(LauncherTest, IntervalZeroIsRefusedAndBelowTheTickIsNot) {
  ExpectRefused(LoadText("zero.dag",
                         "module_config {\n timer_components {\n  class_name: \"CountingTimer\"\n"
                         "  config { name: \"t\" interval: 0 }\n }\n}\n"),
                "zero.dag:", "interval 0");
  // 1 ms (below the 2 ms tick) runs at 1 kHz exactly, as a Timer's period.
  EXPECT_TRUE(LoadText("fast.dag",
                       "module_config {\n timer_components {\n  class_name: \"CountingTimer\"\n"
                       "  config { name: \"t\" interval: 1 }\n }\n}\n")
                  .ok());
  // Above 24 h is a Timer's valid period, so a graph's too.
  EXPECT_TRUE(LoadText("day.dag",
                       "module_config {\n timer_components {\n  class_name: \"CountingTimer\"\n"
                       "  config { name: \"t\" interval: 90000000 }\n }\n}\n")
                  .ok());
}

TEST(LauncherTest, MissingFilesAreRefused) {
  Launcher launcher;
  const absl::Status missing_dag = launcher.Load({"/nonexistent/graph.dag"});
  EXPECT_EQ(missing_dag.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing_dag.message().find("/nonexistent/graph.dag"), std::string::npos);
  ExpectRefused(LoadText("conf.dag",
                         "module_config {\n timer_components {\n  class_name: \"CountingTimer\"\n"
                         "  config { name: \"t\" interval: 10 config_file_path: \"nope.conf\" }\n"
                         " }\n}\n"),
                "conf.dag:", "config_file_path \"nope.conf\"");
}

TEST(LauncherTest, DuplicateNamesAreRefusedWithinAndAcrossFiles) {
  ExpectRefused(LoadText("dup.dag",
                         "module_config {\n"
                         " timer_components { class_name: \"CountingTimer\" config { name: \"t\" interval: 10 } }\n"
                         " timer_components { class_name: \"CountingTimer\" config { name: \"t\" interval: 20 } }\n"
                         "}\n"),
                "dup.dag:3", "\"t\"");
  const std::string a = WriteFile("a.dag",
      "module_config { timer_components { class_name: \"CountingTimer\" config { name: \"same\" interval: 10 } } }\n");
  const std::string b = WriteFile("b.dag",
      "module_config { timer_components { class_name: \"CountingTimer\" config { name: \"same\" interval: 10 } } }\n");
  Launcher launcher;
  ExpectRefused(launcher.Load({a, b}), "b.dag:1", "a.dag:1");
}

TEST(LauncherTest, WrongKindOfEntryIsRefusedAtStart) {
  Launcher launcher;
  ASSERT_TRUE(launcher.Load({WriteFile("kind.dag",
      "module_config { components { class_name: \"CountingTimer\" config { name: \"k\" "
      "readers { channel: \"/x\" } } } }\n")}).ok());
  const absl::Status s = launcher.Start();
  ExpectRefused(s, "kind.dag:1", "is a timer component; list it under timer_components");
}

class LauncherRunTest : public ::testing::Test {
 protected:
  LauncherRunTest()
      : runtime_([this] {
          Runtime::Options o;
          o.name = "launcher_test";
          o.clock = &clock_;
          o.config = scheduler::DefaultSchedulerConfig(2);
          return o;
        }()) {
    context_.runtime = &runtime_;
  }
  ~LauncherRunTest() override { runtime_.Shutdown(); }

  SimulatedClock clock_{Instant() + absl::Hours(1)};
  Runtime runtime_;
  scheduler::Scheduler& sched_ = *runtime_.scheduler();
  timer::TimerSystem& driver_ = *runtime_.timers();
  ChannelBus& bus_ = *runtime_.bus();
  ComponentContext context_;
};

TEST_F(LauncherRunTest, InitFailureStopsWhatStartedAndNamesTheComponent) {
  g_inits = 0;
  g_clears = 0;
  Launcher launcher(context_);
  ASSERT_TRUE(launcher.Load({WriteFile("refuse.dag",
      "module_config {\n"
      " timer_components { class_name: \"CountingTimer\" config { name: \"ok\" interval: 10 } }\n"
      " timer_components { class_name: \"RefusingTimer\" config { name: \"bad\" interval: 10 } }\n"
      "}\n")}).ok());
  const absl::Status s = launcher.Start();
  ExpectRefused(s, "refuse.dag:3", "component \"bad\" (RefusingTimer): Init() returned false");
  EXPECT_EQ(g_inits, 1);
  EXPECT_EQ(g_clears, 1);  // the one that had started was shut down again
  EXPECT_TRUE(launcher.Stats().empty());
}

TEST_F(LauncherRunTest, TimerComponentRunsCountsFailuresAndStopsSynchronously) {
  g_clears = 0;
  Launcher launcher(context_);
  ASSERT_TRUE(launcher.Load({WriteFile("run.dag",
      "module_config {\n"
      " timer_components { class_name: \"CountingTimer\" config { name: \"c\" interval: 20 } }\n"
      " components { class_name: \"MsgSink\" config { name: \"sink\" readers { channel: \"/m\" } } }\n"
      "}\n")}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  EXPECT_EQ(g_interval_in_init.load(), 20u);
  // Drive simulated time: 10 periods of 20 ms.
  for (int i = 1; i <= 10; ++i) {
    driver_.AwaitIdle();
    clock_.AdvanceTo(driver_.PlannedWake());
    // Wait (a bounded spin: the limit only bounds a failing test) until the
    // call ran and its routine finished, re-arming the timer, before time
    // moves again.
    ASSERT_TRUE(test::Eventually([&] {
      for (const auto& s : launcher.Stats()) {
        if (s.name == "c" && s.procs >= static_cast<uint64_t>(i) &&
            sched_.stats().live == 0) {
          return true;
        }
      }
      return false;
    })) << "call " << i;
  }
  const auto stats = launcher.Stats();
  ASSERT_EQ(stats.size(), 2u);
  const ComponentStats& c = stats[0];  // first in the file, first started
  EXPECT_EQ(c.name, "c");
  EXPECT_EQ(stats[1].name, "sink");
  EXPECT_EQ(c.procs, 10u);
  EXPECT_EQ(c.proc_failures, 5u);  // counted (and logged)
  EXPECT_NEAR(c.achieved_hz, 50.0, 1e-6);  // simulated time: exact
  EXPECT_EQ(c.early_fires, 0u);
  launcher.Stop();
  EXPECT_EQ(g_clears, 1);
  // Stopped synchronously: time moves on, nothing runs.
  clock_.Advance(absl::Seconds(1));
  driver_.AwaitIdle();
  EXPECT_TRUE(launcher.Stats().empty());
}

TEST_F(LauncherRunTest, ShutdownAlsoStopsReadersTheComponentCreatedItself) {
  Launcher launcher(context_);
  ASSERT_TRUE(launcher.Load({WriteFile("extra.dag",
      "module_config { components { class_name: \"ExtraReaderSink\" config { name: \"x\" "
      "readers { channel: \"/main\" } } } }\n")}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  Node writer_node("writer", &sched_, &bus_);
  auto writer = writer_node.TryCreateWriter<Msg>("/extra");
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write(Msg()));
  ASSERT_TRUE(test::Eventually([] { return g_extra_deliveries.load() >= 1; }));
  ASSERT_EQ(g_extra_deliveries.load(), 1);
  launcher.Stop();  // synchronous for every reader of the component's node
  for (int i = 0; i < 50; ++i) (*writer)->Write(Msg());
  sched_.Async([] {}).get();  // anything queued before has had its turn
  EXPECT_EQ(g_extra_deliveries.load(), 1);
}

TEST_F(LauncherRunTest, ComponentsStartInFileOrderWhicheverTheirKindAndStopInReverse) {
  TakeOrder();
  const std::string first = WriteFile("order1.dag",
      "module_config {\n"
      "  timer_components { class_name: \"OrderTimer\" config { name: \"t1\" interval: 10 } }\n"
      "  components { class_name: \"OrderSink\" config { name: \"c1\" readers { channel: \"/o\" } } }\n"
      "  timer_components { class_name: \"OrderTimer\" config { name: \"t2\" interval: 10 } }\n"
      "  components { class_name: \"OrderSink\" config { name: \"c2\" readers { channel: \"/o\" } } }\n"
      "}\n"
      "module_config {\n"
      "  timer_components { class_name: \"OrderTimer\" config { name: \"t3\" interval: 10 } }\n"
      "  components { class_name: \"OrderSink\" config { name: \"c3\" readers { channel: \"/o\" } } }\n"
      "}\n");
  // Two entries on one line: by column.
  const std::string second = WriteFile("order2.dag",
      "module_config { timer_components { class_name: \"OrderTimer\" config { name: \"t4\" "
      "interval: 10 } } components { class_name: \"OrderSink\" config { name: \"c4\" "
      "readers { channel: \"/o\" } } } }\n");
  Launcher launcher(context_);
  ASSERT_TRUE(launcher.Load({first, second}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  const std::vector<std::string> started = {"t1", "c1", "t2", "c2", "t3", "c3", "t4", "c4"};
  std::vector<std::string> expected;
  for (const std::string& n : started) expected.push_back("init " + n);
  EXPECT_EQ(TakeOrder(), expected);
  std::vector<std::string> names;
  for (const ComponentStats& s : launcher.Stats()) names.push_back(s.name);
  EXPECT_EQ(names, started);
  launcher.Stop();
  expected.clear();
  for (auto it = started.rbegin(); it != started.rend(); ++it) expected.push_back("clear " + *it);
  EXPECT_EQ(TakeOrder(), expected);
}

TEST_F(LauncherRunTest, FinalStatsCountTheCallThatWasRunningWhenStopWasCalled) {
  test::Gate gate;
  g_proc_gate = &gate;
  Launcher launcher(context_);
  ASSERT_TRUE(launcher.Load({WriteFile("gated.dag",
      "module_config { timer_components { class_name: \"GatedTimer\" "
      "config { name: \"g\" interval: 10 } } }\n")}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  EXPECT_TRUE(launcher.FinalStats().empty());
  driver_.AwaitIdle();
  clock_.AdvanceTo(driver_.PlannedWake());
  ASSERT_TRUE(gate.AwaitEntered());
  // The call is running: statistics taken now do not count it yet (a
  // summary taken now is one call short).
  ASSERT_EQ(launcher.Stats().size(), 1u);
  EXPECT_EQ(launcher.Stats()[0].procs, 0u);
  std::thread stopper([&] { launcher.Stop(); });  // waits for the call
  gate.Open();
  stopper.join();
  const std::vector<ComponentStats> final_stats = launcher.FinalStats();
  ASSERT_EQ(final_stats.size(), 1u);
  EXPECT_EQ(final_stats[0].name, "g");
  EXPECT_EQ(final_stats[0].procs, 1u);
  EXPECT_TRUE(launcher.Stats().empty());
  g_proc_gate = nullptr;
}

TEST_F(LauncherRunTest, FinalStatsCountEveryWriteAfterARun) {
  Launcher launcher(context_);
  ASSERT_TRUE(launcher.Load({WriteFile("writes.dag",
      "module_config {\n"
      " timer_components { class_name: \"ImuWriter\" config { name: \"imu\" interval: 10 } }\n"
      " components { class_name: \"MsgSink\" config { name: \"sink\" "
      "readers { channel: \"/imu\" pending_queue_size: 100 } } }\n"
      "}\n")}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  EXPECT_TRUE(launcher.ChannelWarnings().empty());
  for (int i = 1; i <= 30; ++i) {
    driver_.AwaitIdle();
    clock_.AdvanceTo(driver_.PlannedWake());
    ASSERT_TRUE(test::Eventually([&] {
      const auto stats = launcher.Stats();
      return stats[0].procs >= static_cast<uint64_t>(i) && stats[1].procs >= static_cast<uint64_t>(i) &&
             sched_.stats().live == 0;
    })) << "call " << i;
  }
  launcher.Stop();
  const auto stats = launcher.FinalStats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].procs, 30u);
  EXPECT_EQ(stats[1].procs, 30u);
  EXPECT_EQ(stats[1].dropped, 0u);
}

TEST_F(LauncherRunTest, ChannelsWrittenAndNotReadOrReadAndNotWrittenAreWarnings) {
  // Other nodes of the bus: one writes "/log" (read by a component, so it
  // is matched), one writes "/elsewhere", a channel no component uses.
  Node stranger("stranger", &sched_, &bus_);
  auto log_writer = stranger.TryCreateWriter<Msg>("/log");
  auto other_writer = stranger.TryCreateWriter<Msg>("/elsewhere");
  ASSERT_TRUE(log_writer.ok() && other_writer.ok());
  test::LogCapture warnings;
  Launcher launcher(context_);
  ASSERT_TRUE(launcher.Load({WriteFile("typo.dag",
      "module_config {\n"
      "  timer_components { class_name: \"ImuWriter\" config { name: \"imu\" interval: 10 } }\n"
      "  components { class_name: \"MsgSink\" config { name: \"fusion\" readers { channel: \"/imux\" } } }\n"
      "  components { class_name: \"MsgSink\" config { name: \"logger\" readers { channel: \"/log\" } } }\n"
      "}\n")}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  const std::string type = transport_internal::TypeName(typeid(Msg));
  const std::vector<std::string> expected = {
      "channel \"/imu\" (" + type + ") is written by component \"imu\" (" +
          std::string(getenv("TEST_TMPDIR")) + "/typo.dag:2:3) but read by no one; a typo? "
          "\"/imux\" (same type) is read but written by no one; if no reader is meant, add "
          "unread_outputs: \"/imu\" to the config of component \"imu\"",
      "channel \"/imux\" (" + type + ") is read by component \"fusion\" (" +
          std::string(getenv("TEST_TMPDIR")) + "/typo.dag:3:3) but written by no one; a typo? "
          "\"/imu\" (same type) is written but read by no one; if another process writes it, "
          "add remote_inputs: \"/imux\" to the config of component \"fusion\"",
  };
  EXPECT_EQ(launcher.ChannelWarnings(), expected);
  for (const std::string& w : expected) EXPECT_EQ(warnings.Containing(w).size(), 1u) << w;
  EXPECT_EQ(warnings.Containing("/log").size(), 0u);
  EXPECT_EQ(warnings.Containing("/elsewhere").size(), 0u);
  launcher.Stop();
  EXPECT_EQ(launcher.ChannelWarnings(), expected);  // for the summary
}

TEST_F(LauncherRunTest, StrictModeRefusesAReadTypoListingTheWarningAndStopsEverything) {
  g_clears = 0;
  test::LogCapture warnings;
  Launcher launcher(context_);
  launcher.set_strict(true);
  const std::string dag = WriteFile("strict_typo.dag",
      "module_config {\n"
      "  timer_components { class_name: \"ImuWriter\" config { name: \"imu\" interval: 10\n"
      "                     unread_outputs: \"/imu\" } }\n"
      "  components { class_name: \"MsgSink\" config { name: \"fusion\" readers { channel: \"/imux\" } } }\n"
      "  timer_components { class_name: \"CountingTimer\" config { name: \"c\" interval: 10 } }\n"
      "}\n");
  ASSERT_TRUE(launcher.Load({dag}).ok());
  const absl::Status s = launcher.Start();
  const std::string warning =
      "channel \"/imux\" (" + transport_internal::TypeName(typeid(Msg)) +
      ") is read by component \"fusion\" (" + dag +
      ":4:3) but written by no one; a typo? \"/imu\" (same type) is written but read by no one; "
      "if another process writes it, add remote_inputs: \"/imux\" to the config of component "
      "\"fusion\"";
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(std::string(s.message()),
            "strict graph: 1 graph warning is an error in strict mode:\n  " + warning);
  // Every component was initialized (the warning needs their writers), then
  // stopped again; nothing runs.
  EXPECT_TRUE(launcher.Stats().empty());
  EXPECT_EQ(g_clears, 1);  // CountingTimer's Clear()
  EXPECT_EQ(launcher.FinalStats().size(), 3u);
  // In the error once, not logged beside it.
  EXPECT_EQ(warnings.Containing("/imux").size(), 0u);
  EXPECT_EQ(launcher.ChannelWarnings(), std::vector<std::string>{warning});

  // The same graph without strict mode starts, and warns.
  Launcher lenient(context_);
  ASSERT_TRUE(lenient.Load({dag}).ok());
  ASSERT_TRUE(lenient.Start().ok());
  EXPECT_EQ(lenient.ChannelWarnings(), std::vector<std::string>{warning});
  EXPECT_EQ(warnings.Containing(warning).size(), 1u);
}

TEST_F(LauncherRunTest, UnreadOutputsSilenceAWrittenUnreadChannelAndStrictModePasses) {
  Launcher launcher(context_);
  launcher.set_strict(true);
  ASSERT_TRUE(launcher.Load({WriteFile("alarm.dag",
      "module_config {\n"
      "  timer_components { class_name: \"ImuWriter\" config { name: \"imu\" interval: 10\n"
      "                     unread_outputs: \"/imu\" } }\n"
      "}\n")}).ok());
  const absl::Status s = launcher.Start();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(launcher.ChannelWarnings().empty());
  EXPECT_EQ(launcher.Stats().size(), 1u);
  launcher.Stop();

  // Undeclared, the same channel is a warning, and strict mode refuses it.
  Launcher undeclared(context_);
  undeclared.set_strict(true);
  ASSERT_TRUE(undeclared.Load({WriteFile("alarm_undeclared.dag",
      "module_config {\n"
      "  timer_components { class_name: \"ImuWriter\" config { name: \"imu\" interval: 10 } }\n"
      "}\n")}).ok());
  const absl::Status refused = undeclared.Start();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_NE(refused.message().find("channel \"/imu\""), std::string::npos) << refused;
  EXPECT_NE(refused.message().find("add unread_outputs: \"/imu\" to the config of component "
                                   "\"imu\""),
            std::string::npos)
      << refused;
}

TEST_F(LauncherRunTest, RemoteInputsSilenceAChannelWrittenByAnotherProcessAndMustBeRead) {
  Launcher launcher(context_);
  launcher.set_strict(true);
  ASSERT_TRUE(launcher.Load({WriteFile("fusion_side.dag",
      "module_config {\n"
      "  components { class_name: \"MsgSink\" config { name: \"fusion\"\n"
      "               readers { channel: \"/imu\" } remote_inputs: \"/imu\" } }\n"
      "}\n")}).ok());
  const absl::Status s = launcher.Start();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(launcher.ChannelWarnings().empty());
  launcher.Stop();

  // A remote input the component does not read is a typo, named.
  Launcher stale(context_);
  const std::string dag = WriteFile("fusion_stale.dag",
      "module_config {\n"
      "  components { class_name: \"MsgSink\" config { name: \"fusion\"\n"
      "               readers { channel: \"/imu\" } remote_inputs: \"/imu\"\n"
      "               remote_inputs: \"/lidar\" } }\n"
      "}\n");
  ASSERT_TRUE(stale.Load({dag}).ok());
  ASSERT_TRUE(stale.Start().ok());
  EXPECT_EQ(stale.ChannelWarnings(),
            std::vector<std::string>{"channel \"/lidar\" is listed in remote_inputs of component "
                                     "\"fusion\" (" + dag + ":2:3) but that component does not "
                                     "read it (it reads \"/imu\")"});
}

// The graph of the service tests: a server, a client of it, and a client
// of a typo of its name.
std::string ServiceTypoDag(const std::string& file, const std::string& typo_config = "") {
  return WriteFile(file,
      "module_config {\n"
      "  timer_components { class_name: \"RouteServer\" config { name: \"router\" interval: 10 } }\n"
      "  timer_components { class_name: \"TypoCaller\" config { name: \"planner\" interval: 10" +
          typo_config + " } }\n"
      "  timer_components { class_name: \"RouteCaller\" config { name: \"control\" interval: 10 } }\n"
      "}\n");
}

TEST_F(LauncherRunTest, ClientsOfAServiceNobodyServesAreWarningsNamingTheNearestServedOne) {
  test::LogCapture warnings;
  Launcher launcher(context_);
  const std::string dag = ServiceTypoDag("service_typo.dag");
  ASSERT_TRUE(launcher.Load({dag}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  const std::string type = transport_internal::TypeName(typeid(Msg));
  const std::string warning =
      "service \"/planning/rout\" (request " + type + ", response " + type +
      ") is called by component \"planner\" (" + dag +
      ":3:3) but served by no one; did you mean \"/planning/route\"? (served by component "
      "\"router\" (" + dag + ":2:3)); if another process serves it, add remote_services: "
      "\"/planning/rout\" to the config of component \"planner\"";
  // The served service and its client ("control") are not warned about.
  EXPECT_EQ(launcher.ChannelWarnings(), std::vector<std::string>{warning});
  EXPECT_EQ(warnings.Containing(warning).size(), 1u);
  launcher.Stop();
}

TEST_F(LauncherRunTest, FinalServicesListEveryServerAndClientOfTheComponents) {
  Launcher launcher(context_);
  ASSERT_TRUE(launcher.Load({ServiceTypoDag("final_services.dag")}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  EXPECT_TRUE(launcher.FinalServices().empty());  // nothing stopped yet
  launcher.Stop();
  const std::vector<transport_internal::ServiceEndpointReport> rows = launcher.FinalServices();
  std::vector<std::string> seen;
  for (const auto& r : rows) {
    seen.push_back(r.service + " " + r.node + (r.server ? " server" : " client") +
                   (r.shut_down ? " (shut down)" : ""));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"/planning/rout planner client (shut down)",
                                            "/planning/route router server (shut down)",
                                            "/planning/route control client (shut down)"}));
  // The table mainboard prints: a header and a row each.
  const std::string table = ServiceTable(rows);
  EXPECT_NE(table.find("/planning/route"), std::string::npos) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 4) << table;
}

TEST_F(LauncherRunTest, StrictModeRefusesAClientOfAServiceNobodyServes) {
  Launcher launcher(context_);
  launcher.set_strict(true);
  const std::string dag = ServiceTypoDag("strict_service_typo.dag");
  ASSERT_TRUE(launcher.Load({dag}).ok());
  const absl::Status s = launcher.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("strict graph: 1 graph warning is an error in strict mode:\n  "
                             "service \"/planning/rout\""),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("did you mean \"/planning/route\"?"), std::string::npos) << s;
  EXPECT_TRUE(launcher.Stats().empty());  // everything stopped again
}

TEST_F(LauncherRunTest, RemoteServicesSilenceAServiceServedByAnotherProcessAndMustBeCalled) {
  Launcher launcher(context_);
  launcher.set_strict(true);
  ASSERT_TRUE(launcher.Load({ServiceTypoDag("remote_service.dag",
                                            " remote_services: \"/planning/rout\"")})
                  .ok());
  const absl::Status s = launcher.Start();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(launcher.ChannelWarnings().empty());
  launcher.Stop();

  // A remote service the component does not call is a typo, named.
  Launcher stale(context_);
  const std::string dag = ServiceTypoDag(
      "remote_service_stale.dag",
      " remote_services: \"/planning/rout\" remote_services: \"/planning/x\"");
  ASSERT_TRUE(stale.Load({dag}).ok());
  ASSERT_TRUE(stale.Start().ok());
  EXPECT_EQ(stale.ChannelWarnings(),
            std::vector<std::string>{"service \"/planning/x\" is listed in remote_services of "
                                     "component \"planner\" (" + dag + ":3:3) but that "
                                     "component does not call it (it calls \"/planning/rout\")"});
}

TEST_F(LauncherRunTest, AnUnreadOutputTheComponentDoesNotWriteIsAWarningOneWithAReaderIsNot) {
  Launcher launcher(context_);
  const std::string dag = WriteFile("stale.dag",
      "module_config {\n"
      "  timer_components { class_name: \"ImuWriter\" config { name: \"imu\" interval: 10\n"
      "                     unread_outputs: \"/imu\" unread_outputs: \"/alarm\" } }\n"
      "  components { class_name: \"MsgSink\" config { name: \"sink\" readers { channel: \"/imu\" } } }\n"
      "}\n");
  ASSERT_TRUE(launcher.Load({dag}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  // "/imu" has a reader here: declared unread, still fine (the same dag may
  // run beside a reader or without one). "/alarm" is not written at all.
  EXPECT_EQ(launcher.ChannelWarnings(),
            std::vector<std::string>{
                "channel \"/alarm\" is listed in unread_outputs of component \"imu\" (" +
                dag + ":2:3) but that component does not write it (it writes \"/imu\")"});
}

TEST_F(LauncherRunTest, ChannelBusTopologyListsTheLiveWritersAndReadersOfEachChannel) {
  Node a("a", &sched_, &bus_);
  Node b("b", &sched_, &bus_);
  auto w1 = a.TryCreateWriter<Msg>("/t");
  auto w2 = a.TryCreateWriter<Msg>("/t");  // a node is listed once
  auto r = b.TryCreateReader<Msg>("/t", [](const std::shared_ptr<const Msg>&) {});
  auto r2 = a.TryCreateReader<Msg>("/u", [](const std::shared_ptr<const Msg>&) {});
  ASSERT_TRUE(w1.ok() && w2.ok() && r.ok() && r2.ok());
  auto topology = bus_.Topology();
  ASSERT_EQ(topology.size(), 2u);
  EXPECT_EQ(topology[0].channel, "/t");
  EXPECT_EQ(topology[0].type_name, transport_internal::TypeName(typeid(Msg)));
  EXPECT_EQ(topology[0].writers, std::vector<std::string>{"a"});
  EXPECT_EQ(topology[0].readers, std::vector<std::string>{"b"});
  EXPECT_EQ(topology[1].channel, "/u");
  EXPECT_TRUE(topology[1].writers.empty());
  EXPECT_EQ(topology[1].readers, std::vector<std::string>{"a"});
  // A dropped writer, a shut-down reader, a shut-down node: gone.
  w1->reset();
  EXPECT_EQ(bus_.Topology()[0].writers, std::vector<std::string>{"a"});  // w2 remains
  (*r)->Shutdown();
  EXPECT_TRUE(bus_.Topology()[0].readers.empty());
  a.Shutdown();
  topology = bus_.Topology();
  EXPECT_TRUE(topology[0].writers.empty());
  EXPECT_TRUE(topology[1].readers.empty());
}

TEST_F(LauncherRunTest, AFlagFileIsCheckedLineByLineAndABadLineIsALocatedError) {
  FLAGS_launcher_test_rate = 1;
  auto start_with = [&](const std::string& name, const std::string& flags) {
    const std::string flag_file = WriteFile(name + ".flags", flags);
    Launcher launcher(context_);
    absl::Status s = launcher.Load({WriteFile(name + ".dag",
        "module_config { timer_components { class_name: \"CountingTimer\" "
        "config { name: \"" + name + "\" interval: 10 flag_file_path: \"" + flag_file + "\" } } }\n")});
    if (s.ok()) s = launcher.Start();
    return s;
  };
  // Comments, blank lines and --name=value lines of known flags.
  ASSERT_TRUE(start_with("good", "# tuning\n\n  --launcher_test_rate=7\n").ok());
  EXPECT_EQ(FLAGS_launcher_test_rate, 7);
  const std::string dir = getenv("TEST_TMPDIR");
  struct Case {
    std::string name, flags, message;
  };
  const std::vector<Case> cases = {
      {"garbage", "--launcher_test_rate=9\nhello world\n",
       dir + "/garbage.flags:2: \"hello world\": not a flag (expected --name=value)"},
      {"unknown", "# x\n--launcher_test_rte=9\n",
       dir + "/unknown.flags:2: \"--launcher_test_rte=9\": unknown flag --launcher_test_rte"},
      {"value", "--launcher_test_rate=fast\n",
       dir + "/value.flags:1: \"--launcher_test_rate=fast\": value \"fast\" is not a valid int32 "
       "(flag --launcher_test_rate)"},
      {"novalue", "--launcher_test_rate\n",
       dir + "/novalue.flags:1: \"--launcher_test_rate\": flag --launcher_test_rate needs a value"},
  };
  for (const Case& c : cases) {
    const absl::Status s = start_with(c.name, c.flags);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s;
    EXPECT_NE(s.message().find(dir + "/" + c.name + ".dag:1:"), std::string::npos) << s;
    EXPECT_NE(s.message().find("component \"" + c.name + "\": flag_file_path"), std::string::npos) << s;
  }
  EXPECT_EQ(FLAGS_launcher_test_rate, 7);  // nothing set from a bad file
}

TEST(LauncherTest, AModuleLibraryThatCannotLoadIsAWarningWhenItsClassesAreLinkedIn) {
  const std::string not_elf = WriteFile("libnotelf.so", "not a library\n");
  const std::string dir = getenv("TEST_TMPDIR");
  test::LogCapture warnings;
  const std::string missing = WriteFile("missing_lib.dag",
      "module_config {\n  module_library: \"/nonexistent/libmissing.so\"\n"
      "  timer_components { class_name: \"CountingTimer\" config { name: \"m\" interval: 10 } }\n}\n");
  const std::string garbage = WriteFile("garbage_lib.dag",
      "module_config {\n  module_library: \"" + not_elf + "\"\n"
      "  timer_components { class_name: \"CountingTimer\" config { name: \"g\" interval: 10 } }\n}\n");
  Launcher launcher;
  EXPECT_TRUE(launcher.Load({missing, garbage}).ok());  // not fatal
  EXPECT_EQ(warnings.Containing(dir + "/missing_lib.dag:1:1: module_library \"/nonexistent/libmissing.so\" "
                                "could not be loaded: cannot open shared object file: No such file or directory").size(),
            1u) << testing::PrintToString(warnings.lines());
  EXPECT_EQ(warnings.Containing(dir + "/garbage_lib.dag:1:1: module_library \"" + not_elf +
                                "\" could not be loaded: invalid ELF header").size(),
            1u) << testing::PrintToString(warnings.lines());
}

TEST(LauncherStatusTest, StatusLineAndSummaryShowRatesAndCounters) {
  ComponentStats t;
  t.name = "imu";
  t.class_name = "ImuPoller";
  t.timer = true;
  t.procs = 1000;
  t.configured_hz = 100;
  t.achieved_hz = 99.96;
  t.lateness_p99 = absl::Microseconds(120);
  ComponentStats m;
  m.name = "fusion";
  m.class_name = "Fusion";
  m.procs = 990;
  m.dropped = 10;
  EXPECT_EQ(Launcher::StatusLine({t, m}),
            "imu 100.0/100 Hz p99 0.12 ms ovr 0 | fusion 990 msgs drop 10");
  const std::string table = Launcher::SummaryTable({t, m});
  EXPECT_NE(table.find("imu"), std::string::npos);
  EXPECT_NE(table.find("99.96"), std::string::npos);
}

TEST(LauncherStatusTest, FailuresAreShownAndColumnsThatDoNotApplyAreDashes) {
  ComponentStats t;
  t.name = "imu";
  t.class_name = "ImuPoller";
  t.timer = true;
  t.procs = 1000;
  t.proc_failures = 4;
  t.exceptions = 1;
  t.configured_hz = 100;
  t.achieved_hz = 99.96;
  t.lateness_p99 = absl::Microseconds(120);
  t.overruns = 2;
  t.missed_periods = 3;
  ComponentStats m;
  m.name = "fusion";
  m.class_name = "Fusion";
  m.procs = 990;
  m.proc_failures = 330;
  m.exceptions = 330;
  m.dropped = 10;
  ComponentStats loop;  // a Component<>
  loop.name = "loop";
  loop.class_name = "ControlLoop";
  loop.has_proc = false;
  EXPECT_EQ(Launcher::StatusLine({t, m, loop}),
            "imu 100.0/100 Hz p99 0.12 ms ovr 2 fail 4 (1 threw) | "
            "fusion 990 msgs drop 10 fail 330 (330 threw) | loop (no Proc)");
  EXPECT_EQ(Launcher::SummaryTable({t, m, loop}),
            "component            class                           procs     failed   rate Hz "
            "config Hz    p99 ms overruns  dropped    early    threw   missed\n"
            "imu                  ImuPoller                        1000          4     99.96 "
            "   100.00     0.120        2        -        0        1        3\n"
            "fusion               Fusion                            990        330         - "
            "        -         -        -       10        -      330        -\n"
            "loop                 ControlLoop                         -          -         - "
            "        -         -        -        -        -        -        -\n");
}

// Find<T>: a launched component by name, as its class or a base; errors
// name what runs, or the class it is.
TEST_F(LauncherRunTest, FindGivesARunningComponentAsItsClassOrSaysWhy) {
  Launcher launcher(context_);
  ASSERT_TRUE(launcher.Load({WriteFile("find.dag",
      "module_config {\n"
      " timer_components { class_name: \"CountingTimer\" config { name: \"c\" interval: 20 } }\n"
      " components { class_name: \"MsgSink\" config { name: \"sink\" readers { channel: \"/m\" } } }\n"
      "}\n")}).ok());
  const absl::Status before = launcher.Find<MsgSink>("sink").status();
  EXPECT_EQ(before.code(), absl::StatusCode::kNotFound) << before;
  EXPECT_EQ(before.message(),
            "launcher: Find(\"sink\"): no such running component (running: none)");
  ASSERT_TRUE(launcher.Start().ok());

  absl::StatusOr<MsgSink*> sink = launcher.Find<MsgSink>("sink");
  ASSERT_TRUE(sink.ok()) << sink.status();
  EXPECT_EQ((*sink)->name(), "sink");
  absl::StatusOr<TimerComponent*> timer = launcher.Find<TimerComponent>("c");  // a base
  ASSERT_TRUE(timer.ok()) << timer.status();
  EXPECT_EQ((*timer)->interval(), absl::Milliseconds(20));

  const absl::Status missing = launcher.Find<MsgSink>("snik").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_EQ(missing.message(),
            "launcher: Find(\"snik\"): no such running component (running: c, sink)");
  const absl::Status wrong = launcher.Find<CountingTimer>("sink").status();
  EXPECT_EQ(wrong.code(), absl::StatusCode::kInvalidArgument) << wrong;
  EXPECT_EQ(wrong.message(),
            "launcher: Find<cyber::(anonymous namespace)::CountingTimer>(\"sink\"): "
            "component \"sink\" is of class MsgSink (cyber::(anonymous namespace)::MsgSink), "
            "not a cyber::(anonymous namespace)::CountingTimer");

  // Stopped on its own, it is still there (valid) until Stop() destroys it.
  ASSERT_TRUE(launcher.StopComponent("sink").ok());
  EXPECT_TRUE(launcher.Find<MsgSink>("sink").ok());
  launcher.Stop();
  EXPECT_EQ(launcher.Find<MsgSink>("sink").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace cyber
