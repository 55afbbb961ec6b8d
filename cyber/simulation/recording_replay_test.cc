// Replaying a recording into a SimulatedGraph: each message of the channels
// asked for at its recorded instant (exact to the nanosecond, counted from
// the recording's first message), in the recording's order; at one instant
// after the graph's own timer; the same trace every run; and the errors
// that name the recording, the channel and both types.

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/simulation/simulated_graph.h"
#include "cyber/simulation/testing/recording_file.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

using google::protobuf::Duration;
using google::protobuf::Timestamp;

// The values it was given, in order.
class ReplayReader : public Component<Duration> {
 public:
  bool Init() override { return true; }
  bool Proc(const std::shared_ptr<Duration>& d) override {
    seen_.push_back(d->seconds());
    return true;
  }
  const std::vector<int64_t>& seen() const { return seen_; }

 private:
  std::vector<int64_t> seen_;
};
CYBER_REGISTER_COMPONENT(ReplayReader)

class ReplayTicker : public TimerComponent {
 public:
  bool Init() override { return true; }
  bool Proc() override { return true; }
};
CYBER_REGISTER_COMPONENT(ReplayTicker)

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

std::string WriteDag() {
  const std::string path = TempPath("replay.dag");
  std::ofstream(path) << R"(module_config {
  components { class_name: "ReplayReader" config { name: "reader" readers { channel: "/d" } } }
  timer_components { class_name: "ReplayTicker" config { name: "ticker" interval: 10 } }
})";
  return path;
}

constexpr uint64_t kT0 = 1700000000000000000ull;  // the first log_time (ns)
constexpr uint64_t kMs = 1000000;

Duration Seconds(int64_t s) {
  Duration d;
  d.set_seconds(s);
  return d;
}

// /other at kT0 (not fed: but it is the recording's first message), then
// /d: 1 at 3 ms + 7 ns; at 10 ms, 3 from writer "b" written to the file
// before 2 from writer "a" (whose id is lower: 2 comes first); 4 at 25 ms.
std::string WriteDrive() {
  const std::string path = TempPath("drive.mcap");
  auto file = testing::RecordingFile::Create(path);
  EXPECT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE((*file)->Add("/other", Seconds(100), kT0).ok());
  EXPECT_TRUE((*file)->Add("/d", Seconds(1), kT0 + 3 * kMs + 7, "a@host:1").ok());
  EXPECT_TRUE((*file)->Add("/d", Seconds(3), kT0 + 10 * kMs, "b@host:2").ok());
  EXPECT_TRUE((*file)->Add("/d", Seconds(2), kT0 + 10 * kMs, "a@host:1").ok());
  EXPECT_TRUE((*file)->Add("/d", Seconds(4), kT0 + 25 * kMs, "a@host:1").ok());
  EXPECT_TRUE((*file)->Close().ok());
  return path;
}

SimulatedGraph::Options Replaying(const std::string& path, std::vector<std::string> channels) {
  SimulatedGraph::Options o;
  o.recording.path = path;
  o.recording.channels = std::move(channels);
  return o;
}

TEST(RecordingReplayTest, EachMessageAtItsRecordedInstantAfterTheTimersOfThatInstant) {
  const std::string drive = WriteDrive();
  SimulatedGraph graph(Replaying(drive, {"/d"}));
  // The replay's writer is a writer of /d: the strict check passes.
  graph.launcher().set_strict(true);
  const absl::Status launched = graph.Launch({WriteDag()});
  ASSERT_TRUE(launched.ok()) << launched;
  auto other = graph.Tap<Duration>("/other");
  ASSERT_TRUE(other.ok());
  ASSERT_NE(graph.replay(), nullptr);
  EXPECT_EQ(graph.replay()->size(), 4u);
  // The next event is the first message of /d, before the 10 ms timer.
  EXPECT_EQ(graph.NextPlanned() - graph.clock().Now(),
            absl::Milliseconds(3) + absl::Nanoseconds(7));

  graph.RunFor(absl::Milliseconds(30));
  const absl::Duration ms = absl::Milliseconds(1);
  const std::vector<ProcEvent> expected = {
      {3 * ms + absl::Nanoseconds(7), "reader", true},
      // At 10 ms: the graph's timer first, then the two recorded messages.
      {10 * ms, "ticker", true},
      {10 * ms, "reader", true},
      {10 * ms, "reader", true},
      {20 * ms, "ticker", true},
      {25 * ms, "reader", true},
      {30 * ms, "ticker", true},
  };
  EXPECT_EQ(graph.Trace(), expected);
  auto reader = graph.Find<ReplayReader>("reader");
  ASSERT_TRUE(reader.ok());
  // (channel, writer, sequence) orders the messages of one instant.
  EXPECT_EQ((*reader)->seen(), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(graph.StatsOf("reader")->dropped, 0u);
  EXPECT_EQ(graph.replay()->delivered(), 4u);
  EXPECT_EQ(graph.replay()->refused(), 0u);
  // A channel not asked for is not fed.
  EXPECT_EQ((*other)->size(), 0u);
  EXPECT_EQ(graph.NextPlanned(), graph.clock().Now() + absl::Milliseconds(10));  // timer only
}

TEST(RecordingReplayTest, TheSameRecordingGivesTheSameTraceEveryRun) {
  const std::string drive = WriteDrive();
  const std::string dag = WriteDag();
  std::vector<std::string> digests;
  std::vector<std::vector<ProcEvent>> traces;
  for (int run = 0; run < 2; ++run) {
    SimulatedGraph graph(Replaying(drive, {"/d"}));
    ASSERT_TRUE(graph.Launch({dag}).ok());
    graph.RunFor(absl::Milliseconds(50));
    traces.push_back(graph.Trace());
    digests.push_back(graph.TraceDigest());
  }
  EXPECT_EQ(traces[0].size(), 9u);  // 4 messages, 5 timer calls
  EXPECT_EQ(traces[0], traces[1]);
  EXPECT_EQ(digests[0].size(), 16u);
  EXPECT_EQ(digests[0], digests[1]);
  // A graph without the recording does something else.
  SimulatedGraph plain;
  ASSERT_TRUE(plain.Launch({dag}).ok());
  plain.RunFor(absl::Milliseconds(50));
  EXPECT_NE(plain.TraceDigest(), digests[0]);
}

// Launch()'s error, which must name every part of `wanted`.
void ExpectLaunchError(const SimulatedGraph::Options& options, absl::StatusCode code,
                       const std::vector<std::string>& wanted) {
  SimulatedGraph graph(options);
  const absl::Status s = graph.Launch({WriteDag()});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), code) << s;
  for (const std::string& w : wanted) {
    EXPECT_TRUE(absl::StrContains(s.message(), w)) << "\"" << w << "\" not in: " << s.message();
  }
  EXPECT_TRUE(graph.Stats().empty());  // nothing left running
}

TEST(RecordingReplayTest, AChannelRecordedWithAnotherTypeIsAnError) {
  const std::string path = TempPath("timestamps.mcap");
  auto file = testing::RecordingFile::Create(path);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Add("/d", Timestamp(), kT0).ok());
  ASSERT_TRUE((*file)->Close().ok());
  ExpectLaunchError(Replaying(path, {"/d"}), absl::StatusCode::kFailedPrecondition,
                    {path, "\"/d\"", "recorded as google.protobuf.Timestamp",
                     "the graph reads it as google.protobuf.Duration"});
}

TEST(RecordingReplayTest, AChannelNotInTheRecordingIsAnError) {
  const std::string path = TempPath("other_only.mcap");
  auto file = testing::RecordingFile::Create(path);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Add("/other", Seconds(1), kT0).ok());
  ASSERT_TRUE((*file)->Close().ok());
  ExpectLaunchError(Replaying(path, {"/d"}), absl::StatusCode::kNotFound,
                    {path, "\"/d\"", "read by the graph as google.protobuf.Duration",
                     "not in the recording", "/other (google.protobuf.Duration)"});
}

TEST(RecordingReplayTest, AChannelTheGraphDoesNotReadIsAnError) {
  ExpectLaunchError(Replaying(WriteDrive(), {"/d", "/other"}), absl::StatusCode::kNotFound,
                    {"drive.mcap", "\"/other\"", "recorded as google.protobuf.Duration",
                     "read by no one in the graph"});
}

TEST(RecordingReplayTest, AMissingFileOrNoChannelsIsAnError) {
  const std::string missing = TempPath("missing.mcap");
  SimulatedGraph graph(Replaying(missing, {"/d"}));
  const absl::Status s = graph.Launch({WriteDag()});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), missing)) << s;
  ExpectLaunchError(Replaying(WriteDrive(), {}), absl::StatusCode::kInvalidArgument,
                    {"drive.mcap", "no channel to replay"});
  ExpectLaunchError(Replaying(WriteDrive(), {"/d", "/d"}), absl::StatusCode::kInvalidArgument,
                    {"drive.mcap", "\"/d\" is asked for twice"});
}

}  // namespace
}  // namespace cyber
