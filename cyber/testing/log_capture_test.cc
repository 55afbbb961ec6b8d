#include "cyber/testing/log_capture.h"

#include <string>
#include <thread>
#include <vector>

#include "glog/logging.h"
#include "gtest/gtest.h"

namespace cyber {
namespace test {
namespace {

TEST(LogCaptureTest, KeepsTheLinesOfItsSeverityLoggedWhileItExists) {
  LOG(WARNING) << "before: not kept";
  std::vector<std::string> errors_seen;
  {
    LogCapture warnings;
    LogCapture errors(google::GLOG_ERROR);
    LOG(INFO) << "info: not kept";
    LOG(WARNING) << "timer \"imu_poll\": first";
    LOG(ERROR) << "an error";
    LOG(WARNING) << "timer \"lidar_poll\": second";
    EXPECT_EQ(warnings.lines(), (std::vector<std::string>{"timer \"imu_poll\": first",
                                                          "timer \"lidar_poll\": second"}));
    EXPECT_EQ(warnings.Containing("\"lidar_poll\""),
              std::vector<std::string>{"timer \"lidar_poll\": second"});
    EXPECT_EQ(warnings.Containing("timer ").size(), 2u);
    EXPECT_TRUE(warnings.Containing("an error").empty());
    errors_seen = errors.lines();
  }
  EXPECT_EQ(errors_seen, std::vector<std::string>{"an error"});
  LOG(WARNING) << "after: nobody listens";  // the sinks are gone: no crash
}

TEST(LogCaptureTest, WaitForReturnsTheLinesAnotherThreadLogs) {
  LogCapture warnings;
  std::thread logger([] {
    LOG(WARNING) << "stop: has waited 1";
    LOG(WARNING) << "unrelated";
    LOG(WARNING) << "stop: has waited 2";
  });
  const std::vector<std::string> found = warnings.WaitFor("has waited", 2);
  logger.join();
  EXPECT_EQ(found, (std::vector<std::string>{"stop: has waited 1", "stop: has waited 2"}));
  // Already there: returns at once.
  EXPECT_EQ(warnings.WaitFor("unrelated", 1).size(), 1u);
}

}  // namespace
}  // namespace test
}  // namespace cyber
