#include "cyber/common/log.h"

#include <string>

#include "gtest/gtest.h"

namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FLAGS_logtostderr = true;
    FLAGS_minloglevel = 0;
  }
};

TEST_F(LogTest, MacrosWriteTheirSeverityAndMessage) {
  ::testing::internal::CaptureStderr();
  AINFO << "info message " << 1;
  AWARN << "warning message " << 2;
  AERROR << "error message " << 3;
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("info message 1"), std::string::npos) << out;
  EXPECT_NE(out.find("warning message 2"), std::string::npos) << out;
  EXPECT_NE(out.find("error message 3"), std::string::npos) << out;
  // glog prefixes each line with its severity letter.
  EXPECT_NE(out.find("\nW"), std::string::npos) << out;
  EXPECT_NE(out.find("\nE"), std::string::npos) << out;
}

TEST_F(LogTest, ConditionalMacrosHonourTheirCondition) {
  ::testing::internal::CaptureStderr();
  AERROR_IF(false) << "must not appear";
  AERROR_IF(true) << "must appear";
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.find("must not appear"), std::string::npos) << out;
  EXPECT_NE(out.find("must appear"), std::string::npos) << out;
}

TEST_F(LogTest, MinLogLevelFiltersInfo) {
  FLAGS_minloglevel = 1;  // WARNING and above
  ::testing::internal::CaptureStderr();
  AINFO << "filtered info";
  AWARN << "kept warning";
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.find("filtered info"), std::string::npos) << out;
  EXPECT_NE(out.find("kept warning"), std::string::npos) << out;
}

TEST_F(LogTest, FatalAborts) {
  EXPECT_DEATH({ AFATAL << "fatal message"; }, "fatal message");
}

}  // namespace
