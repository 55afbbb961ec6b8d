// A timer that starts on the fallback timer system (no cyber::Init: no
// scheduler wired) says so, once per process, naming the timer and why; a
// timer on a timer system of its own says nothing. One test: "once per
// process" is the point, and this binary starts no other timer.

#include <mutex>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

// Collects the WARNING lines logged while it exists.
class WarningSink : public google::LogSink {
 public:
  WarningSink() { google::AddLogSink(this); }
  ~WarningSink() override { google::RemoveLogSink(this); }
  void send(google::LogSeverity severity, const char*, const char*, int,
            const struct ::tm*, const char* message, size_t length) override {
    if (severity != google::GLOG_WARNING) return;
    std::lock_guard<std::mutex> lock(mu_);
    warnings_.emplace_back(message, length);
  }
  std::vector<std::string> warnings() {
    std::lock_guard<std::mutex> lock(mu_);
    return warnings_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> warnings_;
};

TimerOptions Hourly(const std::string& name) {
  TimerOptions o;
  o.name = name;
  o.period = absl::Hours(1);  // never fires during the test
  o.callback = [] {};
  return o;
}

TEST(FallbackNoticeTest, TheFirstTimerOnTheFallbackPoolSaysSoOnce) {
  WarningSink sink;
  // Its own timer system: not the fallback, nothing to say.
  SimulatedTimerSystem sim;
  Timer own(Hourly("own_system"), &sim.driver());
  ASSERT_TRUE(own.Schedule().ok());
  EXPECT_TRUE(sink.warnings().empty());

  Timer imu(Hourly("imu_poll"));
  ASSERT_TRUE(imu.Schedule().ok());
  Timer lidar(Hourly("lidar_poll"));
  ASSERT_TRUE(lidar.Schedule().ok());
  imu.Stop();
  ASSERT_TRUE(imu.Schedule().ok());  // again, on the same pool
  imu.Stop();
  lidar.Stop();
  own.Stop();

  const std::vector<std::string> warnings = sink.warnings();
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
