#include "cyber/init/init.h"

#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "gflags/gflags.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "timer/timer.h"

namespace cyber {
namespace {

class InitTest : public ::testing::Test {
 protected:
  void TearDown() override { Shutdown(); }
};

TEST_F(InitTest, InitAndShutdownAreIdempotent) {
  EXPECT_TRUE(Init("init_test"));
  EXPECT_TRUE(OK());
  EXPECT_EQ(GetState(), State::kInitialized);
  EXPECT_TRUE(Init("init_test"));  // second call: same run, still OK
  EXPECT_TRUE(OK());
  Shutdown();
  EXPECT_FALSE(OK());
  EXPECT_TRUE(IsShutdown());
  EXPECT_EQ(GetState(), State::kShutDown);
  Shutdown();  // second call: no effect, no crash
  EXPECT_EQ(GetState(), State::kShutDown);
}

TEST_F(InitTest, InitAfterShutdownStartsANewRun) {
  ASSERT_TRUE(Init("init_test"));
  Shutdown();
  ASSERT_TRUE(Init("init_test"));
  EXPECT_TRUE(OK());
  EXPECT_FALSE(IsShutdown());
}

TEST_F(InitTest, RejectsMissingBinaryName) {
  EXPECT_FALSE(Init(nullptr));
  EXPECT_FALSE(Init(""));
  EXPECT_FALSE(OK());
}

TEST_F(InitTest, SigintRequestsShutdown) {
  ASSERT_TRUE(Init("init_test"));
  ASSERT_EQ(raise(SIGINT), 0);  // the handler runs before raise() returns
  EXPECT_FALSE(OK());
  EXPECT_TRUE(IsShutdown());
  EXPECT_EQ(GetState(), State::kShuttingDown);
  WaitForShutdown();  // must return at once
  Shutdown();
  EXPECT_EQ(GetState(), State::kShutDown);
}

TEST_F(InitTest, SigtermRequestsShutdown) {
  ASSERT_TRUE(Init("init_test"));
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_FALSE(OK());
  EXPECT_EQ(GetState(), State::kShuttingDown);
}

TEST_F(InitTest, WaitForShutdownReturnsForEveryWaiterOnSignal) {
  ASSERT_TRUE(Init("init_test"));
  std::atomic<int> returned{0};
  std::thread a([&] { WaitForShutdown(); ++returned; });
  std::thread b([&] { WaitForShutdown(); ++returned; });
  ASSERT_EQ(raise(SIGTERM), 0);
  a.join();  // would hang (and time the test out) if a waiter were missed
  b.join();
  EXPECT_EQ(returned, 2);
}

TEST_F(InitTest, WaitForShutdownReturnsOnShutdownCall) {
  ASSERT_TRUE(Init("init_test"));
  std::thread waiter([] { WaitForShutdown(); });
  Shutdown();
  waiter.join();
  EXPECT_EQ(GetState(), State::kShutDown);
}

TEST_F(InitTest, AsyncShutdownFromAnotherThreadReleasesTheWaiter) {
  ASSERT_TRUE(Init("init_test"));
  std::thread requester([] { AsyncShutdown(); });
  WaitForShutdown();
  requester.join();
  EXPECT_EQ(GetState(), State::kShuttingDown);
  Shutdown();
  EXPECT_EQ(GetState(), State::kShutDown);
}

TEST_F(InitTest, WaitForShutdownWithoutInitReturns) {
  // Never initialized in a fresh process is covered by the death test below;
  // here: after Shutdown() it must not block.
  ASSERT_TRUE(Init("init_test"));
  Shutdown();
  WaitForShutdown();
}

TEST_F(InitTest, ShutdownStopsTheDefaultTimerSystem) {
  ASSERT_TRUE(Init("init_test"));
  TimerOptions options;
  options.name = "heartbeat";
  options.period = absl::Milliseconds(10);
  options.callback = [] {};
  Timer before(options);  // on the process-default timer system
  ASSERT_TRUE(before.Schedule().ok());
  Shutdown();
  const absl::Status s = before.Schedule();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("timer \"heartbeat\": the timer system is shut down"),
            std::string::npos)
      << s;
  before.Stop();  // still safe
  // A new run gets a new default timer system.
  ASSERT_TRUE(Init("init_test"));
  Timer after(options);
  EXPECT_TRUE(after.Schedule().ok());
}

std::atomic<int> g_previous_handler_calls{0};
void PreviousHandler(int) { ++g_previous_handler_calls; }

TEST_F(InitTest, ShutdownRestoresThePreviousSignalHandlers) {
  struct sigaction mine = {};
  mine.sa_handler = PreviousHandler;
  struct sigaction saved;
  ASSERT_EQ(sigaction(SIGTERM, &mine, &saved), 0);
  ASSERT_TRUE(Init("init_test"));
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(g_previous_handler_calls, 0);  // ours handled it
  Shutdown();
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(g_previous_handler_calls, 1);  // theirs is back
  ASSERT_EQ(sigaction(SIGTERM, &saved, nullptr), 0);
}

// Where logs go: stderr, unless the user chose (flags or GLOG_ variables).
// Each test starts from glog's own defaults (logtostderr false, nothing set,
// no GLOG_ destination variables) and restores flags and environment.
class InitLoggingTest : public ::testing::Test {
 protected:
  static constexpr const char* kVariables[] = {
      "GLOG_logtostderr", "GLOG_alsologtostderr", "GLOG_log_dir",
      "GLOG_stderrthreshold"};

  void SetUp() override {
    for (const char* v : kVariables) {
      if (const char* value = std::getenv(v)) saved_env_[v] = value;
      unsetenv(v);
    }
    // An earlier Init() in this process made stderr the default.
    gflags::SetCommandLineOptionWithMode("logtostderr", "false",
                                         gflags::SET_FLAGS_DEFAULT);
    ASSERT_FALSE(FLAGS_logtostderr);
  }
  void TearDown() override {
    Shutdown();
    for (const char* v : kVariables) unsetenv(v);
    for (const auto& [name, value] : saved_env_) setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  gflags::FlagSaver flags_;
  std::map<std::string, std::string> saved_env_;
};

TEST_F(InitLoggingTest, LogsGoToStderrWhenTheUserChoseNothing) {
  ASSERT_TRUE(InitLogging("init_test"));
  EXPECT_TRUE(google::IsGoogleLoggingInitialized());
  EXPECT_TRUE(FLAGS_logtostderr);
  // Still a default: the next call decides the same way.
  gflags::CommandLineFlagInfo info;
  ASSERT_TRUE(gflags::GetCommandLineFlagInfo("logtostderr", &info));
  EXPECT_TRUE(info.is_default);
}

TEST_F(InitLoggingTest, InitDoesTheSameAgainAfterShutdown) {
  ASSERT_TRUE(Init("init_test"));
  EXPECT_TRUE(FLAGS_logtostderr);
  Shutdown();
  ASSERT_TRUE(Init("init_test"));
  EXPECT_TRUE(FLAGS_logtostderr);
}

TEST_F(InitLoggingTest, ALogDirFlagIsHonoured) {
  ASSERT_FALSE(gflags::SetCommandLineOption("log_dir", std::getenv("TEST_TMPDIR")).empty());
  ASSERT_TRUE(Init("init_test"));
  EXPECT_FALSE(FLAGS_logtostderr);
}

TEST_F(InitLoggingTest, AnExplicitLogtostderrFalseIsHonoured) {
  // The same value as glog's default, but given: the user wants files.
  ASSERT_FALSE(gflags::SetCommandLineOption("logtostderr", "false").empty());
  ASSERT_TRUE(InitLogging("init_test"));
  EXPECT_FALSE(FLAGS_logtostderr);
}

TEST_F(InitLoggingTest, CyberRtsGlogVariablesAreHonoured) {
  // Cyber RT's setup.bash exports these; glog read them at start-up, so
  // the flags look unset to gflags.
  for (const char* v : {"GLOG_log_dir", "GLOG_alsologtostderr"}) {
    setenv(v, v == std::string("GLOG_log_dir") ? std::getenv("TEST_TMPDIR") : "0", 1);
    ASSERT_TRUE(InitLogging("init_test"));
    EXPECT_FALSE(FLAGS_logtostderr) << v;
    unsetenv(v);
  }
}

TEST_F(InitLoggingTest, ANullOrEmptyNameIsRefused) {
  EXPECT_FALSE(InitLogging(nullptr));
  EXPECT_FALSE(InitLogging(""));
}

TEST(InitDeathTest, SecondSignalWhileShuttingDownKills) {
  EXPECT_EXIT(
      {
        Init("init_death_test");
        raise(SIGINT);  // first: asks to stop
        raise(SIGINT);  // second: the default action, termination
        _exit(0);       // not reached
      },
      ::testing::KilledBySignal(SIGINT), "");
}

// cyber_launch starts a mainboard with SIGINT blocked (SpawnChild's
// stop_signals_wait_for_init): a stop sent before Init waits, and Init's
// handler takes it as an orderly stop.
TEST(InitDeathTest, AStopBlockedBeforeInitIsTakenByInitAsAnOrderlyStop) {
  EXPECT_EXIT(
      {
        sigset_t stop;
        sigemptyset(&stop);
        sigaddset(&stop, SIGINT);
        sigaddset(&stop, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &stop, nullptr);
        raise(SIGINT);  // pending: the process is not yet ready to stop
        if (!Init("init_death_test")) _exit(3);
        // Unblocked by Init, the pending SIGINT ran the handler.
        WaitForShutdown();
        const bool stopping = GetState() == State::kShuttingDown;
        sigset_t now;
        pthread_sigmask(SIG_BLOCK, nullptr, &now);
        const bool unblocked = !sigismember(&now, SIGINT) && !sigismember(&now, SIGTERM);
        Shutdown();
        _exit(stopping && unblocked ? 0 : 4);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(InitDeathTest, WaitForShutdownBeforeInitDoesNotBlock) {
  EXPECT_EXIT(
      {
        WaitForShutdown();
        _exit(7);
      },
      ::testing::ExitedWithCode(7), "");
}

}  // namespace
}  // namespace cyber
