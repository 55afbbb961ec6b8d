// A graph test's stop runs at simulation speed. The robot of three
// processes, merged into one graph test (testdata/map_server_stop.dag): a
// 1 kHz control loop, a map server whose service callback sleeps 250 ms of
// simulated time, and a planner that asks it for a map at start; beside
// them a recorder whose Clear() waits on a std::future for its worker to
// flush (100 sleeps of 2 ms). Stopping the map server while its callback
// sleeps waits for the callback, and simulated time must move for it to
// end, with the 1 kHz timer firing at every millisecond meanwhile: the
// stop lets simulated time pass as fast as the CPU allows (the time moving
// is progress, not a sign of a stuck stop), whether the stop waits in the
// service's synchronous stop or on a future of its own; and a limit on the
// simulated time a stop may take is set through GraphTest's options.
//
// What is asserted is simulated time; the wall time is logged, and bounded
// only by a generous 20 s as the regression check (a stop that waits
// 0.1 s of wall time per simulated millisecond took minutes here).

#include <atomic>
#include <chrono>
#include <future>
#include <memory>

#include "absl/time/time.h"
#include "cyber/common/log.h"
#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/task/task.h"
#include "cyber/testing/graph_test.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "timer/timer.h"

namespace cyber {
namespace {

struct MapRequest {
  int area = 0;
};
struct MapResponse {
  int tiles = 0;
};
constexpr char kMapService[] = "/map/get";
constexpr absl::Duration kMapWork = absl::Milliseconds(250);

std::atomic<int> g_served{0};
std::atomic<int> g_answered{0};
std::atomic<int> g_paces{0};

// A 1 kHz control loop on a Timer of its own.
class Pacer : public Component<> {
 public:
  bool Init() override {
    timer_ = std::make_unique<Timer>(1, [] { ++g_paces; }, false);
    timer_->Start();
    return timer_->IsRunning();
  }
  void Clear() override { timer_->Stop(); }

 private:
  std::unique_ptr<Timer> timer_;
};
CYBER_REGISTER_COMPONENT(Pacer)

// Serves maps; loading one takes kMapWork of (simulated) time.
class MapServer : public Component<> {
 public:
  bool Init() override {
    service_ = node_->CreateService<MapRequest, MapResponse>(
        kMapService, [](const std::shared_ptr<MapRequest>& request,
                        std::shared_ptr<MapResponse>& response) {
          scheduler::CRoutine::SleepFor(kMapWork);
          response->tiles = request->area * 4;
          ++g_served;
        });
    return service_ != nullptr;
  }

 private:
  std::shared_ptr<Service<MapRequest, MapResponse>> service_;
};
CYBER_REGISTER_COMPONENT(MapServer)

// Asks for a map once, at start.
class MapPlanner : public Component<> {
 public:
  bool Init() override {
    client_ = node_->CreateClient<MapRequest, MapResponse>(kMapService);
    if (client_ == nullptr) return false;
    auto request = std::make_shared<MapRequest>();
    request->area = 3;
    client_->AsyncCall(request, absl::Seconds(5),
                       [](Client<MapRequest, MapResponse>::Result r) {
                         if (r.ok()) ++g_answered;
                       });
    return true;
  }

 private:
  std::shared_ptr<Client<MapRequest, MapResponse>> client_;
};
CYBER_REGISTER_COMPONENT(MapPlanner)

std::atomic<int> g_flushed{0};
constexpr int kFlushSteps = 100;
constexpr absl::Duration kFlushStep = absl::Milliseconds(2);

// Records until stopped, then flushes: kFlushSteps sleeps of kFlushStep.
// Clear() waits for the worker on its std::future (not a wait the graph
// can see: the stop's thread simply uses no CPU meanwhile).
class Recorder : public Component<> {
 public:
  bool Init() override {
    worker_ = cyber::Async([this] {
      while (!stop_.load()) cyber::SleepFor(kFlushStep);
      for (int i = 0; i < kFlushSteps; ++i) {
        cyber::SleepFor(kFlushStep);
        ++g_flushed;
      }
    });
    return worker_.valid();
  }
  void Clear() override {
    stop_ = true;
    worker_.get();
  }

 private:
  std::atomic<bool> stop_{false};
  std::future<void> worker_;
};
CYBER_REGISTER_COMPONENT(Recorder)

void ResetCounts() {
  g_served = 0;
  g_answered = 0;
  g_paces = 0;
  g_flushed = 0;
}

using SteadyClock = std::chrono::steady_clock;

absl::Duration WallSince(SteadyClock::time_point start) {
  return absl::FromChrono(SteadyClock::now() - start);
}

TEST_F(GraphTest, StoppingAComponentWhoseCallbackSleepsRunsAtSimulationSpeed) {
  ResetCounts();
  ASSERT_TRUE(Launch().ok());
  // The request was made at the start; its callback sleeps until 250 ms.
  graph().RunFor(absl::Milliseconds(50));
  ASSERT_EQ(g_served, 0);
  const int paces_before = g_paces;
  EXPECT_GE(paces_before, 49);

  const SteadyClock::time_point wall_start = SteadyClock::now();
  ASSERT_TRUE(graph().StopComponent("map_server").ok());
  const absl::Duration wall = WallSince(wall_start);
  AINFO << "StopComponent(\"map_server\") took " << graph().Elapsed() - absl::Milliseconds(50)
        << " of simulated time, " << wall << " of wall time";

  // The stop waited for the callback, which ended at 250 ms of simulated
  // time, while the control loop ran on at 1 kHz.
  EXPECT_EQ(g_served, 1);
  EXPECT_GE(graph().Elapsed(), kMapWork);
  EXPECT_LT(graph().Elapsed(), kMapWork + absl::Milliseconds(20));
  EXPECT_GE(g_paces - paces_before, 190);
  EXPECT_LT(wall, absl::Seconds(20));

  // The rest of the graph runs on.
  const int paces_after_stop = g_paces;
  graph().RunFor(absl::Milliseconds(10));
  EXPECT_GE(g_paces - paces_after_stop, 9);
}

TEST_F(GraphTest, StoppingAComponentThatWaitsOnAFutureRunsAtSimulationSpeed) {
  ResetCounts();
  ASSERT_TRUE(Launch().ok());
  graph().RunFor(absl::Milliseconds(50));
  const SteadyClock::time_point wall_start = SteadyClock::now();
  ASSERT_TRUE(graph().StopComponent("recorder").ok());
  const absl::Duration wall = WallSince(wall_start);
  const absl::Duration took = graph().Elapsed() - absl::Milliseconds(50);
  AINFO << "StopComponent(\"recorder\") took " << took << " of simulated time, " << wall
        << " of wall time";
  EXPECT_EQ(g_flushed, kFlushSteps);
  EXPECT_GE(took, kFlushSteps * kFlushStep);
  EXPECT_LT(took, kFlushSteps * kFlushStep + absl::Milliseconds(20));
  EXPECT_LT(wall, absl::Seconds(20));
}

TEST_F(GraphTest, AGraphsStopWithTheFastTimerStoppedLastRunsAtSimulationSpeed) {
  // The graph's Stop() goes in reverse file order: the recorder (whose
  // flush takes 200 ms), the planner, the map server (whose callback sleeps
  // until 250 ms), and the 1 kHz loop last.
  ResetCounts();
  ASSERT_TRUE(Launch().ok());
  graph().RunFor(absl::Milliseconds(10));
  const SteadyClock::time_point wall_start = SteadyClock::now();
  graph().Stop();
  const absl::Duration wall = WallSince(wall_start);
  AINFO << "Stop() ended at " << graph().Elapsed() << " of simulated time after "
        << wall << " of wall time";
  EXPECT_EQ(g_flushed, kFlushSteps);
  EXPECT_EQ(g_served, 1);
  EXPECT_GE(graph().Elapsed(), kMapWork);
  EXPECT_LT(graph().Elapsed(), kMapWork + absl::Milliseconds(20));
  EXPECT_LT(wall, absl::Seconds(20));
}

// A graph test with options of its own: a stop may let at most 100 ms of
// simulated time pass while no component finishes its shutdown.
class ShortStopLimitTest : public GraphTest {
 protected:
  ShortStopLimitTest() : GraphTest(Options()) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
  static SimulatedGraph::Options Options() {
    SimulatedGraph::Options o;
    o.stop_time_limit = absl::Milliseconds(100);
    return o;
  }
};

TEST_F(ShortStopLimitTest, AStopLongerThanTheLimitIsReported) {
  EXPECT_DEATH(
      {
        if (!Launch().ok()) std::exit(1);
        graph().RunFor(absl::Milliseconds(50));
        graph().StopComponent("map_server").IgnoreError();  // 200 ms to go
        std::exit(0);
      },
      "simulated graph \"sim\": stuck: StopComponent\\(\\) has let 100ms of simulated time "
      "pass \\(SimulatedGraph::Options::stop_time_limit\\) while no component finished its "
      "shutdown at 150ms of simulated time\n"
      "simulated graph \"sim\": components not stopped: \"map_server\" \\(Shutdown\\(\\) in "
      "progress\\)\n");
}

}  // namespace
}  // namespace cyber
