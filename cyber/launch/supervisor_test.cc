// The supervisor with real children (/bin/sh scripts): respawn after
// kill -9, the respawn limit, a required process, stop escalation and
// order, readiness order (with a fake Readiness), start failures.
//
// No durations are asserted except "never early" (a respawn comes no
// sooner than its delay, measured on the steady clock by the supervisor
// itself); every wait is a generous bound on a condition (Eventually).

#include "cyber/launch/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cyber/common/mutex.h"
#include "cyber/common/test_waits.h"
#include "cyber/launch/child_process.h"
#include "cyber/launch/launch_summary.h"
#include "gtest/gtest.h"

namespace cyber {
namespace launch {
namespace {

using State = ProcessRecord::State;

bool Alive(pid_t pid) { return pid > 0 && kill(pid, 0) == 0; }

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Runs until signalled: SIGINT or SIGTERM ends it at once (as they end a
// mainboard), with nothing to wait for first.
constexpr char kRunForever[] = "exec sleep 1000";
// The same in a shell that can trap signals (it handles one once its
// current 50 ms sleep ends).
constexpr char kShellLoop[] = "while :; do sleep 0.05; done";

class FakeReadiness : public Readiness {
 public:
  bool ProcessUp(const std::string& name, pid_t pid) override {
    MutexLock lock(&mu_);
    ++process_asks_;
    asked_pids_[name] = pid;
    return up_.count(name) > 0;
  }
  bool ChannelHasWriter(const std::string& channel) override {
    MutexLock lock(&mu_);
    ++channel_asks_;
    return writers_.count(channel) > 0;
  }
  std::string Where() const override { return "the fake domain"; }
  void Done() override { done_ = true; }
  std::atomic<bool> done_{false};

  void SetUp(const std::string& name) {
    MutexLock lock(&mu_);
    up_[name] = true;
  }
  void SetWriter(const std::string& channel) {
    MutexLock lock(&mu_);
    writers_[channel] = true;
  }
  bool HasWriter(const std::string& channel) {
    MutexLock lock(&mu_);
    return writers_.count(channel) > 0;
  }
  int channel_asks() {
    MutexLock lock(&mu_);
    return channel_asks_;
  }
  pid_t asked_pid(const std::string& name) {
    MutexLock lock(&mu_);
    return asked_pids_[name];
  }

 private:
  Mutex mu_;
  std::map<std::string, bool> up_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, bool> writers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, pid_t> asked_pids_ ABSL_GUARDED_BY(mu_);
  int process_asks_ ABSL_GUARDED_BY(mu_) = 0;
  int channel_asks_ ABSL_GUARDED_BY(mu_) = 0;
};

class SupervisorTest : public testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/",
                        testing::UnitTest::GetInstance()->current_test_info()->name());
    mkdir(dir_.c_str(), 0755);
  }
  void TearDown() override {
    if (runner_.joinable()) {
      supervisor_->RequestStop();
      runner_.join();
    }
  }

  ProcessPlan Process(const std::string& name, const std::string& script) {
    ProcessPlan p;
    p.name = name;
    p.modules = {name};
    p.where = absl::StrCat("test.launch:", name);
    scripts_[name] = script;
    return p;
  }

  // Starts Run() on a thread of its own (which forks the children and
  // outlives them).
  void Launch(std::vector<ProcessPlan> processes, Readiness* readiness = nullptr,
              absl::Duration sigint_timeout = absl::Seconds(30),
              absl::Duration sigterm_timeout = absl::Seconds(30)) {
    LaunchPlan plan;
    plan.file = "test.launch";
    plan.processes = std::move(processes);
    Supervisor::Options options;
    options.log_dir = dir_;
    options.readiness = readiness;
    options.sigint_timeout = sigint_timeout;
    options.sigterm_timeout = sigterm_timeout;
    options.stop_signals_wait_for_init = stop_signals_wait_for_init_;
    options.command = [this](const ProcessPlan& p) {
      if (on_command_) on_command_(p);
      const std::string& script = scripts_.at(p.name);
      // "argv: prog arg...": run without a shell (sh clears the signal mask).
      if (absl::StartsWith(script, "argv: ")) {
        return std::vector<std::string>(absl::StrSplit(script.substr(6), ' '));
      }
      return std::vector<std::string>{"/bin/sh", "-c", script};
    };
    options.report = [this](const std::string& line) {
      MutexLock lock(&mu_);
      reports_.push_back(line);
    };
    supervisor_ = std::make_unique<Supervisor>(std::move(plan), std::move(options));
    runner_ = std::thread([this] { outcome_ = supervisor_->Run(); });
  }

  LaunchOutcome Finish() {
    runner_.join();
    return outcome_;
  }

  ProcessRecord Record(const std::string& name) {
    for (const ProcessRecord& r : supervisor_->Snapshot()) {
      if (r.name == name) return r;
    }
    ADD_FAILURE() << "no process " << name;
    return {};
  }

  bool Running(const std::string& name) {
    const ProcessRecord r = Record(name);
    return r.state == State::kRunning && r.pid != 0;
  }

  std::vector<std::string> Reports() {
    MutexLock lock(&mu_);
    return reports_;
  }

  std::string dir_;
  std::map<std::string, std::string> scripts_;
  std::function<void(const ProcessPlan&)> on_command_;
  bool stop_signals_wait_for_init_ = false;
  std::unique_ptr<Supervisor> supervisor_;
  std::thread runner_;
  LaunchOutcome outcome_;
  Mutex mu_;
  std::vector<std::string> reports_ ABSL_GUARDED_BY(mu_);
};

TEST_F(SupervisorTest, Kill9IsRespawnedAfterItsDelayAndTheRestKeepsRunning) {
  ProcessPlan a = Process("a", kRunForever);
  a.exception_handler = ExceptionHandler::kRespawn;
  a.respawn_delay = absl::Milliseconds(300);
  a.respawn_limit = 3;
  Launch({a, Process("b", kRunForever)});
  ASSERT_TRUE(test::Eventually([&] { return Running("a") && Running("b"); }));
  const pid_t a_pid = Record("a").pid;
  const pid_t b_pid = Record("b").pid;

  ASSERT_EQ(kill(a_pid, SIGKILL), 0);
  ASSERT_TRUE(test::Eventually([&] {
    const ProcessRecord r = Record("a");
    return r.respawns == 1 && r.state == State::kRunning && r.pid != a_pid;
  }));
  const ProcessRecord a_now = Record("a");
  EXPECT_EQ(a_now.starts, 2);
  EXPECT_FALSE(Alive(a_pid) && a_now.pid == a_pid);
  // Never early: the new start came at least the delay after the exit.
  ASSERT_TRUE(a_now.last_exit.has_value() && a_now.last_start.has_value());
  EXPECT_GE(*a_now.last_start - *a_now.last_exit, absl::Milliseconds(300));
  std::printf("respawn lag after kill -9 (delay 300ms): %s\n",
              absl::FormatDuration(*a_now.last_start - *a_now.last_exit).c_str());
  // b was left alone.
  EXPECT_EQ(Record("b").pid, b_pid);
  EXPECT_EQ(Record("b").starts, 1);
  EXPECT_TRUE(Alive(b_pid));

  supervisor_->RequestStop();
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.reason, "stop requested");
  EXPECT_EQ(outcome.processes[0].respawns, 1);
  EXPECT_EQ(outcome.processes[0].last_wait_status.has_value(), true);
  EXPECT_FALSE(Alive(a_now.pid));
  EXPECT_FALSE(Alive(b_pid));
  // The summary says it.
  const std::string table = ProcessTable(outcome);
  EXPECT_TRUE(absl::StrContains(table, "1/3")) << table;
}

TEST_F(SupervisorTest, RequiredProcessAtItsRespawnLimitStopsAllWithFailure) {
  ProcessPlan a = Process("a", "exit 3");
  a.exception_handler = ExceptionHandler::kRespawn;
  a.respawn_delay = absl::ZeroDuration();
  a.respawn_limit = 2;
  a.required = true;
  Launch({Process("b", kRunForever), a});
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(outcome.reason,
                                "required process \"a\" exited (exit 3) after its respawn limit"))
      << outcome.reason;
  const ProcessRecord& ra = outcome.processes[1];
  EXPECT_EQ(ra.starts, 3);
  EXPECT_EQ(ra.respawns, 2);
  EXPECT_TRUE(ra.respawn_limit_reached);
  const ProcessRecord& rb = outcome.processes[0];
  EXPECT_EQ(rb.stop_signals, "INT");
  EXPECT_EQ(rb.state, State::kDown);
}

TEST_F(SupervisorTest, RequiredExitStopsTheOthers) {
  const std::string go = dir_ + "/go";
  ProcessPlan a = Process("a", absl::StrCat("while [ ! -e ", go, " ]; do sleep 0.02; done; exit 7"));
  a.required = true;
  Launch({a, Process("b", kRunForever), Process("c", kRunForever)});
  ASSERT_TRUE(test::Eventually([&] { return Running("a") && Running("b") && Running("c"); }));
  const pid_t b = Record("b").pid;
  const pid_t c = Record("c").pid;
  std::ofstream(go).put('x');
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.reason, "required process \"a\" exited (exit 7)");
  EXPECT_EQ(outcome.processes[1].stop_signals, "INT");
  EXPECT_EQ(outcome.processes[2].stop_signals, "INT");
  EXPECT_FALSE(Alive(b));
  EXPECT_FALSE(Alive(c));
}

TEST_F(SupervisorTest, CleanExitIsRespawnedOnlyWithRespawnOnAlways) {
  ProcessPlan once = Process("once", "exit 0");
  once.exception_handler = ExceptionHandler::kRespawn;
  once.respawn_delay = absl::ZeroDuration();
  ProcessPlan always = Process("always", "exit 0");
  always.exception_handler = ExceptionHandler::kRespawn;
  always.respawn_on = RespawnOn::kAlways;
  always.respawn_delay = absl::ZeroDuration();
  always.respawn_limit = 2;
  Launch({once, always});
  // Both end on their own: the launch ends when nothing runs or will.
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.reason, "every process has exited");
  EXPECT_EQ(outcome.processes[0].starts, 1);
  EXPECT_EQ(outcome.processes[0].respawns, 0);
  EXPECT_EQ(outcome.processes[1].starts, 3);
  EXPECT_EQ(outcome.processes[1].respawns, 2);
}

TEST_F(SupervisorTest, ExitHandlerStopsAllOnFailureOnly) {
  ProcessPlan a = Process("a", "kill -USR1 $$");
  a.exception_handler = ExceptionHandler::kExit;
  Launch({Process("b", kRunForever), a});
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(outcome.reason,
                                "process \"a\" failed (signal 10 (USR1)"))
      << outcome.reason;
  EXPECT_EQ(outcome.processes[0].stop_signals, "INT");
}

TEST_F(SupervisorTest, ExitHandlerLetsACleanExitGo) {
  ProcessPlan a = Process("a", "exit 0");
  a.exception_handler = ExceptionHandler::kExit;
  Launch({a, Process("b", kRunForever)});
  ASSERT_TRUE(test::Eventually([&] { return Record("a").state == State::kDown && Running("b"); }));
  EXPECT_EQ(Record("b").stop_signals, "");  // not stopped
  supervisor_->RequestStop();
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.reason, "stop requested");
  EXPECT_EQ(outcome.processes[0].stop_signals, "");
  EXPECT_EQ(outcome.processes[1].stop_signals, "INT");
}

TEST_F(SupervisorTest, StopSignalsInReverseStartOrderThenTermThenKill) {
  const std::string ready_b = dir_ + "/b.ready";
  const std::string ready_c = dir_ + "/c.ready";
  Launch({Process("a", kRunForever),
          // Ignores SIGINT: stopped by SIGTERM.
          Process("b", absl::StrCat("trap '' INT; : > ", ready_b, "; ", kShellLoop)),
          // Ignores SIGINT and SIGTERM: stopped by SIGKILL.
          Process("c", absl::StrCat("trap '' INT TERM; : > ", ready_c, "; ", kShellLoop))},
         // Generous: a must end on SIGINT and b on SIGTERM within them on a
         // loaded machine (each takes milliseconds).
         nullptr, absl::Seconds(3), absl::Seconds(3));
  ASSERT_TRUE(test::Eventually([&] {
    return Running("a") && Running("b") && Running("c") && Exists(ready_b) && Exists(ready_c);
  }));
  const pid_t pids[] = {Record("a").pid, Record("b").pid, Record("c").pid};
  supervisor_->RequestStop();
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.processes[0].stop_signals, "INT");
  EXPECT_EQ(outcome.processes[1].stop_signals, "INT, TERM");
  EXPECT_EQ(outcome.processes[2].stop_signals, "INT, TERM, KILL");
  EXPECT_EQ(DescribeWaitStatus(*outcome.processes[1].last_wait_status), "signal 15 (TERM)");
  EXPECT_EQ(DescribeWaitStatus(*outcome.processes[2].last_wait_status), "signal 9 (KILL)");
  for (pid_t pid : pids) EXPECT_FALSE(Alive(pid));
  // SIGINT went to c, then b, then a: the reverse of the start order.
  std::vector<std::string> order;
  for (const std::string& line : Reports()) {
    if (absl::StartsWith(line, "cyber_launch: SIGINT to ")) order.push_back(line.substr(24, 1));
  }
  EXPECT_EQ(absl::StrJoin(order, ","), "c,b,a");
}

TEST_F(SupervisorTest, WaitsForReadinessBeforeStarting) {
  FakeReadiness readiness;
  ProcessPlan b = Process("b", kRunForever);
  b.start_after = {"a"};
  b.wait_for_writer = {"/x"};
  std::atomic<bool> writer_when_b_started{false};
  std::atomic<bool> b_started{false};
  on_command_ = [&](const ProcessPlan& p) {
    if (p.name == "b") {
      writer_when_b_started = readiness.HasWriter("/x");
      b_started = true;
    }
  };
  Launch({Process("a", kRunForever), b}, &readiness);
  ASSERT_TRUE(test::Eventually([&] { return Running("a"); }));
  const pid_t a = Record("a").pid;
  // a is up (as announced) but /x has no writer: b is asked about and
  // keeps waiting.
  readiness.SetUp("a");
  const int asks = readiness.channel_asks();
  ASSERT_TRUE(test::Eventually([&] { return readiness.channel_asks() >= asks + 3; }));
  EXPECT_EQ(Record("b").state, State::kWaiting);
  EXPECT_FALSE(b_started.load());
  EXPECT_EQ(readiness.asked_pid("a"), a);
  EXPECT_FALSE(readiness.done_.load());
  readiness.SetWriter("/x");
  ASSERT_TRUE(test::Eventually([&] { return Running("b"); }));
  EXPECT_TRUE(writer_when_b_started.load());
  // Nothing waits any more: the readiness is let go.
  EXPECT_TRUE(test::Eventually([&] { return readiness.done_.load(); }));
  supervisor_->RequestStop();
  EXPECT_EQ(Finish().exit_code, 0);
}

TEST_F(SupervisorTest, NotReadyWithinTheTimeoutStopsTheLaunch) {
  FakeReadiness readiness;
  ProcessPlan b = Process("b", kRunForever);
  b.wait_for_writer = {"/never"};
  b.ready_timeout = absl::Milliseconds(200);
  Launch({Process("a", kRunForever), b}, &readiness);
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.reason,
            "process \"b\" was never started: not ready within ready_timeout 200ms: channel "
            "/never has no writer (looked in the fake domain)");
  EXPECT_EQ(outcome.processes[0].stop_signals, "INT");
  EXPECT_EQ(outcome.processes[1].starts, 0);
}

TEST_F(SupervisorTest, WaitingForAProcessThatIsDownForGoodStopsTheLaunch) {
  FakeReadiness readiness;
  ProcessPlan b = Process("b", kRunForever);
  b.start_after = {"a"};
  Launch({Process("a", "exit 2"), b, Process("c", kRunForever)}, &readiness);
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.reason,
            "process \"b\" was never started: waits for process \"a\", which is down and will "
            "not be respawned");
  EXPECT_EQ(outcome.processes[1].starts, 0);
  EXPECT_EQ(outcome.processes[2].stop_signals, "INT");
}

TEST_F(SupervisorTest, ReadinessWithoutAWayToLookIsAnError) {
  ProcessPlan b = Process("b", kRunForever);
  b.wait_for_writer = {"/x"};
  Launch({b});
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(outcome.reason, "waits for readiness")) << outcome.reason;
}

TEST_F(SupervisorTest, AProgramThatCannotRunStopsTheLaunch) {
  scripts_["x"] = "";
  LaunchPlan plan;
  plan.processes.push_back(Process("a", kRunForever));
  ProcessPlan x;
  x.name = "x";
  plan.processes.push_back(x);
  Supervisor::Options options;
  options.log_dir = dir_;
  options.report = [](const std::string&) {};
  options.command = [](const ProcessPlan& p) {
    if (p.name == "x") return std::vector<std::string>{"/nonexistent/mainboard"};
    return std::vector<std::string>{"/bin/sh", "-c", kRunForever};
  };
  Supervisor supervisor(plan, options);
  const LaunchOutcome outcome = supervisor.Run();
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.reason,
            "process \"x\" could not start: cannot run \"/nonexistent/mainboard\": No such file "
            "or directory");
  EXPECT_EQ(outcome.processes[0].stop_signals, "INT");
}

TEST_F(SupervisorTest, ChildrenInheritOnlyStdio) {
  // A descriptor of the launcher's without close-on-exec (as some of
  // Fast-DDS's are).
  const int leaky = open("/dev/null", O_RDONLY);
  ASSERT_GE(leaky, 3);
  ProcessPlan a = Process("a", "ls /proc/$$/fd");  // the shell's descriptors
  Launch({a});
  const LaunchOutcome outcome = Finish();
  close(leaky);
  EXPECT_EQ(outcome.exit_code, 0);
  std::ifstream in(dir_ + "/a.log");
  std::string line;
  std::vector<std::string> fds;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "cyber_launch:")) fds.push_back(line);
  }
  EXPECT_EQ(absl::StrJoin(fds, " "), "0 1 2");
}

// The signal mask a child starts with: none blocked, or SIGINT (2) and
// SIGTERM (15) for a mainboard, whose cyber::Init unblocks them.
std::string BlockedSignalsOf(const std::string& log) {
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "SigBlk:")) return std::string(absl::StripAsciiWhitespace(line.substr(7)));
  }
  return "no SigBlk line in " + log;
}

TEST_F(SupervisorTest, ChildrenStartWithNoSignalBlocked) {
  Launch({Process("a", "argv: /bin/grep SigBlk /proc/self/status")});
  EXPECT_EQ(Finish().exit_code, 0);
  EXPECT_EQ(BlockedSignalsOf(dir_ + "/a.log"), "0000000000000000");
}

TEST_F(SupervisorTest, StopSignalsWaitForInitWhenAsked) {
  stop_signals_wait_for_init_ = true;
  Launch({Process("a", "argv: /bin/grep SigBlk /proc/self/status")});
  EXPECT_EQ(Finish().exit_code, 0);
  EXPECT_EQ(BlockedSignalsOf(dir_ + "/a.log"), "0000000000004002");
}

TEST_F(SupervisorTest, EachStartIsLoggedWithTheProcessOutput) {
  ProcessPlan a = Process("a", "echo out; echo err >&2; exit 1");
  a.exception_handler = ExceptionHandler::kRespawn;
  a.respawn_delay = absl::ZeroDuration();
  a.respawn_limit = 1;
  Launch({a});
  const LaunchOutcome outcome = Finish();
  EXPECT_EQ(outcome.exit_code, 1);  // every process down, the last exit a failure
  std::ifstream in(dir_ + "/a.log");
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_TRUE(absl::StrContains(log.str(), "cyber_launch: start 1 of a at ")) << log.str();
  EXPECT_TRUE(absl::StrContains(log.str(), "cyber_launch: start 2 of a at ")) << log.str();
  EXPECT_TRUE(absl::StrContains(log.str(), "out\nerr\n")) << log.str();
  EXPECT_EQ(outcome.processes[0].log_path, dir_ + "/a.log");
}

}  // namespace
}  // namespace launch
}  // namespace cyber
