// Every failed Proc() is counted where people look: a message component
// that throws on every third message and a timer component that throws or
// returns false, on simulated time (exact counts). The component catches the
// throw (the reader and the timer never see it), counts it as a failed call
// and an exception, and logs it with the running count: each of the first
// ten failures, then every 100th. The summary table and the status line
// show the failures; `-` where a column does not apply.

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/mainboard/launcher.h"
#include "cyber/simulation/simulated_graph.h"
#include "cyber/testing/log_capture.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

struct Reading {
  int seq = 0;
};

// Writes Reading{1}, {2}, ... on /readings every 10 ms.
class ReadingSource : public TimerComponent {
 public:
  bool Init() override {
    writer_ = node_->CreateWriter<Reading>("/readings");
    return writer_ != nullptr;
  }
  bool Proc() override {
    Reading r;
    r.seq = ++seq_;
    return writer_->Write(r);
  }

 private:
  std::shared_ptr<Writer<Reading>> writer_;
  int seq_ = 0;
};
CYBER_REGISTER_COMPONENT(ReadingSource)

// Throws on every third reading: a std::exception, or (every 30th) an int.
class ThrowingFilter : public Component<Reading> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Reading>& r) override {
    if (r->seq % 30 == 0) throw r->seq;
    if (r->seq % 3 == 0) throw std::runtime_error("bad reading " + std::to_string(r->seq));
    return true;
  }
};
CYBER_REGISTER_COMPONENT(ThrowingFilter)

// Call 4k throws, call 4k + 2 returns false.
class FlakyPoller : public TimerComponent {
 public:
  bool Init() override { return true; }
  bool Proc() override {
    ++calls_;
    if (calls_ % 4 == 0) throw std::out_of_range("poll " + std::to_string(calls_));
    return calls_ % 4 != 2;
  }

 private:
  int calls_ = 0;
};
CYBER_REGISTER_COMPONENT(FlakyPoller)

constexpr char kGraph[] = R"(
module_config {
  timer_components { class_name: "ReadingSource" config { name: "source" interval: 10 } }
  components {
    class_name: "ThrowingFilter"
    config { name: "filter" readers { channel: "/readings" } }
  }
  timer_components { class_name: "FlakyPoller" config { name: "poller" interval: 20 } }
}
)";

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The summary row of `component`, split at spaces.
std::vector<std::string> Row(const std::string& table, const std::string& component) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string w; words >> w;) row.push_back(w);
    if (!row.empty() && row[0] == component) return row;
  }
  return {};
}

TEST(ComponentFailuresTest, EveryFailureIsCountedLoggedWithItsCountAndShown) {
  test::LogCapture errors(google::GLOG_ERROR);
  SimulatedGraph graph;
  ASSERT_TRUE(graph.Launch({WriteFile("failures.dag", kGraph)}).ok());
  graph.RunFor(absl::Seconds(3));

  // 300 readings; those with seq 3, 6, ..., 300 threw (10 of them an int).
  const ComponentStats filter = *graph.StatsOf("filter");
  EXPECT_EQ(filter.procs, 300u);
  EXPECT_EQ(filter.proc_failures, 100u);
  EXPECT_EQ(filter.exceptions, 100u);
  EXPECT_EQ(filter.dropped, 0u);
  // 150 polls: 37 threw (4, 8, ..., 148), 38 returned false (2, 6, ..., 150).
  const ComponentStats poller = *graph.StatsOf("poller");
  EXPECT_EQ(poller.procs, 150u);
  EXPECT_EQ(poller.proc_failures, 75u);
  EXPECT_EQ(poller.exceptions, 37u);
  // The trace marks the same calls failed.
  int filter_failed = 0;
  for (const ProcEvent& e : graph.Trace()) filter_failed += e.component == "filter" && !e.ok;
  EXPECT_EQ(filter_failed, 100);

  // Logged: failures 1 to 10, then the 100th, each with the running counts.
  const std::vector<std::string> filter_log = errors.Containing("component \"filter\"");
  ASSERT_EQ(filter_log.size(), 11u) << testing::PrintToString(filter_log);
  EXPECT_EQ(filter_log[0],
            "component \"filter\" (ThrowingFilter): Proc() threw: bad reading 3 "
            "(failures so far: 1 of 3 calls, 1 threw)");
  EXPECT_EQ(filter_log[8],
            "component \"filter\" (ThrowingFilter): Proc() threw: bad reading 27 "
            "(failures so far: 9 of 27 calls, 9 threw)");
  EXPECT_EQ(filter_log[9],
            "component \"filter\" (ThrowingFilter): Proc() threw a non-std::exception "
            "(failures so far: 10 of 30 calls, 10 threw); from now on every 100th "
            "failure is logged");
  EXPECT_EQ(filter_log[10],
            "component \"filter\" (ThrowingFilter): Proc() threw a non-std::exception "
            "(failures so far: 100 of 300 calls, 100 threw)");
  const std::vector<std::string> poller_log = errors.Containing("component \"poller\"");
  ASSERT_EQ(poller_log.size(), 10u) << testing::PrintToString(poller_log);
  EXPECT_EQ(poller_log[0],
            "component \"poller\" (FlakyPoller): Proc() returned false "
            "(failures so far: 1 of 2 calls, 0 threw)");
  EXPECT_EQ(poller_log[1],
            "component \"poller\" (FlakyPoller): Proc() threw: poll 4 "
            "(failures so far: 2 of 4 calls, 1 threw)");
  // Caught by the components: the reader and the timer saw no exception.
  EXPECT_TRUE(errors.Containing("callback threw").empty())
      << testing::PrintToString(errors.Containing("callback threw"));

  // Where people look: the summary table (`-` where a column does not
  // apply) and the status line.
  const std::string table = Launcher::SummaryTable(graph.Stats());
  // component class procs failed rate config p99 overruns dropped early threw
  // missed
  EXPECT_EQ(Row(table, "filter"),
            (std::vector<std::string>{"filter", "ThrowingFilter", "300", "100", "-", "-", "-",
                                      "-", "0", "-", "100", "-"}))
      << table;
  EXPECT_EQ(Row(table, "poller"),
            (std::vector<std::string>{"poller", "FlakyPoller", "150", "75", "50.00", "50.00",
                                      "0.000", "0", "-", "0", "37", "0"}))
      << table;
  EXPECT_EQ(Row(table, "source"),
            (std::vector<std::string>{"source", "ReadingSource", "300", "0", "100.00",
                                      "100.00", "0.000", "0", "-", "0", "0", "0"}))
      << table;
  EXPECT_EQ(Launcher::StatusLine(graph.Stats()),
            "source 100.0/100 Hz p99 0.00 ms ovr 0 | filter 300 msgs drop 0 fail 100 "
            "(100 threw) | poller 50.0/50 Hz p99 0.00 ms ovr 0 fail 75 (37 threw)");
  graph.Stop();
}

}  // namespace
}  // namespace cyber
