// cyber_graph_test is strict by default: a graph whose component calls a
// service nobody serves (a typo of a served one) fails Launch(), the
// warning naming the service, the caller and the served name it looks
// like.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "cyber/mainboard/testing/graph_check_components.h"
#include "cyber/testing/graph_test.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

TEST_F(GraphTest, StrictByDefaultSoACallToAServiceNobodyServesFailsLaunch) {
  EXPECT_TRUE(GraphTestStrict());
  const absl::Status s = Launch();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "strict graph: 1 graph warning is an error")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "service \"/graph_check/rout\"")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "is called by component \"caller\"")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "but served by no one")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(),
                                "did you mean \"/graph_check/route\"? (served by component "
                                "\"server\""))
      << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "add remote_services: \"/graph_check/rout\"")) << s;
  EXPECT_TRUE(graph().Stats().empty());  // started, then stopped again
}

}  // namespace
}  // namespace cyber
