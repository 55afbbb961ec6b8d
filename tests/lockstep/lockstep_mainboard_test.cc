// The sensor_polling example split over two mainboards on lockstep
// simulated time (--clock=simulated --lockstep), with this test as the
// coordinator: both processes reach the end, and two runs do exactly the
// same (equal trace digests in each process, equal fusion counts). A
// process killed during a run ends it with its name, and the other
// process exits non-zero.

#include <signal.h>
#include <sys/wait.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cyber/lockstep/coordinator_driver.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/transport/dds/shm_cleanup.h"
#include "cyber/transport/dds/testing/dds_test_process.h"
#include "cyber/transport/dds/testing/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace lockstep {
namespace {

using dds_test::kPatience;
using dds_test::RunfilePath;
using dds_test::Subprocess;
using ::testing::HasSubstr;

struct ProcessResult {
  std::optional<int> wait_status;
  std::string digest;
  std::vector<std::string> lines;
};

struct RunResult {
  RunOutcome outcome;
  std::map<std::string, ProcessResult> processes;
};

std::unique_ptr<Subprocess> Mainboard(const std::string& name, const std::string& dag) {
  return std::make_unique<Subprocess>(std::vector<std::string>{
      RunfilePath("examples/sensor_polling/mainboard"), "--process_name=" + name, "--clock=simulated",
      "--lockstep", "-d", RunfilePath("examples/sensor_polling/" + dag)});
}

// Reads a finished process's output to its end.
ProcessResult Finish(Subprocess* p) {
  ProcessResult r;
  r.wait_status = p->Wait(kPatience);
  if (!r.wait_status.has_value()) {
    p->Kill(SIGKILL);
    p->Wait(kPatience);
  }
  while (std::optional<std::string> line = p->ReadLine(absl::Seconds(2))) {
    r.lines.push_back(*line);
    if (absl::StartsWith(*line, "trace digest: ")) r.digest = line->substr(14);
  }
  return r;
}

// One run of `simulated` on a fresh domain; `during` runs on another
// thread while the coordinator runs (e.g. a kill).
RunResult RunOnce(absl::Duration simulated,
                  const std::function<void(std::map<std::string, Subprocess*>&)>& during = nullptr) {
  const uint32_t domain = dds_test::RandomDomain();
  setenv("CYBER_DOMAIN_ID", std::to_string(domain).c_str(), 1);
  dds::DdsTransportOptions t;
  t.domain_id = domain;
  t.process_name = "lockstep_coordinator";
  t.lease = absl::Seconds(2);
  auto transport = std::make_shared<dds::DdsTransport>(t);
  CoordinatorDriverOptions o;
  o.coordinator.processes = {"pollers", "fusion"};
  o.coordinator.end_ns = absl::ToInt64Nanoseconds(simulated);
  o.coordinator.run_id = 1 + domain;
  o.coordinator.step_deadline = absl::Seconds(30);
  auto driver = CoordinatorDriver::Start(transport, o);
  EXPECT_TRUE(driver.ok()) << driver.status();
  std::map<std::string, std::unique_ptr<Subprocess>> owned;
  owned["pollers"] = Mainboard("pollers", "pollers.dag");
  owned["fusion"] = Mainboard("fusion", "fusion.dag");
  std::map<std::string, Subprocess*> processes;
  for (auto& [name, p] : owned) processes[name] = p.get();
  std::thread side;
  if (during) side = std::thread([&] { during(processes); });
  RunResult result;
  result.outcome = (*driver)->Run();
  if (side.joinable()) side.join();
  for (auto& [name, p] : owned) result.processes[name] = Finish(p.get());
  driver->reset();
  transport->Shutdown();
  // A process killed with -9 (the run's `during`) leaves its files in
  // /dev/shm: its ports go now; its segment, which this process still maps
  // (Fast-DDS lets go of a peer's segment at exit), goes when the next
  // participant on this host starts (DdsTransportOptions::clean_dead_segments).
  dds::RemoveDeadPeerSegments();
  return result;
}

int ExitCode(const ProcessResult& r) {
  return r.wait_status.has_value() && WIFEXITED(*r.wait_status) ? WEXITSTATUS(*r.wait_status) : -1;
}

std::string Output(const ProcessResult& r) {
  std::string out;
  for (const std::string& l : r.lines) absl::StrAppend(&out, l, "\n");
  return out;
}

// The fusion component's row of the summary ("fusion  Fusion  ...").
std::string FusionRow(const ProcessResult& r) {
  for (const std::string& l : r.lines) {
    if (absl::StartsWith(l, "fusion ")) return l;
  }
  return "";
}

TEST(LockstepMainboardTest, TwoProcessesReachTheEndAndTwoRunsAreTheSame) {
  const RunResult first = RunOnce(absl::Seconds(10));
  ASSERT_TRUE(first.outcome.ok) << first.outcome.why;
  for (const auto& [name, r] : first.processes) {
    EXPECT_EQ(ExitCode(r), 0) << name << ":\n" << Output(r);
    EXPECT_EQ(r.digest.size(), 16u) << name << ":\n" << Output(r);
  }
  std::printf("first run: %llu steps, %s of real time for 10s simulated; digests pollers %s fusion %s\n",
              static_cast<unsigned long long>(first.outcome.steps),
              absl::FormatDuration(first.outcome.wall).c_str(), first.processes.at("pollers").digest.c_str(),
              first.processes.at("fusion").digest.c_str());
  std::printf("%s", Output(first.processes.at("fusion")).c_str());
  // fusion heard the pollers: its Proc() ran (one per IMU message).
  EXPECT_THAT(FusionRow(first.processes.at("fusion")), ::testing::Not(""));

  const RunResult second = RunOnce(absl::Seconds(10));
  ASSERT_TRUE(second.outcome.ok) << second.outcome.why;
  EXPECT_EQ(second.outcome.steps, first.outcome.steps);
  for (const auto& [name, r] : second.processes) {
    EXPECT_EQ(ExitCode(r), 0) << name << ":\n" << Output(r);
    EXPECT_EQ(r.digest, first.processes.at(name).digest) << name;
  }
  EXPECT_EQ(FusionRow(second.processes.at("fusion")), FusionRow(first.processes.at("fusion")));
}

TEST(LockstepMainboardTest, AProcessKilledDuringARunEndsItWithItsName) {
  const RunResult r = RunOnce(absl::Hours(1), [](std::map<std::string, Subprocess*>& p) {
    // Once both run (fusion prints its joining line before it joins).
    p.at("fusion")->WaitForLine("mainboard: fusion joins", kPatience);
    absl::SleepFor(absl::Milliseconds(500));  // only lets the run go on a while; any moment will do
    p.at("fusion")->Kill(SIGKILL);
  });
  EXPECT_FALSE(r.outcome.ok);
  EXPECT_THAT(r.outcome.why, HasSubstr("\"fusion\""));
  EXPECT_EQ(ExitCode(r.processes.at("pollers")), 1) << Output(r.processes.at("pollers"));
  EXPECT_THAT(Output(r.processes.at("pollers")), HasSubstr("lockstep: "));
}

}  // namespace
}  // namespace lockstep
}  // namespace cyber
