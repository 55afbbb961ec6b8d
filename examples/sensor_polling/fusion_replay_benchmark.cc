// How fast a recording replays into a graph test: 60 s of the pollers'
// IMU (100 Hz) and lidar (10 Hz), written like cyber_recorder writes them
// (pollers_recording_60s, a genrule), fed into fusion.dag alone on
// simulated time, from loading the recording to the end, per iteration.
// The target is 60 s of recording in at most 1 s of wall time.
//
//   bazel run --config=opt //examples/sensor_polling:fusion_replay_benchmark
//
// Counters: wall seconds per 60 s replay, speed-up over real time; a run
// whose counts are not exact fails the benchmark.

#include <string>

#include "benchmark/benchmark.h"
#include "cyber/simulation/simulated_graph.h"
#include "examples/sensor_polling/sensor_components.h"
#include "glog/logging.h"

namespace sensor_polling {
namespace {

void BM_Replay60SecondsIntoFusion(benchmark::State& state) {
  const absl::Duration recorded = absl::Seconds(60);
  for (auto _ : state) {
    cyber::SimulatedGraph::Options o;
    // bazel run: the runfiles tree is the working directory.
    o.recording.path = "examples/sensor_polling/pollers_recording_60s.mcap";
    o.recording.channels = {kImuChannel, kLidarChannel};
    cyber::SimulatedGraph graph(o);
    if (!graph.Launch({"examples/sensor_polling/fusion.dag"}).ok()) {
      state.SkipWithError("launch failed (run with bazel run from the workspace)");
      return;
    }
    graph.RunFor(recorded);
    graph.Stop();
    if (graph.StatsOf("fusion")->procs != 6000) {
      state.SkipWithError("fusion did not run once per recorded IMU reading");
      return;
    }
  }
  state.counters["recorded_s_per_run"] = absl::ToDoubleSeconds(recorded);
  state.counters["speedup_vs_real_time"] =
      benchmark::Counter(absl::ToDoubleSeconds(recorded) * state.iterations(),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Replay60SecondsIntoFusion)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sensor_polling

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
