// Pid files against real processes: stand-in launchers are /bin/sleep run
// under the name "cyber_launch" (argv[0]), which SIGINT ends.

#include "cyber/launch/pid_file.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cyber {
namespace launch {
namespace {

pid_t StartFakeLauncher() {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sleep", "/somewhere/cyber_launch", "1000", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class PidFileTest : public testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = absl::StrCat(getenv("TEST_TMPDIR"), "/",
                                         testing::UnitTest::GetInstance()->current_test_info()->name());
    mkdir(dir.c_str(), 0755);
    setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
    launch_ = dir + "/robot.launch";
    other_ = dir + "/other.launch";
    std::ofstream(launch_) << "<cyber/>\n";
    std::ofstream(other_) << "<cyber/>\n";
  }
  void TearDown() override {
    for (pid_t pid : fakes_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // A fake launcher holding `launch`'s pid file.
  pid_t FakeHolding(const std::string& launch) {
    const pid_t pid = StartFakeLauncher();
    fakes_.push_back(pid);
    // Named cyber_launch once it has exec'd (30 s bounds a failing exec).
    for (int i = 0; i < 30000 && !IsCyberLaunch(pid); ++i) usleep(1000);
    EXPECT_TRUE(IsCyberLaunch(pid));
    std::ofstream(*PidFileFor(launch)) << pid << "\n" << launch << "\n";
    return pid;
  }
  // Reaps a fake that a stop ended (SIGINT).
  void Reaped(pid_t pid) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
    fakes_.erase(std::remove(fakes_.begin(), fakes_.end(), pid), fakes_.end());
  }

  std::string launch_;
  std::string other_;
  std::vector<pid_t> fakes_;
};

TEST_F(PidFileTest, ClaimWritesPidAndRealPathAndReleaseRemovesIt) {
  absl::StatusOr<std::string> path = ClaimPidFile(launch_);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_TRUE(absl::StartsWith(*path, absl::StrCat(getenv("XDG_RUNTIME_DIR"), "/cyber_launch/robot.launch-")))
      << *path;
  char real[4096];
  ASSERT_NE(realpath(launch_.c_str(), real), nullptr);
  EXPECT_EQ(ReadAll(*path), absl::StrCat(getpid(), "\n", real, "\n"));
  ReleasePidFile(*path);
  EXPECT_EQ(access(path->c_str(), F_OK), -1);
}

TEST_F(PidFileTest, ALiveLauncherHoldsItsFileAndStopEndsIt) {
  const pid_t holder = FakeHolding(launch_);
  absl::StatusOr<std::string> claim = ClaimPidFile(launch_);
  ASSERT_EQ(claim.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(absl::StrContains(claim.status().message(),
                                absl::StrCat("is already run by cyber_launch pid ", holder)))
      << claim.status();
  EXPECT_TRUE(absl::StrContains(claim.status().message(), "cyber_launch stop")) << claim.status();

  // StopLaunch returns once the pid no longer runs cyber_launch (a zombie
  // does not: its command line is gone); the test reaps it after.
  EXPECT_TRUE(StopLaunch(launch_, absl::Seconds(30)).ok());
  Reaped(holder);
  const absl::Status again = StopLaunch(launch_, absl::Seconds(30));
  EXPECT_EQ(again.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(again.message(), "no cyber_launch runs")) << again;
  // Its stale pid file is taken over.
  EXPECT_TRUE(ClaimPidFile(launch_).ok());
}

TEST_F(PidFileTest, StopWithoutAFileStopsEveryLaunch) {
  const pid_t a = FakeHolding(launch_);
  const pid_t b = FakeHolding(other_);
  absl::StatusOr<std::vector<std::string>> stopped = StopAllLaunches(absl::Seconds(30));
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->size(), 2u);
  Reaped(a);
  Reaped(b);
  absl::StatusOr<std::vector<std::string>> none = StopAllLaunches(absl::Seconds(30));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(PidFileTest, AMissingLaunchFileIsNamed) {
  absl::StatusOr<std::string> path = PidFileFor("/nonexistent/x.launch");
  EXPECT_EQ(path.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(path.status().message(), "/nonexistent/x.launch"));
}

}  // namespace
}  // namespace launch
}  // namespace cyber
