// The Cyber RT compatible surface, on the process-default timer system (the
// real steady clock and the callback executor), written the way Cyber RT
// code is: this file must compile warning-free with only the include path and
// namespace changed from code written for apollo::cyber::Timer.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>

#include "gtest/gtest.h"
#include "timer/timer.h"

namespace {

using cyber::Timer;
using cyber::TimerOption;

// Waits (on real time) until `count` reaches `want` or a generous limit
// passes. The limit only bounds a failing test; a passing one returns as soon
// as the callbacks ran.
bool WaitForCount(std::mutex* mu, std::condition_variable* cv, const int* count,
                  int want) {
  std::unique_lock<std::mutex> lock(*mu);
  return cv->wait_for(lock, std::chrono::seconds(20),
                      [&] { return *count >= want; });
}

TEST(TimerCyberCompatTest, CyberStyleCodeCompilesAndRuns) {
  std::mutex mu;
  std::condition_variable cv;
  int count = 0;
  auto callback = [&] {
    std::lock_guard<std::mutex> lock(mu);
    ++count;
    cv.notify_all();
  };
  EXPECT_EQ(cyber::TIMER_RESOLUTION_MS, 2u);

  Timer periodic(10, callback, false);
  periodic.Start();
  ASSERT_TRUE(WaitForCount(&mu, &cv, &count, 3));
  periodic.Stop();
  int after_stop;
  {
    std::lock_guard<std::mutex> lock(mu);
    after_stop = count;
  }

  TimerOption opt(5, callback, true);
  Timer oneshot;
  oneshot.SetTimerOption(opt);
  oneshot.Start();
  ASSERT_TRUE(WaitForCount(&mu, &cv, &count, after_stop + 1));

  Timer from_option(opt);
  from_option.Start();
  from_option.Stop();
}

TEST(TimerCyberCompatTest, StartWithoutOptionLogsAnError) {
  Timer timer;
  ::testing::internal::CaptureStderr();
  timer.Start();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("Start() before SetTimerOption()"), std::string::npos) << log;
  EXPECT_NE(log.find("timer \"timer#"), std::string::npos) << log;
  EXPECT_FALSE(timer.IsRunning());
}

TEST(TimerCyberCompatTest, BadPeriodsLogErrorsNamingTheValue) {
  struct Case {
    uint32_t period;
    const char* expected;
  } cases[] = {
      {0, "period 0 must be positive"},
  };
  for (const Case& c : cases) {
    ::testing::internal::CaptureStderr();
    Timer timer(c.period, [] {}, false);
    timer.Start();
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find(c.expected), std::string::npos) << log;
    EXPECT_FALSE(timer.IsRunning());
  }
  ::testing::internal::CaptureStderr();
  Timer no_callback(10, nullptr, false);
  no_callback.Start();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("callback is empty"), std::string::npos) << log;
}

}  // namespace
