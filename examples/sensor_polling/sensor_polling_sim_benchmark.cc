// How fast a graph runs on simulated time: sensor_polling.dag for 60
// simulated seconds (6,000 IMU, 600 lidar and 60 health calls, 6,000 fusion
// deliveries), from launch to stop, per iteration. The figure README quotes:
//
//   bazel run --config=opt //examples/sensor_polling:sensor_polling_sim_benchmark
//
// Counters: wall seconds per run, speed-up over real time, calls per
// wall-clock second; a run whose counts are not exact fails the benchmark.

#include <string>

#include "benchmark/benchmark.h"
#include "cyber/simulation/simulated_graph.h"
#include "examples/sensor_polling/sensor_components.h"
#include "glog/logging.h"

namespace sensor_polling {
namespace {

std::string DagPath() {
  // bazel run: the runfiles tree is the working directory.
  return "examples/sensor_polling/sensor_polling.dag";
}

void BM_SensorPolling60SimulatedSeconds(benchmark::State& state) {
  const absl::Duration simulated = absl::Seconds(60);
  uint64_t calls = 0;
  for (auto _ : state) {
    cyber::SimulatedGraph graph;
    if (!graph.Launch({DagPath()}).ok()) {
      state.SkipWithError("launch failed (run with bazel run from the workspace)");
      return;
    }
    graph.RunFor(simulated);
    graph.Stop();
    const auto imu = graph.StatsOf("imu");
    const auto lidar = graph.StatsOf("lidar");
    const auto health = graph.StatsOf("health");
    const auto fusion = graph.StatsOf("fusion");
    if (imu->procs != 6000 || lidar->procs != 600 || health->procs != 60 ||
        fusion->procs != 6000) {
      state.SkipWithError("counts are not exact");
      return;
    }
    calls += imu->procs + lidar->procs + health->procs + fusion->procs;
  }
  const double runs = static_cast<double>(state.iterations());
  state.counters["sim_s_per_run"] = absl::ToDoubleSeconds(simulated);
  state.counters["speedup_vs_real_time"] = benchmark::Counter(
      absl::ToDoubleSeconds(simulated) * runs, benchmark::Counter::kIsRate);
  state.counters["calls_per_s"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SensorPolling60SimulatedSeconds)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sensor_polling

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = 2;  // the components log at INFO; keep the table readable
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
