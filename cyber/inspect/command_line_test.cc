#include "cyber/inspect/command_line.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace inspect {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CommandLineTest, OperandsAndFlagsInAnyOrder) {
  auto line = ParseCommandLine({"echo", "-n", "3", "/sensor/imu", "-f", "accel.x"}, {"-n", "-f"},
                               {"-l"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->operands, ElementsAre("echo", "/sensor/imu"));
  EXPECT_EQ(line->values.at("-n"), "3");
  EXPECT_EQ(line->values.at("-f"), "accel.x");
  EXPECT_FALSE(line->help);
}

TEST(CommandLineTest, LongFlagsWithEqualsSwitchesAndHelp) {
  auto line = ParseCommandLine({"call", "/s", "x: -1", "--timeout=2s", "-l", "--help"},
                               {"--timeout"}, {"-l"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->operands, ElementsAre("call", "/s", "x: -1"));
  EXPECT_EQ(line->values.at("--timeout"), "2s");
  EXPECT_TRUE(line->Has("-l"));
  EXPECT_TRUE(line->help);
}

TEST(CommandLineTest, ErrorsNameTheFlag) {
  EXPECT_THAT(std::string(ParseCommandLine({"echo", "-x"}, {"-n"}, {}).status().message()),
              HasSubstr("unknown flag -x"));
  EXPECT_THAT(std::string(ParseCommandLine({"echo", "-n"}, {"-n"}, {}).status().message()),
              HasSubstr("flag -n needs a value"));
}

TEST(CommandLineTest, CountsAndDurations) {
  auto line = ParseCommandLine({"-n", "0", "--timeout", "250ms", "-w", "1.5"},
                               {"-n", "--timeout", "-w"}, {});
  ASSERT_TRUE(line.ok());
  EXPECT_THAT(std::string(PositiveCount(*line, "-n", 1).status().message()),
              HasSubstr("flag -n: \"0\" is not a count > 0"));
  EXPECT_EQ(*PositiveCount(*line, "-m", 7), 7);
  EXPECT_EQ(*PositiveDuration(*line, "--timeout", absl::Seconds(1)), absl::Milliseconds(250));
  EXPECT_EQ(*PositiveDuration(*line, "-w", absl::Seconds(1)), absl::Milliseconds(1500));
  EXPECT_EQ(*PositiveDuration(*line, "-t", absl::Seconds(3)), absl::Seconds(3));
}

}  // namespace
}  // namespace inspect
}  // namespace cyber
