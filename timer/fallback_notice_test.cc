// A timer that starts on the fallback timer system (no cyber::Init: no
// scheduler wired) says so, once per process, naming the timer and why; a
// timer on a timer system of its own says nothing. One test: "once per
// process" is the point, and this binary starts no other timer.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cyber/testing/log_capture.h"
#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

TimerOptions Hourly(const std::string& name) {
  TimerOptions o;
  o.name = name;
  o.period = absl::Hours(1);  // never fires during the test
  o.callback = [] {};
  return o;
}

TEST(FallbackNoticeTest, TheFirstTimerOnTheFallbackPoolSaysSoOnce) {
  test::LogCapture warnings_logged;
  // Its own timer system: not the fallback, nothing to say.
  SimulatedTimerSystem sim;
  Timer own(Hourly("own_system"), &sim.driver());
  ASSERT_TRUE(own.Schedule().ok());
  EXPECT_TRUE(warnings_logged.lines().empty());

  Timer imu(Hourly("imu_poll"));
  ASSERT_TRUE(imu.Schedule().ok());
  Timer lidar(Hourly("lidar_poll"));
  ASSERT_TRUE(lidar.Schedule().ok());
  imu.Stop();
  ASSERT_TRUE(imu.Schedule().ok());  // again, on the same pool
  imu.Stop();
  lidar.Stop();
  own.Stop();

  const std::vector<std::string> warnings = warnings_logged.lines();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("timer \"imu_poll\": no scheduler is wired (cyber::Init was "
                              "not called), so timer callbacks run on the fallback thread "
                              "pool",
                              0),
            0u)
      << warnings[0];
  EXPECT_NE(warnings[0].find("priorities"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace timer
}  // namespace cyber
