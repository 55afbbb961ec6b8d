// Dispatch throughput: how many empty tasks per second each executor runs on
// 2 worker threads, side by side in one binary and one run:
//
//   bash tools/setup_peers.sh             (once: libboost-fiber-dev)
//   bazel build --config=opt //tests/peers:dispatch_peer_benchmark
//   bazel-bin/tests/peers/dispatch_peer_benchmark
//       [--benchmark_repetitions=3] [--table_out=dispatch_peers.md]   (one line)
//
// Why it exists. scheduler_benchmark's BM_Scheduler_DispatchThroughput gives
// one number, tasks/s through Scheduler::Dispatch, with nothing to judge it
// against: a figure measured on another day, machine or load says little.
// Here the same workload runs in the same process and minutes through our
// Scheduler (one Dispatch at a time, and in a DispatchBatch, the hand-over
// the tick thread uses), through whole cyber::Timer callbacks (the path a
// due timer takes), and through two executors people would otherwise use:
// boost::asio::post on an io_context and Boost.Fiber's shared_work. The
// table at the end puts each one's tasks/s next to asio::post's from the
// same run.
//
// Like with like means, for every variant:
//   * 2 worker threads run the tasks (the Scheduler's 2 processors, the 2
//     threads in io_context::run(), the 2 fiber threads); the benchmark
//     thread only submits and waits, it never runs a task;
//   * the same empty task: one relaxed fetch_add on a shared counter (its
//     own cache line), a closure holding one pointer;
//   * the same batch: submit 10,000 tasks, then wait until the counter says
//     all 10,000 ran; items_per_second = tasks / wall time (UseRealTime),
//     time_per_task is its inverse (in seconds with an SI prefix: 250n is
//     250 ns);
//   * the same wait on the benchmark thread: spin a little on the counter
//     (pause instruction), then std::this_thread::yield() until it is
//     reached (no futex, no condition variable; see AwaitCount);
//   * one untimed warm-up batch before the timed ones (first stacks, first
//     allocations, threads started), and a fresh executor per benchmark
//     run, torn down at its end (Scheduler::Shutdown, io_context::stop and
//     join, the fiber threads told to stop and joined).
//
// The variants:
//   scheduler        cyber::scheduler::Scheduler, 2 processors (one group,
//                    DefaultSchedulerConfig(2), as scheduler_benchmark), each
//                    task one Dispatch(task, 0): a routine per task.
//   scheduler_batch  the same, the 10,000 Dispatch calls inside one
//                    cyber::timer::DispatchBatch scope: the Scheduler may hold
//                    them back and queue them together at its end. Without
//                    batching in the Scheduler it measures the same as
//                    `scheduler`.
//   timer_callbacks  10,000 oneshot cyber::Timer objects on a TimerSystem
//                    without a tick thread (Options::run_thread false) on a
//                    SimulatedClock, dispatching into the same kind of
//                    Scheduler. Per batch, untimed: every timer Schedule()d
//                    with the same 2 ms delay at the same simulated instant
//                    (so all are due on one tick), and the clock moved past
//                    that tick. Timed: driver.Step(clock.Now()) on the
//                    benchmark thread (the tick thread's own loop body: all
//                    10,000 expiries handed to the Scheduler) and the wait.
//                    What a timer adds over a bare Dispatch: the wheel's
//                    expiry, the timer's state machine and statistics.
//   asio_post        boost::asio::post(io_context, task); the io_context is
//                    run by 2 threads and kept alive between batches by a
//                    work guard. The reference of every ratio.
//   fiber_shared_work
//                    boost::fibers::fiber(task).detach() from the benchmark
//                    thread; 2 threads run fibers with
//                    boost::fibers::algo::shared_work (one global queue). To
//                    put its fibers in that queue, the benchmark thread uses
//                    shared_work too; it never suspends, so it never runs one.
//                    Each fiber gets Boost's default stack (fixedsize_stack,
//                    allocated per fiber; our Scheduler pools its stacks).
//                    Boost's pooled_fixedsize_stack is no option here: its
//                    pool is not thread-safe, and a fiber made on this thread
//                    ends, and frees its stack, on a worker.
//
// Differences that remain, to keep in mind when reading the table:
//   * shared_work with its default (suspend = false) never sleeps: an idle
//     fiber thread polls the global queue, so its workers are always awake
//     (no wake-up cost), but on a 2-core machine they compete with the
//     benchmark thread for the cores while it submits and waits. The
//     Scheduler's processors and asio's threads sleep when idle and are
//     woken by the submitter.
//   * Only timer_callbacks pays for anything beyond the hand-over; the
//     others are bare executors.
//
// The whole binary takes about 15 s on a 2-core machine, 40 s with
// --benchmark_repetitions=3 (each benchmark runs at least kMinTime of timed
// batches, plus Google Benchmark's iteration-count estimates and the timer
// variant's untimed arming). The table shows each variant's median over the
// repetitions and their spread; with one run a noisy variant may land
// anywhere in its range, so compare rows from runs with repetitions.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/fiber/algo/shared_work.hpp>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "cyber/common/cpu_relax.h"
#include "cyber/time/instant.h"
#include "cyber/time/simulated_clock.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/scheduler.h"
#include "tests/peers/benchmark_io.h"
#include "timer/dispatcher.h"
#include "timer/timer_system.h"
#include "timer/timer.h"
#include "timer/timer_options.h"

namespace cyber {
namespace peers {
namespace {

// Worker threads of every executor.
constexpr int kWorkers = 2;
// Tasks submitted per iteration (one batch), then waited for.
constexpr int kBatch = 10'000;
// Timed seconds per benchmark, at least.
constexpr double kMinTime = 1.0;
// The benchmark thread polls the counter this often with a pause between,
// then yields its core between polls.
constexpr int kSpinsBeforeYield = 200;
// A batch that has not finished after this long never will (a refused or
// lost task): the benchmark reports an error instead of hanging.
constexpr absl::Duration kBatchTimeout = absl::Seconds(20);
// The timers' oneshot delay, and how far the simulated clock moves after
// arming them: one tick beyond it, so every timer is due.
constexpr absl::Duration kTimerDelay = timer::kTimerResolution;
const absl::Duration kClockStep = kTimerDelay + timer::kTimerResolution;

// Tasks that ran, counted by the tasks themselves. Alone on its cache line,
// so that only the tasks and the waiting benchmark thread touch it.
struct alignas(64) RunCounter {
  std::atomic<uint64_t> ran{0};
};

// The task every executor runs: one relaxed increment, nothing else.
struct EmptyTask {
  RunCounter* counter;
  void operator()() const {
    counter->ran.fetch_add(1, std::memory_order_relaxed);
  }
};

// Waits on the calling thread until `counter` reaches `target`: spins
// kSpinsBeforeYield polls, then yields between polls. False after
// kBatchTimeout.
bool AwaitCount(const RunCounter& counter, uint64_t target) {
  for (int spin = 0; spin < kSpinsBeforeYield; ++spin) {
    if (counter.ran.load(std::memory_order_acquire) >= target) return true;
    CpuRelax();
  }
  const auto give_up = std::chrono::steady_clock::now() +
                       absl::ToChronoNanoseconds(kBatchTimeout);
  for (uint32_t polls = 1;; ++polls) {
    if (counter.ran.load(std::memory_order_acquire) >= target) return true;
    std::this_thread::yield();
    if (polls % 1024 == 0 && std::chrono::steady_clock::now() > give_up) {
      return false;
    }
  }
}

// The benchmark loop every variant shares. `submit(timed)` hands one batch of
// kBatch EmptyTasks on `counter` to the executor and returns "" or what went
// wrong; `timed` is the State during timed iterations (so it can pause the
// clock around untimed set-up) and null for the warm-up batch. Then waits for
// the batch. Reports items/s and time per task over the timed batches.
template <typename Submit>
void RunBatches(benchmark::State& state, const RunCounter& counter,
                Submit submit) {
  uint64_t expected = counter.ran.load();
  auto one_batch = [&](benchmark::State* timed) {
    const std::string error = submit(timed);
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      return false;
    }
    expected += kBatch;
    if (!AwaitCount(counter, expected)) {
      state.SkipWithError("a batch did not finish: tasks were lost");
      return false;
    }
    return true;
  };
  if (!one_batch(nullptr)) return;  // warm-up
  for (auto _ : state) {
    if (!one_batch(&state)) break;
  }
  const double tasks = static_cast<double>(state.iterations()) * kBatch;
  state.SetItemsProcessed(static_cast<int64_t>(tasks));
  state.counters["time_per_task"] = benchmark::Counter(
      tasks, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

scheduler::Scheduler::Options SchedulerOptions() {
  scheduler::Scheduler::Options options;
  options.name = "dispatch_peer";
  options.config = scheduler::DefaultSchedulerConfig(kWorkers);
  return options;
}

// --- Variants ---------------------------------------------------------------

void BM_Scheduler(benchmark::State& state, bool batched) {
  RunCounter counter;  // outlives the scheduler and every task
  scheduler::Scheduler sched(SchedulerOptions());
  RunBatches(state, counter, [&](benchmark::State*) -> std::string {
    auto dispatch_all = [&] {
      for (int i = 0; i < kBatch; ++i) {
        if (!sched.Dispatch(EmptyTask{&counter}, 0)) return false;
      }
      return true;
    };
    bool accepted;
    if (batched) {
      timer::DispatchBatch batch(&sched);
      accepted = dispatch_all();
    } else {
      accepted = dispatch_all();
    }
    return accepted ? "" : "Scheduler::Dispatch refused a task";
  });
  sched.Shutdown();
}

void BM_SchedulerDispatch(benchmark::State& state) {
  BM_Scheduler(state, /*batched=*/false);
}
void BM_SchedulerDispatchBatch(benchmark::State& state) {
  BM_Scheduler(state, /*batched=*/true);
}

void BM_TimerCallbacks(benchmark::State& state) {
  RunCounter counter;
  scheduler::Scheduler sched(SchedulerOptions());
  SimulatedClock clock(Instant() + absl::Hours(1));
  timer::TimerSystem::Options driver_options;
  driver_options.name = "peer-tick";
  driver_options.run_thread = false;
  timer::TimerSystem driver(&clock, &sched, driver_options);
  std::vector<std::unique_ptr<Timer>> timers;
  timers.reserve(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    TimerOptions options;
    options.name = "peer" + std::to_string(i);
    options.period = kTimerDelay;
    options.oneshot = true;
    options.priority = 0;  // as the bare Dispatch(task, 0)
    options.callback = EmptyTask{&counter};
    timers.push_back(std::make_unique<Timer>(std::move(options), &driver));
  }
  uint64_t expired_before = driver.stats().expired;
  RunBatches(state, counter, [&](benchmark::State* timed) -> std::string {
    if (timed != nullptr) timed->PauseTiming();
    const Instant armed_at = clock.Now();
    for (const std::unique_ptr<Timer>& t : timers) {
      const absl::Status scheduled = t->Schedule();
      if (!scheduled.ok()) return std::string(scheduled.message());
    }
    clock.AdvanceTo(armed_at + kClockStep);
    if (timed != nullptr) timed->ResumeTiming();
    driver.Step(clock.Now());
    // Untimed (Step has returned; the callbacks may still be running):
    // every timer must have expired in this one Step.
    const uint64_t expired = driver.stats().expired;
    if (expired - expired_before != kBatch) {
      return "a Step did not expire every timer of the batch";
    }
    expired_before = expired;
    return "";
  });
  uint64_t refusals = 0;
  for (const std::unique_ptr<Timer>& t : timers) {
    refusals += t->GetStatistics().dispatch_refusals;
  }
  if (refusals != 0) state.SkipWithError("the Scheduler refused a callback");
  timers.clear();  // every timer stopped before the driver goes
  driver.Shutdown();
  sched.Shutdown();
}

void BM_AsioPost(benchmark::State& state) {
  RunCounter counter;
  boost::asio::io_context io(kWorkers);
  auto keep_running = boost::asio::make_work_guard(io);
  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkers; ++i) workers.emplace_back([&io] { io.run(); });
  RunBatches(state, counter, [&](benchmark::State*) -> std::string {
    for (int i = 0; i < kBatch; ++i) boost::asio::post(io, EmptyTask{&counter});
    return "";
  });
  keep_running.reset();
  io.stop();
  for (std::thread& w : workers) w.join();
}

// kWorkers threads running fibers from shared_work's global queue until
// told to stop.
class FiberThreads {
 public:
  FiberThreads() {
    for (int i = 0; i < kWorkers; ++i) {
      threads_.emplace_back([this] {
        boost::fibers::use_scheduling_algorithm<
            boost::fibers::algo::shared_work>();
        // The thread's main fiber parks here; the thread's dispatcher runs
        // the shared queue's fibers meanwhile.
        std::unique_lock<boost::fibers::mutex> lock(mu_);
        stop_requested_.wait(lock, [this] { return stop_; });
      });
    }
  }
  ~FiberThreads() {
    {
      std::unique_lock<boost::fibers::mutex> lock(mu_);
      stop_ = true;
    }
    stop_requested_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  FiberThreads(const FiberThreads&) = delete;
  FiberThreads& operator=(const FiberThreads&) = delete;

 private:
  boost::fibers::mutex mu_;
  boost::fibers::condition_variable stop_requested_;
  bool stop_ = false;  // guarded by mu_
  std::vector<std::thread> threads_;
};

void BM_FiberSharedWork(benchmark::State& state) {
  // Fibers launched on this thread go to its scheduling algorithm's queue:
  // with shared_work, the queue all fiber threads share. Set once for the
  // thread (Google Benchmark runs every benchmark on the main thread).
  static const bool kSharesWork = [] {
    boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>();
    return true;
  }();
  (void)kSharesWork;
  // One set of fiber threads for the whole process, never torn down: a
  // detached fiber may still be finishing (its task has counted) when a
  // benchmark run ends, and shared_work's queue is process-wide, so
  // threads that exit between runs took such a fiber's scheduler with them
  // (a rare crash of the next run, seen once in about 40 runs). Left
  // running at exit on purpose.
  static FiberThreads* const threads = new FiberThreads();
  (void)threads;
  static RunCounter counter;  // outlives every fiber, like the threads
  RunBatches(state, counter, [&](benchmark::State*) -> std::string {
    for (int i = 0; i < kBatch; ++i) {
      boost::fibers::fiber(EmptyTask{&counter}).detach();
    }
    return "";
  });
}

// --- Registration and the table ---------------------------------------------

struct Variant {
  const char* name;   // benchmark name, BM_Dispatch/<name>
  const char* label;  // table row
  void (*run)(benchmark::State&);
};

constexpr Variant kVariants[] = {
    {"scheduler", "cyber Scheduler::Dispatch", BM_SchedulerDispatch},
    {"scheduler_batch", "cyber Scheduler::Dispatch in a DispatchBatch",
     BM_SchedulerDispatchBatch},
    {"timer_callbacks", "cyber::Timer callbacks (Step + Scheduler)",
     BM_TimerCallbacks},
    {"asio_post", "boost::asio::post", BM_AsioPost},
    {"fiber_shared_work", "Boost.Fiber shared_work", BM_FiberSharedWork},
};
constexpr const char* kReferenceVariant = "asio_post";

std::string BenchmarkName(const Variant& v) {
  return std::string("BM_Dispatch/") + v.name;
}

void RegisterAll() {
  for (const Variant& v : kVariants) {
    benchmark::RegisterBenchmark(BenchmarkName(v).c_str(), v.run)
        ->MinTime(kMinTime)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

// The console output as usual, and every run's items/s (or its error) kept
// for the table.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  struct Outcome {
    std::vector<double> tasks_per_second;
    std::string error;
  };

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      Outcome& outcome = outcomes_[run.run_name.function_name];
      if (run.error_occurred) {
        outcome.error = run.error_message;
        continue;
      }
      auto it = run.counters.find("items_per_second");
      if (it != run.counters.end()) {
        outcome.tasks_per_second.push_back(it->second.value);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // Median items/s of `name`'s runs; -1 if none succeeded.
  double MedianTasksPerSecond(const std::string& name) const {
    auto it = outcomes_.find(name);
    if (it == outcomes_.end() || it->second.tasks_per_second.empty()) {
      return -1;
    }
    std::vector<double> v = it->second.tasks_per_second;
    std::sort(v.begin(), v.end());
    const size_t mid = v.size() / 2;
    return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  }
  std::string Error(const std::string& name) const {
    auto it = outcomes_.find(name);
    return it == outcomes_.end() ? "not run" : it->second.error;
  }
  size_t Runs(const std::string& name) const {
    auto it = outcomes_.find(name);
    return it == outcomes_.end() ? 0 : it->second.tasks_per_second.size();
  }
  // (max - min) / median of `name`'s items/s; 0 for fewer than two runs.
  double Spread(const std::string& name) const {
    const double median = MedianTasksPerSecond(name);
    if (median <= 0) return 0;
    const std::vector<double>& v = outcomes_.at(name).tasks_per_second;
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return (*hi - *lo) / median;
  }

 private:
  std::map<std::string, Outcome> outcomes_;
};

std::string Table(const CollectingReporter& results) {
  double reference = -1;
  size_t runs = 0;
  for (const Variant& v : kVariants) {
    if (std::string(v.name) == kReferenceVariant) {
      reference = results.MedianTasksPerSecond(BenchmarkName(v));
    }
    runs = std::max(runs, results.Runs(BenchmarkName(v)));
  }
  std::string out =
      "| executor (2 workers, batches of 10,000 empty tasks) | tasks/s | "
      "ns/task | vs asio::post | spread |\n"
      "|---|---:|---:|---:|---:|\n";
  for (const Variant& v : kVariants) {
    const std::string name = BenchmarkName(v);
    const double rate = results.MedianTasksPerSecond(name);
    char row[512];
    if (rate <= 0) {
      const std::string error = results.Error(name);
      std::snprintf(row, sizeof(row), "| %s | %s | | | |\n", v.label,
                    error.empty() ? "not measured" : error.c_str());
      out += row;
      continue;
    }
    char ratio[32] = "";
    if (reference > 0) {
      std::snprintf(ratio, sizeof(ratio), "%.2fx", rate / reference);
    }
    std::snprintf(row, sizeof(row), "| %s | %.0f | %.1f | %s | %.0f%% |\n",
                  v.label, rate, 1e9 / rate, ratio,
                  100 * results.Spread(name));
    out += row;
  }
  char note[2048];
  std::snprintf(
      note, sizeof(note),
      "\nEmpty tasks (one relaxed increment) run by 2 worker threads; per "
      "iteration the benchmark thread submits 10,000 and waits (spin, then "
      "yield) until all ran; wall time. tasks/s is the median of %zu run(s); "
      "ns/task = 1e9 / tasks/s; vs asio::post = tasks/s / asio::post's "
      "tasks/s in the same run (higher is faster); spread = (max - min) / "
      "median of tasks/s over the runs. The timer row includes "
      "the wheel's expiry of 10,000 oneshots (TimerSystem::Step) and the "
      "timers' own bookkeeping. Boost.Fiber's shared_work threads poll "
      "instead of sleeping when idle.\n",
      runs);
  return out + note;
}

}  // namespace
}  // namespace peers
}  // namespace cyber

int main(int argc, char** argv) {
  const std::string table_out =
      cyber::peers::TakeFlag("table_out", &argc, argv);
  cyber::peers::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  cyber::peers::CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  const std::string table = cyber::peers::Table(reporter);
  return cyber::peers::EmitTable("Dispatch peers: empty tasks on 2 threads",
                                 table, table_out)
             ? 0
             : 1;
}
