// A Stop() stuck behind its running callback is loud (timer_stop_registry.h):
// past --timer_stop_warn_after it is logged with the timer's name, the
// caller (thread or routine, and what a ScopedStopCaller says it does) and
// how long it has waited, again while it still waits, and listed by
// StopsInProgress(); when it finally returns, that is logged too.
//
// Real threads on the real clock: the callback waits for a lock the
// stopping thread holds, and is let go only once the warning has been seen.
// Nothing asserts on speed; every wait is for a condition, bounded only to
// turn a failure into a failed test instead of a hang.

#include <pthread.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cyber/time/wait_list.h"
#include "cyber/testing/log_capture.h"
#include "cyber/time/steady_clock.h"
#include "gflags/gflags.h"
#include "gtest/gtest.h"
#include "timer/callback_executor.h"
#include "timer/timer_system.h"
#include "timer/timer.h"
#include "timer/timer_stop_registry.h"

namespace cyber {
namespace timer {
namespace {

// A callback that needs `held` (a lock the stopping code holds). A thread
// blocked in Stop() cannot unlock a std::mutex, so the callback tries it
// until the test lets it go (`give_up`), once it has seen what it waits for.
struct LockedCallback {
  std::mutex held;
  std::atomic<bool> entered{false};  // waiting for `held`
  std::atomic<bool> give_up{false};
  void operator()() {
    while (!held.try_lock()) {
      entered = true;  // (again and again: the stopper may have reset it)
      if (give_up) return;
      std::this_thread::yield();
    }
    held.unlock();
  }
};

std::string ThreadName() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

class TimerStopWarningTest : public testing::Test {
 protected:
  TimerStopWarningTest()
      : executor_([] {
          CallbackExecutor::Options o;
          o.threads = 2;
          return o;
        }()),
        driver_(SteadyClock::Get(), &executor_) {
    FLAGS_timer_stop_warn_after = "20ms";
  }
  ~TimerStopWarningTest() override {
    driver_.Shutdown();
    executor_.Shutdown();
  }

  // A 2 ms timer named `name` running `cb`, started, its callback entered.
  std::unique_ptr<Timer> StartedTimer(const std::string& name, LockedCallback* cb) {
    TimerOptions o;
    o.name = name;
    o.period = absl::Milliseconds(2);
    o.callback = [cb] { (*cb)(); };
    auto timer = std::make_unique<Timer>(std::move(o), &driver_);
    EXPECT_TRUE(timer->Schedule().ok());
    return timer;
  }

  gflags::FlagSaver flags_;
  CallbackExecutor executor_;
  TimerSystem driver_;
};

TEST_F(TimerStopWarningTest, StopUnderTheCallbacksLockWarnsNamingTimerCallerAndWait) {
  test::LogCapture warnings_logged;
  LockedCallback cb;
  std::unique_ptr<Timer> timer = StartedTimer("stuck_poll", &cb);

  std::string caller_name;
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    pthread_setname_np(pthread_self(), "stop_caller");
    caller_name = ThreadName();
    const ScopedStopCaller what("component \"imu\" Shutdown()");
    std::lock_guard<std::mutex> lock(cb.held);
    // Only now: a call that runs and cannot take the lock.
    cb.entered = false;
    while (!cb.entered) std::this_thread::yield();
    timer->Stop();
    stopped = true;
  });

  // Two warnings: the first past the threshold, the next at twice it.
  const std::vector<std::string> warnings =
      warnings_logged.WaitFor("timer \"stuck_poll\": Stop() has waited", 2);
  // While it is stuck, it is listed.
  std::vector<StopInProgress> stops = StopsInProgress();
  // But not in a child forked now (as a gtest death test is): the stuck
  // thread is not there, and the child must not warn about it for ever.
  const pid_t child = fork();
  if (child == 0) _exit(StopsInProgress().empty() ? 0 : 1);
  int child_status = -1;
  const bool child_waited = child > 0 && waitpid(child, &child_status, 0) == child;
  cb.give_up = true;
  stopper.join();
  ASSERT_GE(warnings.size(), 2u) << "no repeated warning within 30 s";
  EXPECT_TRUE(stopped);
  EXPECT_FALSE(timer->IsRunning());
  ASSERT_TRUE(child_waited) << "fork() or waitpid() failed";
  EXPECT_TRUE(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0)
      << "the forked child lists the parent's stuck stop (status " << child_status << ")";

  const std::string& w = warnings[0];
  EXPECT_NE(w.find("for its running callback to return"), std::string::npos) << w;
  EXPECT_NE(w.find(absl::StrCat("caller: thread ")), std::string::npos) << w;
  EXPECT_NE(w.find("\"" + caller_name + "\", in component \"imu\" Shutdown()"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("still waiting"), std::string::npos) << w;

  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].timer, "stuck_poll");
  EXPECT_NE(stops[0].caller.find("stop_caller"), std::string::npos) << stops[0].caller;
  EXPECT_GE(stops[0].waited, absl::Milliseconds(20));
  EXPECT_NE(ToString(stops[0]).find("timer \"stuck_poll\": Stop() waiting "), std::string::npos)
      << ToString(stops[0]);

  // Its end is logged, and it is off the list.
  const std::vector<std::string> returned =
      warnings_logged.WaitFor("timer \"stuck_poll\": Stop() returned after", 1);
  ASSERT_EQ(returned.size(), 1u);
  EXPECT_NE(returned[0].find("stop_caller"), std::string::npos) << returned[0];
  EXPECT_TRUE(StopsInProgress().empty());
}

// A "routine" for the waiting Stop(): Park blocks the thread that plays it,
// and it has a name (the scheduler's routines are named likewise).
class NamedFakeRoutine final : public Parkable {
 public:
  void Park() override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return pending_; });
    pending_ = false;
  }
  void Unpark() override {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = true;
    cv_.notify_all();
  }
  std::string DebugName() const override { return "planner_loop"; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
};

TEST_F(TimerStopWarningTest, StopFromARoutineNamesTheRoutine) {
  test::LogCapture warnings_logged;
  LockedCallback cb;
  std::unique_ptr<Timer> timer = StartedTimer("stuck_timeout", &cb);

  NamedFakeRoutine routine;
  std::thread stopper([&] {
    SetCurrentCoroutine(&routine);
    {
      const ScopedStopCaller what("component \"planner\" Proc()");
      std::lock_guard<std::mutex> lock(cb.held);
      cb.entered = false;
      while (!cb.entered) std::this_thread::yield();
      timer->Stop();  // parks the "routine"
    }
    SetCurrentCoroutine(nullptr);
  });
  const std::vector<std::string> warnings =
      warnings_logged.WaitFor("timer \"stuck_timeout\": Stop() has waited", 1);
  cb.give_up = true;
  stopper.join();
  ASSERT_GE(warnings.size(), 1u) << "no warning within 30 s";
  EXPECT_NE(warnings[0].find("caller: routine \"planner_loop\", in component \"planner\" "
                             "Proc()"),
            std::string::npos)
      << warnings[0];
}

TEST(TimerStopWarnAfterTest, FlagIsAPositiveDuration) {
  gflags::FlagSaver saver;
  EXPECT_EQ(StopWarnAfter(), absl::Seconds(1));  // the default
  EXPECT_FALSE(gflags::SetCommandLineOption("timer_stop_warn_after", "250ms").empty());
  EXPECT_EQ(StopWarnAfter(), absl::Milliseconds(250));
  EXPECT_FALSE(gflags::SetCommandLineOption("timer_stop_warn_after", "inf").empty());
  EXPECT_EQ(StopWarnAfter(), absl::InfiniteDuration());
  // Refused: the value stays.
  EXPECT_TRUE(gflags::SetCommandLineOption("timer_stop_warn_after", "0s").empty());
  EXPECT_TRUE(gflags::SetCommandLineOption("timer_stop_warn_after", "soon").empty());
  EXPECT_EQ(StopWarnAfter(), absl::InfiniteDuration());
}

}  // namespace
}  // namespace timer
}  // namespace cyber
