#include "scheduler/config/cpuset.h"

#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace scheduler {
namespace {

using Cpus = std::vector<int>;

TEST(ParseCpusetTest, ListsAndRangesKeepTheirOrder) {
  EXPECT_EQ(*ParseCpuset("0-3,6"), (Cpus{0, 1, 2, 3, 6}));
  EXPECT_EQ(*ParseCpuset("6,0-1"), (Cpus{6, 0, 1}));
  EXPECT_EQ(*ParseCpuset(" 2 , 4 - 5 "), (Cpus{2, 4, 5}));
  EXPECT_EQ(*ParseCpuset("1023"), (Cpus{1023}));
  EXPECT_EQ(*ParseCpuset("3-3"), (Cpus{3}));
}

TEST(ParseCpusetTest, EmptyMeansNoCpus) {
  EXPECT_TRUE(ParseCpuset("")->empty());
  EXPECT_TRUE(ParseCpuset("  ")->empty());
}

TEST(ParseCpusetTest, RejectsBadElementsWithTheElementInTheMessage) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"0-3,x", "\"x\" is not a CPU number"},
           Case{"0,,1", "empty element"},
           Case{"0,", "empty element"},
           Case{"-1", "\"-1\" is not a CPU or a range"},
           Case{"3-", "\"3-\" is not a CPU or a range"},
           Case{"1-2-3", "\"1-2-3\" is not a CPU or a range"},
           Case{"3-1", "range \"3-1\" runs backwards"},
           Case{"1024", "CPU 1024 is above the maximum index 1023"},
           Case{"0-99999999999", "above the maximum index 1023"},
           Case{"+1", "\"+1\" is not a CPU number"},
           Case{"0-2,1", "CPU 1 is listed twice"},
       }) {
    absl::StatusOr<Cpus> cpus = ParseCpuset(c.text);
    ASSERT_FALSE(cpus.ok()) << c.text;
    EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(cpus.status().message().find(c.message), absl::string_view::npos)
        << c.text << " -> " << cpus.status().message();
  }
}

TEST(FormatCpuListTest, JoinsWithCommas) {
  EXPECT_EQ(FormatCpuList({0, 1, 6}), "0,1,6");
  EXPECT_EQ(FormatCpuList({}), "");
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
