// cyber_graph_test is strict by default: a graph with a channel typo fails
// Launch() with the warning listed; a test may still turn strict mode off
// for its own graph.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "cyber/mainboard/testing/graph_check_components.h"
#include "cyber/testing/graph_test.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

constexpr char kTypoWarning[] =
    "channel \"/graph_check/sampel\" (cyber::graph_check::GraphCheckSample) is "
    "read by component \"sub\"";

TEST_F(GraphTest, StrictByDefaultSoATypoFailsLaunch) {
  EXPECT_TRUE(GraphTestStrict());
  const absl::Status s = Launch();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "strict graph: ")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), kTypoWarning)) << s;
  EXPECT_TRUE(graph().Stats().empty());  // started, then stopped again
}

TEST_F(GraphTest, ATestMayTurnStrictModeOffForItsGraph) {
  graph().launcher().set_strict(false);
  ASSERT_TRUE(Launch().ok());
  graph().RunFor(absl::Milliseconds(100));
  EXPECT_EQ(graph().StatsOf("pub")->procs, 10u);
  EXPECT_EQ(graph().StatsOf("sub")->procs, 0u);  // the typo: nothing arrives
  ASSERT_EQ(graph().launcher().ChannelWarnings().size(), 2u);
  EXPECT_TRUE(absl::StartsWith(graph().launcher().ChannelWarnings()[0], kTypoWarning));
}

}  // namespace
}  // namespace cyber
