// NearestName: a typo finds the name it misspells; a different name, an
// empty list or the name itself finds nothing; ties go to the first name
// in sorted order, whatever order the names come in.

#include "cyber/common/nearest_name.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cyber {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("route", "route"), 0u);
  EXPECT_EQ(EditDistance("route", "rout"), 1u);      // a deletion
  EXPECT_EQ(EditDistance("rout", "route"), 1u);      // an insertion
  EXPECT_EQ(EditDistance("route", "ruote"), 2u);     // a swap is two edits
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);  // the textbook case
}

TEST(NearestNameTest, ATypoFindsTheNameItMisspells) {
  const std::vector<std::string> known = {"/planning/route", "/perception/obstacles",
                                          "/control/command"};
  EXPECT_EQ(NearestName("/planing/route", known), std::optional<std::string>("/planning/route"));
  EXPECT_EQ(NearestName("/planning/rout", known), std::optional<std::string>("/planning/route"));
  EXPECT_EQ(NearestName("/control/comand", known),
            std::optional<std::string>("/control/command"));
}

TEST(NearestNameTest, ADifferentNameTheNameItselfOrNoNamesFindNothing) {
  const std::vector<std::string> known = {"/planning/route"};
  EXPECT_EQ(NearestName("/route", known), std::nullopt);  // 9 edits: not a typo
  EXPECT_EQ(NearestName("/planning/route", known), std::nullopt);
  EXPECT_EQ(NearestName("/planning/rout", {}), std::nullopt);
  // Short names allow two edits.
  EXPECT_EQ(NearestName("/a", {"/abc"}), std::optional<std::string>("/abc"));
  EXPECT_EQ(NearestName("/a", {"/abcd"}), std::nullopt);
}

TEST(NearestNameTest, TiesGoToTheFirstNameInSortedOrder) {
  EXPECT_EQ(NearestName("/map/b", {"/map/c", "/map/a"}), std::optional<std::string>("/map/a"));
  EXPECT_EQ(NearestName("/map/b", {"/map/a", "/map/c"}), std::optional<std::string>("/map/a"));
  // A nearer name wins over an earlier one.
  EXPECT_EQ(NearestName("/map/bb", {"/map/a", "/map/b"}), std::optional<std::string>("/map/b"));
}

}  // namespace
}  // namespace cyber
