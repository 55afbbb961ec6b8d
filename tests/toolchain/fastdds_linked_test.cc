// The control of no_fastdds_test: a program that links cyber::Init loads
// Fast-DDS (its process runtime reaches other processes), so the probe of
// /proc/self/maps can see it.

#include "cyber/init/init.h"
#include "gtest/gtest.h"
#include "tests/toolchain/linked_libraries.h"

namespace cyber {
namespace {

TEST(FastDdsLinkedTest, AProgramWithInitLoadsFastDds) {
  EXPECT_TRUE(testing::MapsLibrary("libfastrtps"));
}

}  // namespace
}  // namespace cyber
