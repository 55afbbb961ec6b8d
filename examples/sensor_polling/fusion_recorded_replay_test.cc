// A real recording replayed into fusion alone: testdata/pollers_10s.mcap
// was made by `cyber_recorder record -a` from the pollers mainboard of this
// example running on the real clock (10 s: 1001 IMU readings, 100 lidar
// scans, nothing lost). Fed into fusion.dag on simulated time, what fusion
// computes follows from the recording alone, and the trace digest is the
// same in every run, on every machine: it is asserted as a constant.
//
// To record a new one (then update kDigest from the test's output):
//   mainboard -d examples/sensor_polling/pollers.dag &
//   cyber_recorder record -a -o examples/sensor_polling/testdata/pollers_10s.mcap --duration 10

#include <cstdio>
#include <string>

#include "absl/time/time.h"
#include "cyber/record/mcap/recording.h"
#include "cyber/testing/graph_test.h"
#include "examples/sensor_polling/sensor_components.h"
#include "gtest/gtest.h"

namespace sensor_polling {
namespace {

using cyber::GraphTest;

// The digest of fusion.dag's trace over the whole recording.
constexpr char kDigest[] = "d63de3f4f32daece";

TEST_F(GraphTest, FusionOfARecordingMadeByCyberRecorder) {
  absl::StatusOr<cyber::record::Recording> recording =
      cyber::record::Recording::Load(cyber::GraphTestRecording().path);
  ASSERT_TRUE(recording.ok()) << recording.status();
  // What fusion must do, from the recording itself: one fusion per IMU
  // reading; with a scan for every reading after the first scan (at one
  // instant, /sensor/imu comes before /sensor/lidar: the channel order).
  uint64_t first = recording->messages().front().log_time;
  uint64_t imu = 0, lidar = 0, with_scan = 0, end = 0;
  bool scan_seen = false;
  for (const cyber::record::RecordedMessage& m : recording->messages()) {
    end = m.log_time - first;
    if (m.channel == kImuChannel) {
      ++imu;
      if (scan_seen) ++with_scan;
    } else if (m.channel == kLidarChannel) {
      ++lidar;
      scan_seen = true;
    }
  }
  ASSERT_GE(imu, 900u);
  ASSERT_GE(lidar, 90u);

  ASSERT_TRUE(Launch().ok());
  const Fusion* fusion = component<Fusion>("fusion");
  ASSERT_NE(fusion, nullptr);
  graph().RunFor(absl::Nanoseconds(end) + absl::Milliseconds(1));

  EXPECT_EQ(fusion->fused(), imu);
  EXPECT_EQ(fusion->fused_with_lidar(), with_scan);
  EXPECT_EQ(graph().StatsOf("fusion")->dropped, 0u);
  EXPECT_EQ(graph().replay()->delivered(), imu + lidar);
  std::printf("trace digest: %s (%llu IMU, %llu lidar, %llu fused with a scan)\n",
              graph().TraceDigest().c_str(), static_cast<unsigned long long>(imu),
              static_cast<unsigned long long>(lidar), static_cast<unsigned long long>(with_scan));
  EXPECT_EQ(graph().TraceDigest(), kDigest);
}

}  // namespace
}  // namespace sensor_polling
