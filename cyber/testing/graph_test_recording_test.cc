// cyber_graph_test's `recording` and `recording_channels` reach the
// fixture's graph: the recorded /d arrives at its recorded instants (from
// the recording's first message, on /unfed, which is not fed), in strict
// mode, with the same digest in a second run.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/testing/graph_test.h"
#include "google/protobuf/duration.pb.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

class DurationReader : public Component<google::protobuf::Duration> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<google::protobuf::Duration>& d) override {
    seen_.push_back(d->seconds());
    return true;
  }
  const std::vector<int64_t>& seen() const { return seen_; }

 private:
  std::vector<int64_t> seen_;
};
CYBER_REGISTER_COMPONENT(DurationReader)

TEST(GraphTestRecordingRule, PassesTheRecordingAndItsChannels) {
  const RecordingInput& r = GraphTestRecording();
  EXPECT_TRUE(absl::EndsWith(r.path, "graph_test_recording.mcap")) << r.path;
  EXPECT_EQ(r.channels, std::vector<std::string>{"/d"});
  EXPECT_TRUE(GraphTestStrict());
}

TEST_F(GraphTest, TheRecordingIsReplayedAtItsInstants) {
  ASSERT_TRUE(Launch().ok());
  graph().RunFor(absl::Milliseconds(100));
  const DurationReader* reader = component<DurationReader>("reader");
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->seen(), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  const std::vector<ProcEvent> trace = graph().Trace();
  ASSERT_EQ(trace.size(), 5u);
  for (size_t i = 0; i < trace.size(); ++i) {
    EXPECT_EQ(trace[i].at, absl::Milliseconds(7) * static_cast<int64_t>(i + 1)) << i;
  }

  // A second graph of the same rule: the same digest.
  SimulatedGraph again([] {
    SimulatedGraph::Options o;
    o.recording = GraphTestRecording();
    return o;
  }());
  ASSERT_TRUE(again.Launch(GraphTestDags()).ok());
  again.RunFor(absl::Milliseconds(100));
  EXPECT_EQ(again.TraceDigest(), graph().TraceDigest());
}

}  // namespace
}  // namespace cyber
