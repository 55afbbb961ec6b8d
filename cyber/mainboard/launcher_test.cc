// Launcher: every bad graph is refused by Load(), before anything starts,
// with a message naming file, line and field; components start and stop in
// order. Test components are registered here.

#include "cyber/mainboard/launcher.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/common/test_waits.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/scheduler.h"
#include "timer/tick_driver.h"

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
  EXPECT_NE(s.message().find("CountingTimer"), std::string::npos) << s;
}

TEST(LauncherTest, IntervalZeroAndAboveTheMaximumAreRefused) {
  ExpectRefused(LoadText("zero.dag",
                         "module_config {\n timer_components {\n  class_name: \"CountingTimer\"\n"
                         "  config { name: \"t\" interval: 0 }\n }\n}\n"),
                "zero.dag:", "interval 0");
  ExpectRefused(LoadText("huge.dag",
                         "module_config {\n timer_components {\n  class_name: \"CountingTimer\"\n"
                         "  config { name: \"t\" interval: 90000000 }\n }\n}\n"),
                "huge.dag:", "interval 90000000");
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
      : sched_([] {
          scheduler::Scheduler::Options o;
          o.config = scheduler::DefaultSchedulerConfig(2);
          return o;
        }()),
        driver_(&clock_, &sched_) {
    sched_.SetTimerDriver(&driver_);
    context_.timer_driver = &driver_;
    context_.scheduler = &sched_;
    context_.bus = &bus_;
  }
  ~LauncherRunTest() override { sched_.Shutdown(); }

  SimulatedClock clock_{Instant() + absl::Hours(1)};
  scheduler::Scheduler sched_;
  timer::TickDriver driver_;
  ChannelBus bus_;
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
  const ComponentStats& c = stats[1];
  EXPECT_EQ(c.name, "c");
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

}  // namespace
}  // namespace cyber
