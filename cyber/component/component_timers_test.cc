// Every timer a component makes itself in Init() is listed where people
// look: in its statistics (ComponentStats::timers) and as a row of its own
// under the component in the summary table (mainboard's summary), with its
// rate, fires, overruns and missed periods. On simulated time, so the
// counts are exact:
//  * a Component<> control loop with a Cyber RT style Timer(10, cb, false)
//    (100 Hz, an automatic name) and a named 20 Hz watchdog whose first
//    call overruns (it sleeps 120 ms): both listed, in the order made;
//  * a TimerComponent with a helper timer of its own: the helper is listed,
//    the component's own timer is the component's row, not listed again;
//  * a timer a Proc() makes (a per-message timeout) is not the component's
//    (only what Init() makes is listed);
//  * after Stop(), the final statistics list them too.

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/mainboard/launcher.h"
#include "cyber/simulation/simulated_graph.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "timer/timer.h"

namespace cyber {
namespace {

struct Ping {
  int seq = 0;
};

class ControlLoop : public Component<> {
 public:
  bool Init() override {
    step_ = std::make_unique<Timer>(10, [] {}, false);  // Cyber RT's surface
    step_->Start();
    TimerOptions o;
    o.name = "loop_watchdog";
    o.period = absl::Milliseconds(50);
    o.callback = [this] {
      if (watchdog_calls_++ == 0) scheduler::CRoutine::SleepFor(absl::Milliseconds(120));
    };
    watchdog_ = std::make_unique<Timer>(std::move(o));
    return step_->IsRunning() && watchdog_->Schedule().ok();
  }
  void Clear() override {
    step_->Stop();
    watchdog_->Stop();
  }

 private:
  std::unique_ptr<Timer> step_;
  std::unique_ptr<Timer> watchdog_;
  int watchdog_calls_ = 0;
};
CYBER_REGISTER_COMPONENT(ControlLoop)

class PollerWithHelper : public TimerComponent {
 public:
  bool Init() override {
    TimerOptions o;
    o.name = "poller_helper";
    o.period = absl::Milliseconds(5);
    o.callback = [] {};
    helper_ = std::make_unique<Timer>(std::move(o));
    return helper_->Schedule().ok();
  }
  bool Proc() override { return true; }
  void Clear() override { helper_->Stop(); }

 private:
  std::unique_ptr<Timer> helper_;
};
CYBER_REGISTER_COMPONENT(PollerWithHelper)

// Arms a timeout per message, in Proc(): not a timer of the component's.
class Responder : public Component<Ping> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Ping>&) override {
    TimerOptions o;
    o.name = "reply_timeout";
    o.period = absl::Milliseconds(100);
    o.oneshot = true;
    o.callback = [] {};
    timeout_ = std::make_unique<Timer>(std::move(o));
    return timeout_->Schedule().ok();
  }
  void Clear() override {
    if (timeout_) timeout_->Stop();
  }

 private:
  std::unique_ptr<Timer> timeout_;
};
CYBER_REGISTER_COMPONENT(Responder)

constexpr char kGraph[] = R"(
module_config {
  components { class_name: "ControlLoop" config { name: "loop" } }
  timer_components { class_name: "PollerWithHelper" config { name: "poller" interval: 20 } }
  components { class_name: "Responder" config { name: "responder" readers { channel: "/ping" } } }
}
)";

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The words of the table's row whose first word is `first`; empty if none.
std::vector<std::string> Row(const std::string& table, const std::string& first) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string w; words >> w;) row.push_back(w);
    if (!row.empty() && row[0] == first) return row;
  }
  return {};
}

// The first words of the table's rows, in order.
std::vector<std::string> FirstWords(const std::string& table) {
  std::vector<std::string> out;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string w;
    if (words >> w) out.push_back(w);
  }
  return out;
}

TEST(ComponentTimersTest, TheSummaryListsEveryTimerAComponentMadeInInit) {
  SimulatedGraph graph;
  ASSERT_TRUE(graph.Launch({WriteFile("timers.dag", kGraph)}).ok());
  ASSERT_TRUE(graph.Write("/ping", Ping{1}).ok());
  graph.RunFor(absl::Seconds(1));

  const std::string table = Launcher::SummaryTable(graph.Stats());
  const std::vector<std::string> rows = FirstWords(table);
  // Under each component, its timers in the order made; the step timer
  // has an automatic name, timer#<n>.
  ASSERT_EQ(rows.size(), 7u) << table;
  EXPECT_EQ(rows[1], "loop") << table;
  EXPECT_TRUE(absl::StartsWith(rows[2], "loop/timer#")) << table;
  EXPECT_EQ(rows[3], "loop/loop_watchdog") << table;
  EXPECT_EQ(rows[4], "poller") << table;
  EXPECT_EQ(rows[5], "poller/poller_helper") << table;
  EXPECT_EQ(rows[6], "responder") << table;

  // name class fires failed(threw) rate config-Hz p99 overruns dropped early
  // threw missed
  EXPECT_EQ(Row(table, rows[2]),
            (std::vector<std::string>{rows[2], "Timer", "100", "0", "-", "100.00", "-", "0",
                                      "-", "0", "0", "0"}))
      << table;
  EXPECT_EQ(Row(table, "poller/poller_helper"),
            (std::vector<std::string>{"poller/poller_helper", "Timer", "200", "0", "-",
                                      "200.00", "-", "0", "-", "0", "0", "0"}))
      << table;
  const std::vector<std::string> watchdog = Row(table, "loop/loop_watchdog");
  ASSERT_EQ(watchdog.size(), 12u) << table;
  EXPECT_EQ(watchdog[1], "Timer");
  EXPECT_EQ(watchdog[5], "20.00");
  EXPECT_EQ(watchdog[7], "1") << table;   // the first call overran
  EXPECT_NE(watchdog[11], "0") << table;  // and periods were missed

  // The same in the statistics.
  const std::optional<ComponentStats> loop = graph.StatsOf("loop");
  ASSERT_TRUE(loop.has_value());
  ASSERT_EQ(loop->timers.size(), 2u);
  EXPECT_EQ(loop->timers[0].period, absl::Milliseconds(10));
  EXPECT_EQ(loop->timers[0].statistics.fires, 100u);
  EXPECT_EQ(loop->timers[1].name, "loop_watchdog");
  EXPECT_EQ(loop->timers[1].period, absl::Milliseconds(50));
  EXPECT_FALSE(loop->timers[1].oneshot);
  EXPECT_EQ(loop->timers[1].statistics.overruns, 1u);
  EXPECT_EQ(std::to_string(loop->timers[1].statistics.missed_periods), watchdog[11]);
  EXPECT_TRUE(graph.StatsOf("responder")->timers.empty());

  // After the stop, the final statistics list them, with every call.
  graph.Stop();
  std::vector<ComponentStats> final_stats = graph.Stats();
  ASSERT_EQ(final_stats.size(), 3u);
  ASSERT_EQ(final_stats[0].timers.size(), 2u);
  EXPECT_EQ(final_stats[0].timers[0].statistics.fires, 100u);
  ASSERT_EQ(final_stats[1].timers.size(), 1u);
  EXPECT_EQ(final_stats[1].timers[0].name, "poller_helper");
  EXPECT_TRUE(final_stats[2].timers.empty());
}

}  // namespace
}  // namespace cyber
