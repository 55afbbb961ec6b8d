#include "cyber/inspect/field_selector.h"

#include "cyber/inspect/testing/inspect_test_messages.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cyber {
namespace inspect {
namespace {

using ::testing::HasSubstr;
using inspect_test::Cloud;

Cloud MakeCloud() {
  Cloud c;
  c.mutable_header()->set_stamp(42);
  c.mutable_header()->set_frame_id("base");
  for (int i = 0; i < 3; ++i) {
    auto* p = c.add_points();
    p->set_x(i + 0.5);
    p->set_y(-i);
    c.add_ranges(i * 2.0f);
  }
  c.set_kind(Cloud::LIDAR);
  return c;
}

std::string Select(const Cloud& c, const std::string& path) {
  auto steps = ParseFieldPath(path);
  if (!steps.ok()) return "parse error: " + std::string(steps.status().message());
  auto text = SelectField(c, *steps);
  if (!text.ok()) return "error: " + std::string(text.status().message());
  return *text;
}

TEST(ParseFieldPathTest, StepsAndIndices) {
  auto steps = ParseFieldPath("points[3].x");
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].name, "points");
  EXPECT_EQ((*steps)[0].index, 3);
  EXPECT_EQ((*steps)[1].name, "x");
  EXPECT_FALSE((*steps)[1].index.has_value());
}

TEST(ParseFieldPathTest, BadPathsNameTheColumn) {
  EXPECT_THAT(std::string(ParseFieldPath("").status().message()), HasSubstr("empty path"));
  EXPECT_THAT(std::string(ParseFieldPath("a..b").status().message()),
              HasSubstr("\"a..b\" at column 3: expected a field name"));
  EXPECT_THAT(std::string(ParseFieldPath("a[x]").status().message()),
              HasSubstr("index \"x\" is not a number"));
  EXPECT_THAT(std::string(ParseFieldPath("a[1").status().message()),
              HasSubstr("'[' without ']'"));
  EXPECT_THAT(std::string(ParseFieldPath("a-b").status().message()), HasSubstr("unexpected '-'"));
}

TEST(SelectFieldTest, ScalarsMessagesAndElements) {
  const Cloud c = MakeCloud();
  EXPECT_EQ(Select(c, "header.stamp"), "42\n");
  EXPECT_EQ(Select(c, "header.frame_id"), "\"base\"\n");
  EXPECT_EQ(Select(c, "kind"), "LIDAR\n");
  EXPECT_EQ(Select(c, "header"), "stamp: 42\nframe_id: \"base\"\n");
  EXPECT_EQ(Select(c, "points[1].x"), "1.5\n");
  EXPECT_EQ(Select(c, "points[2]"), "x: 2.5\ny: -2\n");
  EXPECT_EQ(Select(c, "ranges[2]"), "4\n");
  EXPECT_EQ(Select(c, "ranges"), "[0, 2, 4]\n");
  EXPECT_EQ(Select(c, "points"), "[0]\nx: 0.5\ny: 0\n[1]\nx: 1.5\ny: -1\n[2]\nx: 2.5\ny: -2\n");
}

TEST(SelectFieldTest, UnknownFieldNamesTheClosest) {
  const Cloud c = MakeCloud();
  const std::string error = Select(c, "header.stmp");
  EXPECT_THAT(error, HasSubstr("field \"header.stmp\": cyber.inspect_test.Header has no field "
                               "\"stmp\" (did you mean \"stamp\"?); its fields: stamp, frame_id"));
  EXPECT_THAT(Select(c, "zzzzzz"), ::testing::Not(HasSubstr("did you mean")));
}

TEST(SelectFieldTest, WrongShapesAreExplained) {
  const Cloud c = MakeCloud();
  EXPECT_THAT(Select(c, "points[3].x"), HasSubstr("index 3 out of range (points has 3 values)"));
  EXPECT_THAT(Select(c, "points.x"), HasSubstr("is repeated: give an index (points[0])"));
  EXPECT_THAT(Select(c, "header[0]"), HasSubstr("is not repeated, it takes no index"));
  EXPECT_THAT(Select(c, "header.stamp.x"),
              HasSubstr("field \"header.stamp.x\": cyber.inspect_test.Header.stamp is a int64, "
                        "not a message"));
}

}  // namespace
}  // namespace inspect
}  // namespace cyber
