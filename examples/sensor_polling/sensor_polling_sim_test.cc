// sensor_polling.dag on simulated time (a cyber_graph_test): 60 simulated
// seconds in a fraction of a real one, with exact counts and exact stamps,
// because every timer, delivery and "now" follows the graph's clock.

#include <cstdio>

#include "cyber/testing/graph_test.h"
#include "examples/sensor_polling/sensor_components.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace sensor_polling {
namespace {

using cyber::GraphTest;

TEST_F(GraphTest, SixtySimulatedSecondsGiveExactCountsAndStamps) {
  ASSERT_TRUE(Launch().ok());
  // This graph's fusion component (valid until the graph stops it).
  const Fusion* fusion = component<Fusion>("fusion");
  ASSERT_NE(fusion, nullptr);
  auto imu = graph().Tap<ImuReading>(kImuChannel);
  auto lidar = graph().Tap<LidarScan>(kLidarChannel);
  ASSERT_TRUE(imu.ok() && lidar.ok());
  const cyber::Instant start = graph().Now();
  graph().RunFor(absl::Seconds(60));

  // Exactly as configured: 100 Hz, 10 Hz, 1 Hz over 60 s.
  EXPECT_EQ(graph().StatsOf("imu")->procs, 6000u);
  EXPECT_EQ(graph().StatsOf("lidar")->procs, 600u);
  EXPECT_EQ(graph().StatsOf("health")->procs, 60u);
  // Every health check saw both sensors; fusion got every IMU reading.
  EXPECT_EQ(graph().StatsOf("health")->proc_failures, 0u);
  EXPECT_EQ(graph().StatsOf("fusion")->procs, 6000u);
  EXPECT_EQ(graph().StatsOf("fusion")->dropped, 0u);
  // On the tick, every time: no lateness, nothing early, nothing missed.
  for (const char* name : {"imu", "lidar", "health"}) {
    const cyber::ComponentStats s = *graph().StatsOf(name);
    EXPECT_EQ(s.lateness_max, absl::ZeroDuration()) << name;
    EXPECT_EQ(s.early_fires, 0u) << name;
    EXPECT_EQ(s.missed_periods, 0u) << name;
  }
  // The components stamp their readings with the graph's clock.
  ASSERT_EQ((*imu)->size(), 6000u);
  const auto readings = (*imu)->received();
  for (size_t i = 0; i < readings.size(); ++i) {
    ASSERT_EQ(FromStampNs(readings[i].message->stamp_ns()) - start,
              absl::Milliseconds(10) * static_cast<int64_t>(i + 1))
        << "reading " << i;
    ASSERT_EQ(readings[i].at, absl::Milliseconds(10) * static_cast<int64_t>(i + 1));
  }
  ASSERT_EQ((*lidar)->size(), 600u);
  EXPECT_EQ(FromStampNs((*lidar)->received().back().message->stamp_ns()) - start,
            absl::Seconds(60));
  // The first lidar scan comes at 100 ms: the nine IMU readings before it
  // are fused without one; from then on each reading has one.
  EXPECT_EQ(fusion->fused(), 6000u);
  EXPECT_GE(fusion->fused_with_lidar(), 6000u - 10);
  EXPECT_LE(fusion->fused_with_lidar(), 6000u - 9);
  graph().Stop();
  std::printf("%s", cyber::Launcher::SummaryTable(graph().Stats()).c_str());
}

TEST_F(GraphTest, AComponentIsReachedByItsNameAsItsClassOrABase) {
  ASSERT_TRUE(Launch().ok());
  EXPECT_NE(component<ImuPoller>("imu"), nullptr);
  EXPECT_NE(component<cyber::TimerComponent>("imu"), nullptr);
  // A wrong class or name fails the test, saying what there is.
  EXPECT_NONFATAL_FAILURE(
      EXPECT_EQ(component<Fusion>("imu"), nullptr),
      "component \"imu\" is of class ImuPoller (sensor_polling::ImuPoller), "
      "not a sensor_polling::Fusion");
  EXPECT_NONFATAL_FAILURE(EXPECT_EQ(component<Fusion>("fusoin"), nullptr),
                          "no such running component (running: imu, lidar, fusion, health)");
}

TEST_F(GraphTest, TheSameRunTwiceGivesTheSameTrace) {
  std::vector<cyber::ProcEvent> first;
  {
    cyber::SimulatedGraph other;
    ASSERT_TRUE(other.Launch(cyber::GraphTestDags()).ok());
    other.RunFor(absl::Seconds(5));
    first = other.Trace();  // the run; Stop() is not part of it
    other.Stop();
  }
  ASSERT_TRUE(Launch().ok());
  graph().RunFor(absl::Seconds(5));
  const std::vector<cyber::ProcEvent> second = graph().Trace();
  graph().Stop();
  ASSERT_EQ(first.size(), 500u + 50u + 5u + 500u);  // imu, lidar, health, fusion
  EXPECT_TRUE(first == second);
}

}  // namespace
}  // namespace sensor_polling
