// Replay into fusion alone (fusion.dag: fusion and the health monitor, no
// pollers): the pollers' IMU and lidar messages come from a recording
// (BUILD: recording, recording_channels), each at its recorded instant on
// simulated time. What fusion computes is exact, and two runs of the same
// recording give the same trace digest.
//
// The recording (write_pollers_recording.cc, 10 s): IMU reading k received
// at k * 10 ms + 200 us, lidar scan k at k * 100 ms + 1 ms. Instants count
// from the first message (IMU 1), so IMU k arrives at (k - 1) * 10 ms and
// scan k at k * 100 ms - 9.2 ms.

#include <cstdio>
#include <string>

#include "absl/time/time.h"
#include "cyber/testing/graph_test.h"
#include "examples/sensor_polling/sensor_components.h"
#include "gtest/gtest.h"

namespace sensor_polling {
namespace {

using cyber::GraphTest;

TEST_F(GraphTest, FusionOfTheRecordedPollers) {
  ASSERT_TRUE(Launch().ok());
  const Fusion* fusion = component<Fusion>("fusion");
  ASSERT_NE(fusion, nullptr);
  auto imu = graph().Tap<ImuReading>(kImuChannel);
  ASSERT_TRUE(imu.ok());
  graph().RunFor(absl::Seconds(10));

  // Every recorded IMU reading, at its instant, in order.
  ASSERT_EQ((*imu)->size(), 1000u);
  const auto readings = (*imu)->received();
  for (size_t i = 0; i < readings.size(); ++i) {
    ASSERT_EQ(readings[i].at, absl::Milliseconds(10) * static_cast<int64_t>(i)) << i;
    ASSERT_EQ(readings[i].message->seq(), i + 1);
  }
  // Fusion fused each one; the first ten came before the first scan (at
  // 90.8 ms), every later one had a scan.
  EXPECT_EQ(fusion->fused(), 1000u);
  EXPECT_EQ(fusion->fused_with_lidar(), 990u);
  EXPECT_EQ(graph().StatsOf("fusion")->procs, 1000u);
  EXPECT_EQ(graph().StatsOf("fusion")->proc_failures, 0u);
  EXPECT_EQ(graph().StatsOf("fusion")->dropped, 0u);
  // The health monitor (1 s) saw both sensors in each of its 10 checks.
  EXPECT_EQ(graph().StatsOf("health")->procs, 10u);
  EXPECT_EQ(graph().StatsOf("health")->proc_failures, 0u);
  ASSERT_NE(graph().replay(), nullptr);
  EXPECT_EQ(graph().replay()->delivered(), 1100u);  // 1000 IMU + 100 lidar

  // The same recording again, in a graph of its own: the same trace.
  cyber::SimulatedGraph again([] {
    cyber::SimulatedGraph::Options o;
    o.recording = cyber::GraphTestRecording();
    return o;
  }());
  ASSERT_TRUE(again.Launch(cyber::GraphTestDags()).ok());
  again.RunFor(absl::Seconds(10));
  EXPECT_EQ(again.Trace(), graph().Trace());
  EXPECT_EQ(again.TraceDigest(), graph().TraceDigest());
  std::printf("trace digest: %s\n", graph().TraceDigest().c_str());
}

}  // namespace
}  // namespace sensor_polling
