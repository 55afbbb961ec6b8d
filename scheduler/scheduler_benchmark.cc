// Costs of the coroutine scheduler, each next to the baseline it has to be
// judged against, all in one binary and one run. These are the figures the
// README quotes.
//
//   bazel run --config=opt //scheduler:scheduler_benchmark
//
// What it measures, and why each baseline:
//
//   BM_BoostFiber_RoundTrip
//   BM_CRoutine_RoundTrip
//       ns per resume + yield round trip (two stack switches). The first is a
//       bare boost::context::fiber that yields straight back, the floor any
//       stackful coroutine on Boost.Context pays. The second is the same
//       round trip through CRoutine::Resume() and CRoutine::Yield(), on a
//       pooled ExecutionContext, with a do-nothing Host so no scheduler queue
//       or lock is involved: the difference is what CRoutine adds around the
//       switch itself (see "Reading the output" for where it goes). Target:
//       CRoutine within 2x of the bare fiber.
//
//   BM_Scheduler_DispatchThroughput
//       tasks/s (items_per_second, wall time) through Scheduler::Dispatch on
//       2 processors: each iteration dispatches a batch of 10,000 empty tasks
//       and waits until every one has run. This includes creating a routine
//       per task, the queue, waking processors and finishing each routine.
//
//   BM_Scheduler_AsyncRoundTrip
//       latency of sched.Async([] { return 1; }).get() seen by the calling
//       thread (dispatch, wake a processor, run, fulfil the future, wake the
//       caller): p50_us, p99_us and mean_us over 20,000 calls.
//
//   BM_TickToCallback/{scheduler,executor,floor}
//       lateness of a periodic 2 ms timer's callback: actual_time minus
//       expected_time from its TimerEvent. A periodic schedule starts on a
//       tick boundary, so this is the tick thread's wake-up lateness plus the
//       hand-off to the dispatcher, up to the callback's first instruction.
//         scheduler: dispatched into the coroutine pool (2 processors);
//         executor:  dispatched to timer::CallbackExecutor, the thread-pool
//                    dispatcher the scheduler replaces;
//         floor:     no timer at all: a bare thread sleeping with
//                    SteadyClock::SleepUntil (clock_nanosleep, TIMER_ABSTIME)
//                    to start + k * 2 ms, recording now - deadline. No
//                    dispatcher can beat the kernel's own wake-up lateness,
//                    so this is what the other two are compared with.
//       Each variant records 1,000 samples (2 s) after 25 warm-up periods,
//       and reports p50_us, p99_us and max_us. The scheduler variant also
//       measures its own floor (floor_*): a sleeper thread runs through the
//       same 2 s, its deadlines half a period between the ticks so it never
//       competes with the tick thread or the callback for a CPU, and
//       added_p50_us = p50(scheduler) - p50(its floor). Measured at the same
//       time, the two see the same machine noise; a floor measured in
//       another 2 s window can differ from it by tens of microseconds on a
//       busy or virtualized machine, more than the difference sought.
//       Target: the pool adds at most 10 us at p50. The timer rows also
//       report `overruns` (the timer's own count, warm-up included): runs
//       that ended after the next expected time. A 2 ms timer that overruns
//       can fall a whole period behind and stay there (its late call is armed
//       for a tick already processed, which the wheel moves to the next
//       tick), so a p99 near 2 ms comes with a non-zero count.
//
// Reading the output. The bare fiber loop switches with no function call
// between the switches. Any call depth around a switch (Resume, Enter,
// SwitchOut, Yield) costs roughly one mispredicted return per level after
// every switch, because a stack switch leaves the CPU's return-address
// predictor describing the other stack. So BM_CRoutine_RoundTrip minus
// BM_BoostFiber_RoundTrip is mostly call depth, not locks.
// Percentiles come from LatencyHistogram, which reports a bucket's upper
// bound (at most 12.5% above the true value; about 4 us wide around 50 us),
// so added_p50_us moves in bucket-sized steps; added_p50_exact_us is the
// same difference of exact medians of the raw samples. The latency rows run
// one iteration each, so their Time column is just the length of the
// measurement. Every benchmark checks that its work really happened (yields
// counted, tasks run, samples collected) and reports an error instead of a
// figure otherwise.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "boost/context/fiber.hpp"
#include "cyber/time/instant.h"
#include "cyber/time/steady_clock.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/execution_context.h"
#include "scheduler/scheduler.h"
#include "timer/callback_executor.h"
#include "timer/latency_histogram.h"
#include "timer/timer_system.h"
#include "timer/timer.h"
#include "timer/timer_options.h"

namespace cyber {
namespace scheduler {
namespace {

// Processors of the scheduler under test (the machine may have no more).
constexpr int kProcessors = 2;
// Stack size and cached contexts of the round-trip benchmark's own pool.
constexpr size_t kRoundTripStackSize = size_t{256} << 10;
constexpr size_t kRoundTripCachedContexts = 4;
// Tasks dispatched per iteration of the throughput benchmark.
constexpr int kDispatchBatch = 10'000;
// Async calls timed by the round-trip latency benchmark.
constexpr int kAsyncCalls = 20'000;
// Tick-to-callback: the timer's period (the wheel's resolution), the periods
// ignored at the start (first stack, first wake-ups), and the periods
// recorded after them.
constexpr absl::Duration kTimerPeriod = absl::Milliseconds(2);
constexpr int kWarmupPeriods = 25;
constexpr int kRecordedPeriods = 1'000;
// How long a latency measurement may take before it is declared stuck: five
// times its nominal length.
absl::Duration MeasurementTimeout() {
  return kTimerPeriod * (kWarmupPeriods + kRecordedPeriods) * 5;
}

double Micros(absl::Duration d) { return absl::ToDoubleMicroseconds(d); }

Scheduler::Options BenchSchedulerOptions() {
  Scheduler::Options options;
  options.name = "bench";
  options.config = DefaultSchedulerConfig(kProcessors);
  return options;
}

// --- Context switch ---------------------------------------------------------

void BM_BoostFiber_RoundTrip(benchmark::State& state) {
  namespace ctx = boost::context;
  bool stop = false;
  uint64_t entries = 0;  // times the fiber ran after a resume
  ctx::fiber fiber([&stop, &entries](ctx::fiber&& caller) {
    while (!stop) {
      ++entries;
      caller = std::move(caller).resume();
    }
    return std::move(caller);
  });
  for (auto _ : state) {
    fiber = std::move(fiber).resume();
  }
  // Let the fiber return, so it ends without a forced unwind.
  stop = true;
  fiber = std::move(fiber).resume();
  if (fiber || entries != static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("the fiber did not run once per resume, or not end");
  }
}

// The least a CRoutine needs: a context pool, nothing else. Nothing is ever
// queued (MakeReady is only called for woken or yielded-and-requeued
// routines, and here the benchmark itself resumes the routine).
class BareHost final : public CRoutine::Host {
 public:
  BareHost() : CRoutine::Host("round_trip") {}
  void MakeReady(std::shared_ptr<CRoutine>) override {}
  ContextPool* context_pool() override { return &contexts_; }

 private:
  ContextPool contexts_{kRoundTripStackSize, kRoundTripCachedContexts};
};

void BM_CRoutine_RoundTrip(benchmark::State& state) {
  BareHost host;  // outlives the routine and its context
  uint64_t entries = 0;  // times the body ran after a resume
  auto routine = std::make_shared<CRoutine>(
      "round_trip",
      [&entries] {
        while (true) {
          ++entries;
          CRoutine::Yield();
        }
      },
      /*priority=*/0, /*processor=*/-1, &host);
  uint64_t not_ready = 0;
  for (auto _ : state) {
    if (routine->Resume() != CRoutine::State::kReady) ++not_ready;
  }
  // Yield() throws RoutineCancelled at the next resume: the body unwinds and
  // the routine finishes, returning its context to the pool.
  routine->Cancel();
  const CRoutine::State last = routine->Resume();
  if (not_ready != 0 || last != CRoutine::State::kFinished ||
      entries != static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("the routine did not yield once per resume or end");
  }
}

// --- Dispatch throughput ----------------------------------------------------

void BM_Scheduler_DispatchThroughput(benchmark::State& state) {
  std::atomic<uint64_t> ran{0};  // declared first: outlives every task
  Scheduler sched(BenchSchedulerOptions());
  uint64_t dispatched = 0;
  uint64_t batches = 0;
  for (auto _ : state) {
    ++batches;
    for (int i = 0; i < kDispatchBatch; ++i) {
      if (!sched.Dispatch(
              [&ran] { ran.fetch_add(1, std::memory_order_relaxed); })) {
        break;
      }
      ++dispatched;
    }
    if (dispatched != batches * kDispatchBatch) {
      state.SkipWithError("Scheduler::Dispatch refused a task");
      break;
    }
    while (ran.load(std::memory_order_relaxed) < dispatched) {
      std::this_thread::yield();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(ran.load()));
}

// --- Async round trip -------------------------------------------------------

void BM_Scheduler_AsyncRoundTrip(benchmark::State& state) {
  Scheduler sched(BenchSchedulerOptions());
  timer::LatencyHistogram latency;
  absl::Duration total;
  int64_t sum = 0;  // of the results: proves every call ran
  try {
    for (auto _ : state) {
      const auto start = std::chrono::steady_clock::now();
      sum += sched.Async([] { return 1; }).get();
      const absl::Duration took =
          absl::FromChrono(std::chrono::steady_clock::now() - start);
      latency.Record(took);
      total += took;
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (sum != state.iterations() || latency.count() == 0) {
    state.SkipWithError("an Async call did not return its result");
    return;
  }
  state.counters["p50_us"] = Micros(latency.Percentile(0.5));
  state.counters["p99_us"] = Micros(latency.Percentile(0.99));
  state.counters["mean_us"] =
      Micros(total / static_cast<int64_t>(latency.count()));
}

// --- Tick-to-callback latency -----------------------------------------------

// Lateness samples: the histogram the figures come from, and the raw values
// (storage reserved up front) for exact medians.
class LatencySamples {
 public:
  LatencySamples() { raw_.reserve(kRecordedPeriods); }

  void Record(absl::Duration late) {
    histogram_.Record(late);
    raw_.push_back(late);
  }
  size_t count() const { return raw_.size(); }
  const timer::LatencyHistogram& histogram() const { return histogram_; }
  absl::Duration ExactMedian() const {
    std::vector<absl::Duration> sorted = raw_;
    std::sort(sorted.begin(), sorted.end());
    return sorted.empty() ? absl::ZeroDuration() : sorted[sorted.size() / 2];
  }

 private:
  timer::LatencyHistogram histogram_;
  std::vector<absl::Duration> raw_;
};

// Runs a periodic kTimerPeriod timer on `driver` until kRecordedPeriods
// callbacks after the warm-up have recorded their lateness into `samples`,
// then stops it and stores its statistics in `*stats`. Returns an empty
// string on success, else what went wrong.
//
// The callback touches `samples` without a lock: a timer's callback never
// runs concurrently with itself (successive runs are ordered by the timer's
// own lock), and Stop() returns only when no run is in progress.
std::string MeasureTimerLateness(timer::TimerSystem* driver,
                                 LatencySamples* samples,
                                 TimerStatistics* stats) {
  int seen = 0;
  std::promise<void> recorded_all;
  std::future<void> done = recorded_all.get_future();

  TimerOptions options;
  options.name = "tick_to_callback";
  options.period = kTimerPeriod;
  options.event_callback = [samples, &seen,
                            &recorded_all](const TimerEvent& event) {
    ++seen;
    if (seen <= kWarmupPeriods || samples->count() >= kRecordedPeriods) return;
    samples->Record(event.actual_time - event.expected_time);
    if (samples->count() == kRecordedPeriods) recorded_all.set_value();
  };
  Timer timer(std::move(options), driver);  // destroyed before the locals
  const absl::Status scheduled = timer.Schedule();
  if (!scheduled.ok()) return std::string(scheduled.message());
  const bool finished =
      done.wait_for(absl::ToChronoNanoseconds(MeasurementTimeout())) ==
      std::future_status::ready;
  timer.Stop();
  *stats = timer.GetStatistics();
  if (!finished) return "the timer's callbacks stopped arriving";
  if (stats->dispatch_refusals != 0) {
    return "the dispatcher refused a timer callback";
  }
  return "";
}

// The floor: the calling thread sleeps to absolute deadlines on the steady
// clock, `first` + k * kTimerPeriod, recording how late each wake-up is.
void SleepToDeadlines(Instant first, LatencySamples* samples) {
  SteadyClock* const clock = SteadyClock::Get();
  for (int k = 0; k < kWarmupPeriods + kRecordedPeriods; ++k) {
    const Instant deadline = first + kTimerPeriod * k;
    clock->SleepUntil(deadline);
    const absl::Duration late = clock->Now() - deadline;
    if (k >= kWarmupPeriods) samples->Record(late);
  }
}

// The first instant at least a period from now that lies half a period after
// one of `driver`'s ticks: a sleeper woken there does not compete with the
// tick thread and the callback for a CPU, yet lives through the same 2 s of
// machine noise as they do.
Instant HalfwayBetweenTicks(const timer::TimerSystem& driver) {
  const Instant phase = driver.wheel().epoch() + kTimerPeriod / 2;
  const absl::Duration ahead =
      SteadyClock::Get()->Now() + kTimerPeriod - phase;
  absl::Duration remainder;
  const int64_t periods = absl::IDivDuration(ahead, kTimerPeriod, &remainder);
  return phase + kTimerPeriod * (periods + 1);
}

void ReportLateness(benchmark::State& state, const std::string& prefix,
                    const LatencySamples& samples) {
  const timer::LatencyHistogram& h = samples.histogram();
  state.counters[prefix + "p50_us"] = Micros(h.Percentile(0.5));
  state.counters[prefix + "p99_us"] = Micros(h.Percentile(0.99));
  state.counters[prefix + "max_us"] = Micros(h.max());
}

enum class Variant { kScheduler, kExecutor, kFloor };

void BM_TickToCallback(benchmark::State& state, Variant variant) {
  LatencySamples measured;
  LatencySamples sleep_floor;  // the scheduler variant's same-run floor
  TimerStatistics timer_stats;
  std::string error;
  for (auto _ : state) {
    switch (variant) {
      case Variant::kScheduler: {
        Scheduler sched(BenchSchedulerOptions());
        // Destroyed (and its timer stopped) before the scheduler.
        timer::TimerSystem driver(SteadyClock::Get(), &sched);
        // Wired as cyber::Init wires the process scheduler: its idle
        // processors anticipate this wheel's events (the default).
        sched.SetTimerSystem(&driver);
        std::thread sleeper(SleepToDeadlines, HalfwayBetweenTicks(driver),
                            &sleep_floor);
        error = MeasureTimerLateness(&driver, &measured, &timer_stats);
        sleeper.join();
        break;
      }
      case Variant::kExecutor: {
        timer::CallbackExecutor executor;
        timer::TimerSystem driver(SteadyClock::Get(), &executor);
        error = MeasureTimerLateness(&driver, &measured, &timer_stats);
        break;
      }
      case Variant::kFloor: {
        std::thread sleeper(SleepToDeadlines,
                            SteadyClock::Get()->Now() + kTimerPeriod,
                            &measured);
        sleeper.join();
        break;
      }
    }
  }
  if (!error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  if (measured.count() != kRecordedPeriods ||
      (variant == Variant::kScheduler &&
       sleep_floor.count() != kRecordedPeriods)) {
    state.SkipWithError("a latency measurement is missing samples");
    return;
  }
  ReportLateness(state, "", measured);
  if (variant != Variant::kFloor) {
    state.counters["overruns"] = static_cast<double>(timer_stats.overruns);
  }
  if (variant == Variant::kScheduler) {
    ReportLateness(state, "floor_", sleep_floor);
    state.counters["added_p50_us"] =
        Micros(measured.histogram().Percentile(0.5) -
               sleep_floor.histogram().Percentile(0.5));
    state.counters["added_p50_exact_us"] =
        Micros(measured.ExactMedian() - sleep_floor.ExactMedian());
  }
}

// --- Registration -----------------------------------------------------------

BENCHMARK(BM_BoostFiber_RoundTrip);
BENCHMARK(BM_CRoutine_RoundTrip);
BENCHMARK(BM_Scheduler_DispatchThroughput)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scheduler_AsyncRoundTrip)
    ->Iterations(kAsyncCalls)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
void OneLatencyRun(benchmark::internal::Benchmark* b) {
  b->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK_CAPTURE(BM_TickToCallback, scheduler, Variant::kScheduler)
    ->Apply(OneLatencyRun);
BENCHMARK_CAPTURE(BM_TickToCallback, executor, Variant::kExecutor)
    ->Apply(OneLatencyRun);
BENCHMARK_CAPTURE(BM_TickToCallback, floor, Variant::kFloor)
    ->Apply(OneLatencyRun);

}  // namespace
}  // namespace scheduler
}  // namespace cyber

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
