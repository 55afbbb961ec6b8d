// Readiness over a real DDS domain: the supervisor with GraphReadiness
// starts the example's fusion mainboard only once /sensor/imu has a writer
// (the pollers mainboard, started by the test while fusion waits), and
// only once the pollers process has announced its components
// (start_after). A random domain of the test's own (RandomDomain); every
// process is stopped with SIGINT, so nothing is left in /dev/shm.
//
// No durations are asserted; waits are generous bounds on conditions.

#include "cyber/launch/graph_readiness.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/common/mutex.h"
#include "cyber/launch/launch_command.h"
#include "cyber/launch/supervisor.h"
#include "cyber/transport/dds/testing/dds_test_process.h"
#include "cyber/transport/dds/testing/subprocess.h"
#include "gtest/gtest.h"

namespace cyber {
namespace launch {
namespace {

using dds_test::Eventually;
using dds_test::kPatience;
using dds_test::RunfilePath;
using dds_test::Subprocess;

// GraphReadiness, counting its answers.
class CountingReadiness : public Readiness {
 public:
  explicit CountingReadiness(std::unique_ptr<GraphReadiness> inner) : inner_(std::move(inner)) {}
  bool ProcessUp(const std::string& name, pid_t pid) override {
    const bool up = inner_->ProcessUp(name, pid);
    (up ? process_yes_ : process_no_)++;
    return up;
  }
  bool ChannelHasWriter(const std::string& channel) override {
    const bool has = inner_->ChannelHasWriter(channel);
    (has ? channel_yes_ : channel_no_)++;
    return has;
  }
  std::string Where() const override { return inner_->Where(); }

  std::atomic<int> process_yes_{0}, process_no_{0}, channel_yes_{0}, channel_no_{0};

 private:
  std::unique_ptr<GraphReadiness> inner_;
};

class GraphReadinessTest : public testing::Test {
 protected:
  void SetUp() override {
    setenv("CYBER_DOMAIN_ID", std::to_string(dds_test::RandomDomain()).c_str(), 1);
    dir_ = absl::StrCat(getenv("TEST_TMPDIR"), "/",
                        testing::UnitTest::GetInstance()->current_test_info()->name());
    mkdir(dir_.c_str(), 0755);
    absl::StatusOr<graph::DomainGraphOptions> options =
        graph::DomainGraphOptionsFromEnvironment("graph_readiness_test");
    ASSERT_TRUE(options.ok()) << options.status();
    absl::StatusOr<std::unique_ptr<graph::DomainGraph>> graph =
        graph::DomainGraph::Join(*std::move(options));
    ASSERT_TRUE(graph.ok()) << graph.status();
    graph_ = graph->get();
    readiness_ = std::make_unique<CountingReadiness>(
        std::make_unique<GraphReadiness>(*std::move(graph)));
  }

  void TearDown() override {
    if (runner_.joinable()) {
      supervisor_->RequestStop();
      runner_.join();
    }
    for (auto& p : outside_) {
      p->Kill(SIGINT);
      if (!p->Wait(kPatience).has_value()) p->Kill(SIGKILL);
    }
    readiness_.reset();
  }

  static ProcessPlan Mainboard(const std::string& name, const std::string& dag) {
    ProcessPlan p;
    p.name = name;
    p.modules = {name};
    p.dag_files = {RunfilePath("examples/sensor_polling/" + dag)};
    p.ready_timeout = absl::Minutes(5);  // bounds a failing test only
    return p;
  }

  void Launch(std::vector<ProcessPlan> processes) {
    LaunchPlan plan;
    plan.file = "test.launch";
    plan.processes = std::move(processes);
    Supervisor::Options options;
    options.log_dir = dir_;
    options.readiness = readiness_.get();
    options.command = [this](const ProcessPlan& p) {
      if (on_command_) on_command_(p);
      std::vector<std::string> argv =
          MainboardCommand(RunfilePath("examples/sensor_polling/mainboard"), p);
      argv.push_back("--status=never");
      // A stuck shutdown still fails the test (exit 3, its report in the
      // log printed below), but a slow one under asan on a loaded 2-core
      // machine is not mistaken for stuck: one exceeded the default 5 s.
      argv.push_back("--shutdown_deadline=30s");
      return argv;
    };
    supervisor_ = std::make_unique<Supervisor>(std::move(plan), std::move(options));
    runner_ = std::thread([this] { outcome_ = supervisor_->Run(); });
  }

  // True once `name` announced its components: its SIGINT handler is in
  // place (a SIGINT before that ends a mainboard without its summary).
  bool Up(const std::string& name) {
    for (const graph::ProcessView& v : graph_->Processes()) {
      if (v.graph.process() == name && v.graph.nodes_size() > 0) return true;
    }
    return false;
  }

  // A process's log (what it printed, its stuck report), for failures.
  static std::string LogOf(const ProcessRecord& r) {
    std::ifstream in(r.log_path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  ProcessRecord Record(const std::string& name) {
    for (const ProcessRecord& r : supervisor_->Snapshot()) {
      if (r.name == name) return r;
    }
    return {};
  }

  std::string dir_;
  graph::DomainGraph* graph_ = nullptr;  // owned by readiness_
  std::unique_ptr<CountingReadiness> readiness_;
  std::function<void(const ProcessPlan&)> on_command_;
  std::unique_ptr<Supervisor> supervisor_;
  std::thread runner_;
  LaunchOutcome outcome_;
  std::vector<std::unique_ptr<Subprocess>> outside_;
};

TEST_F(GraphReadinessTest, WaitForWriterStartsOnlyOnceTheChannelHasAWriter) {
  ProcessPlan fusion = Mainboard("fusion", "fusion.dag");
  fusion.wait_for_writer = {"/sensor/imu"};
  std::atomic<int> writer_answers_when_started{-1};
  on_command_ = [&](const ProcessPlan& p) {
    if (p.name == "fusion") writer_answers_when_started = readiness_->channel_yes_.load();
  };
  Launch({fusion});
  // Asked many times, no writer yet: fusion waits.
  ASSERT_TRUE(Eventually([&] { return readiness_->channel_no_.load() >= 10; }));
  EXPECT_EQ(Record("fusion").state, ProcessRecord::State::kWaiting);
  EXPECT_EQ(Record("fusion").starts, 0);

  // The writer comes (a pollers mainboard outside the launch): fusion starts.
  outside_.push_back(std::make_unique<Subprocess>(std::vector<std::string>{
      RunfilePath("examples/sensor_polling/mainboard"), "--process_name=pollers",
      "--status=never", "-d", RunfilePath("examples/sensor_polling/pollers.dag")}));
  ASSERT_TRUE(Eventually([&] { return Record("fusion").state == ProcessRecord::State::kRunning; }));
  // It was started on a "yes", the first one.
  EXPECT_EQ(writer_answers_when_started.load(), 1);
  ASSERT_TRUE(Eventually([&] { return Up("fusion"); }));

  supervisor_->RequestStop();
  runner_.join();
  EXPECT_EQ(outcome_.exit_code, 0) << outcome_.reason;
  ASSERT_TRUE(outcome_.processes[0].last_wait_status.has_value());
  EXPECT_EQ(*outcome_.processes[0].last_wait_status, 0)  // exit 0 after SIGINT
      << LogOf(outcome_.processes[0]);
}

TEST_F(GraphReadinessTest, StartAfterWaitsForTheProcessesAnnouncedComponents) {
  ProcessPlan fusion = Mainboard("fusion", "fusion.dag");
  fusion.start_after = {"pollers"};
  // What the domain showed of pollers when fusion's command was built.
  Mutex mu;
  int pollers_nodes = -1;
  int64_t pollers_pid_seen = 0;
  on_command_ = [&](const ProcessPlan& p) {
    if (p.name != "fusion") return;
    for (const graph::ProcessView& v : graph_->Processes()) {
      if (v.graph.process() != "pollers") continue;
      MutexLock lock(&mu);
      pollers_nodes = v.graph.nodes_size();
      pollers_pid_seen = v.graph.pid();
    }
  };
  Launch({Mainboard("pollers", "pollers.dag"), fusion});
  ASSERT_TRUE(Eventually([&] {
    return Record("pollers").state == ProcessRecord::State::kRunning &&
           Record("fusion").state == ProcessRecord::State::kRunning;
  }));
  {
    MutexLock lock(&mu);
    EXPECT_GE(pollers_nodes, 2);  // imu and lidar
    EXPECT_EQ(pollers_pid_seen, Record("pollers").pid);
  }
  EXPECT_GE(readiness_->process_yes_.load(), 1);
  ASSERT_TRUE(Eventually([&] { return Up("fusion"); }));
  supervisor_->RequestStop();
  runner_.join();
  EXPECT_EQ(outcome_.exit_code, 0) << outcome_.reason;
  for (const ProcessRecord& r : outcome_.processes) {
    ASSERT_TRUE(r.last_wait_status.has_value()) << r.name;
    EXPECT_EQ(*r.last_wait_status, 0) << r.name << "'s log:\n" << LogOf(r);
    EXPECT_EQ(r.stop_signals, "INT") << r.name;
  }
}

}  // namespace
}  // namespace launch
}  // namespace cyber
