// A component's scheduler conf entry (`tasks { name: "<component name>"
// prio: N }` inside a group) routes its work: its reader deliveries, its
// timer and the tasks it starts run at that priority, in that group (issue
// 21, item 4 (a)). Before, every reader delivery ran at priority 0 in the
// first group, in subscription order.
//
// On a SimulatedGraph: one thread runs the queued routines in the
// scheduler's priority order, so "fusion (prio 10) runs before logger (prio
// 1) for the same message" is an exact assertion, the same every run.

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/simulation/simulated_graph.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/default_scheduler.h"

namespace cyber {
namespace {

struct Note {
  int n = 0;
};

// Where each component's work ran: the group and priority of the routine
// (one graph at a time).
struct Seen {
  int group = -1;
  int priority = -1;
};
std::map<std::string, Seen>* g_seen = nullptr;
std::map<std::string, Seen>* g_task_seen = nullptr;

void Record(std::map<std::string, Seen>* seen, const std::string& who) {
  const scheduler::CRoutine* r = scheduler::CRoutine::Current();
  ASSERT_NE(r, nullptr) << who << ": not in a routine";
  (*seen)[who] = Seen{r->group(), r->priority()};
}

class NoteSink : public Component<Note> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Note>&) override {
    Record(g_seen, name());
    // A task the component starts from its Proc() runs on its route too.
    Async([who = name()] { Record(g_task_seen, who); });
    return true;
  }
};
CYBER_REGISTER_COMPONENT(NoteSink)

class RoutedTicker : public TimerComponent {
 public:
  bool Init() override { return true; }
  bool Proc() override {
    Record(g_seen, name());
    return true;
  }
};
CYBER_REGISTER_COMPONENT(RoutedTicker)

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Group 0 "main": fusion at 10, logger at 1. Group 1 "io": recorder at 4,
// the timer component "io_tick" at 6.
constexpr char kConf[] = R"(
classic_conf {
  groups {
    name: "main"
    processor_num: 1
    tasks { name: "fusion" prio: 10 }
    tasks { name: "logger" prio: 1 }
  }
  groups {
    name: "io"
    processor_num: 1
    tasks { name: "recorder" prio: 4 }
    tasks { name: "io_tick" prio: 6 }
  }
}
)";

// The logger subscribes first: subscription order alone would run it first.
constexpr char kGraph[] = R"(
module_config {
  components { class_name: "NoteSink" config { name: "logger" readers { channel: "/route/in" } } }
  components { class_name: "NoteSink" config { name: "fusion" readers { channel: "/route/in" } } }
  components { class_name: "NoteSink" config { name: "recorder" readers { channel: "/route/in" } } }
  components { class_name: "NoteSink" config { name: "unlisted" readers { channel: "/route/in" } } }
  timer_components { class_name: "RoutedTicker" config { name: "io_tick" interval: 10 } }
}
)";

class ComponentRouteTest : public testing::Test {
 protected:
  void SetUp() override {
    g_seen = &seen_;
    g_task_seen = &task_seen_;
    auto conf = scheduler::ParseSchedulerConfig(kConf, "route.conf");
    ASSERT_TRUE(conf.ok()) << conf.status();
    options_.config = *std::move(conf);
  }
  void TearDown() override {
    g_seen = nullptr;
    g_task_seen = nullptr;
  }

  SimulatedGraph::Options options_;
  std::map<std::string, Seen> seen_;
  std::map<std::string, Seen> task_seen_;
};

TEST_F(ComponentRouteTest, ReaderDeliveriesRunAtTheComponentsConfPriority) {
  SimulatedGraph graph(options_);
  ASSERT_TRUE(graph.Launch({WriteFile("route.dag", kGraph)}).ok());
  ASSERT_TRUE(graph.Write("/route/in", Note{1}).ok());
  graph.RunFor(absl::Milliseconds(1));
  std::vector<std::string> order;
  for (const ProcEvent& e : graph.Trace()) {
    if (e.component == "fusion" || e.component == "logger") order.push_back(e.component);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"fusion", "logger"}));
  EXPECT_EQ(seen_["fusion"].priority, 10);
  EXPECT_EQ(seen_["logger"].priority, 1);
  EXPECT_EQ(seen_["unlisted"].priority, 0);
  graph.Stop();
}

TEST_F(ComponentRouteTest, ReadersTimersAndTasksRunInTheComponentsGroup) {
  SimulatedGraph graph(options_);
  ASSERT_TRUE(graph.Launch({WriteFile("route_groups.dag", kGraph)}).ok());
  ASSERT_TRUE(graph.Write("/route/in", Note{1}).ok());
  graph.RunFor(absl::Milliseconds(15));  // io_tick's first call at 10 ms
  ASSERT_EQ(seen_.count("recorder"), 1u);
  EXPECT_EQ(seen_["recorder"].group, 1);
  EXPECT_EQ(seen_["recorder"].priority, 4);
  EXPECT_EQ(seen_["fusion"].group, 0);
  EXPECT_EQ(seen_["unlisted"].group, 0);
  ASSERT_EQ(seen_.count("io_tick"), 1u);
  EXPECT_EQ(seen_["io_tick"].group, 1);
  EXPECT_EQ(seen_["io_tick"].priority, 6);
  // Async work started by a component's Proc() takes its route.
  ASSERT_EQ(task_seen_.count("recorder"), 1u);
  EXPECT_EQ(task_seen_["recorder"].group, 1);
  EXPECT_EQ(task_seen_["recorder"].priority, 4);
  EXPECT_EQ(task_seen_["fusion"].priority, 10);
  EXPECT_EQ(task_seen_["unlisted"].priority, 0);
  graph.Stop();
}

}  // namespace
}  // namespace cyber
