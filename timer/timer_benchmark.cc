// What a user pays per cyber::Timer: the whole Timer's Start / Stop / re-arm
// and its memory, next to the bare wheel operation underneath in the same
// run (the floor a Timer can approach).
//
//   bazel run --config=opt //timer:timer_benchmark
//
// Workload: N = 2e5 constructed oneshot timers, delays uniform in [10 s,
// 60 s] from a fixed seed (a robot module's request timeouts: armed, nearly
// always cancelled). Rows:
//   BM_Timer_Ops/<system>   ns per Schedule() on a stopped timer (arm),
//                           Stop() on an armed one (cancel), Schedule()
//                           again after the Stop() (re-arm) and Reset() on
//                           an armed one (a new deadline), each over all N
//                           in random order; <system> is `fixed` (a Timer
//                           given a thread-free TimerSystem: no lookup) or
//                           `process` (plain Timer, the process timer
//                           system with its tick thread, as Cyber code uses
//                           it; nothing fires: the delays outlast the run);
//   BM_Timer_ArmCancelThreads/threads:T
//                           T threads each Schedule() then Stop() 1e5 timers
//                           of their own on the process system; items/s
//                           over all threads (ns/op = 1e9 / items_per_second);
//   BM_Wheel_Ops            the same phases on bare TimingWheel entries: the
//                           floor under a Timer's Start/Stop;
//   BM_Timer_Memory         RSS per Timer (VmRSS delta over N, in a fresh
//                           process): constructed, armed, and after every
//                           timer has fired once (simulated time, callbacks
//                           inline), i.e. with default statistics. It
//                           includes the user's own allocation of each
//                           Timer (std::make_unique<Timer>).
// Only the phases are timed (manual timing). Machines are shared: compare
// the Timer rows with the wheel row of the same run.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "timer/testing/simulated_timer_system.h"
#include "timer/timer.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace timer {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr int kTimers = 200000;

std::vector<absl::Duration> Delays() {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> ms(10000, 60000);
  std::vector<absl::Duration> d(kTimers);
  for (auto& x : d) x = absl::Milliseconds(ms(rng));
  return d;
}

// Every timer once: shuffled by `seed`, or in construction order if 0.
std::vector<int> Order(uint64_t seed) {
  std::vector<int> o(kTimers);
  std::iota(o.begin(), o.end(), 0);
  if (seed != 0) std::shuffle(o.begin(), o.end(), std::mt19937_64(seed));
  return o;
}

// The phases' orders: range(0) == 1 shuffles each phase (a module's
// timeouts are answered in any order: every operation touches a cold
// timer), 0 keeps construction order (memory is walked in order, so the
// hardware prefetches the next timer: the best case).
struct Orders {
  explicit Orders(bool shuffled)
      : arm(Order(shuffled ? 1 : 0)),
        cancel(Order(shuffled ? 2 : 0)),
        rearm(Order(shuffled ? 3 : 0)),
        reset(Order(shuffled ? 4 : 0)) {}
  std::vector<int> arm, cancel, rearm, reset;
};

// Times `op(i)` over every i in `order`; returns the elapsed seconds.
template <typename Op>
double TimePhase(const std::vector<int>& order, Op op) {
  const auto t0 = SteadyClock::now();
  for (int i : order) op(i);
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

struct PhaseTotals {
  double arm = 0, cancel = 0, rearm = 0, reset = 0;
  int64_t rounds = 0;
  void Report(benchmark::State& state) const {
    const double n = static_cast<double>(rounds) * kTimers;
    state.counters["arm_ns"] = arm * 1e9 / n;
    state.counters["cancel_ns"] = cancel * 1e9 / n;
    state.counters["rearm_ns"] = rearm * 1e9 / n;
    state.counters["reset_ns"] = reset * 1e9 / n;
  }
};

std::vector<std::unique_ptr<Timer>> MakeTimers(TimerSystem* driver) {
  const std::vector<absl::Duration> delays = Delays();
  std::vector<std::unique_ptr<Timer>> timers;
  timers.reserve(kTimers);
  for (int i = 0; i < kTimers; ++i) {
    TimerOptions o;
    o.name = "timeout";
    o.period = delays[i];
    o.oneshot = true;
    o.callback = [] {};
    timers.push_back(std::make_unique<Timer>(std::move(o), driver));
  }
  return timers;
}

void RunTimerOps(benchmark::State& state, TimerSystem* driver) {
  auto timers = MakeTimers(driver);
  const Orders o(state.range(0) == 1);
  PhaseTotals totals;
  bool ok = true;
  for (auto _ : state) {
    totals.arm += TimePhase(o.arm, [&](int i) { ok &= timers[i]->Schedule().ok(); });
    totals.reset += TimePhase(o.reset, [&](int i) { ok &= timers[i]->Reset().ok(); });
    totals.cancel += TimePhase(o.cancel, [&](int i) { timers[i]->Stop(); });
    totals.rearm += TimePhase(o.rearm, [&](int i) { ok &= timers[i]->Schedule().ok(); });
    for (auto& t : timers) t->Stop();
    ++totals.rounds;
  }
  if (!ok) state.SkipWithError("Schedule() failed");
  totals.Report(state);
}

void BM_Timer_Ops_Fixed(benchmark::State& state) {
  SimulatedTimerSystem sim;
  RunTimerOps(state, &sim.driver());
}
BENCHMARK(BM_Timer_Ops_Fixed)
    ->Name("BM_Timer_Ops/fixed")
    ->ArgName("shuffled")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond);

void BM_Timer_Ops_Process(benchmark::State& state) {
  RunTimerOps(state, nullptr);
}
BENCHMARK(BM_Timer_Ops_Process)
    ->Name("BM_Timer_Ops/process")
    ->ArgName("shuffled")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond);

void BM_Wheel_Ops(benchmark::State& state) {
  TimingWheel wheel(Instant(), kTimerResolution);
  const std::vector<absl::Duration> delays = Delays();
  std::vector<WheelEntry> entries(kTimers);
  std::vector<Tick> ticks(kTimers), later(kTimers);
  for (int i = 0; i < kTimers; ++i) {
    ticks[i] = wheel.DeadlineToTick(Instant() + delays[i]);
    later[i] = ticks[i] + 7;
  }
  const Orders o(state.range(0) == 1);
  PhaseTotals totals;
  for (auto _ : state) {
    totals.arm += TimePhase(o.arm, [&](int i) { wheel.Arm(&entries[i], ticks[i]).IgnoreError(); });
    totals.reset += TimePhase(o.reset, [&](int i) { wheel.Arm(&entries[i], later[i]).IgnoreError(); });
    totals.cancel += TimePhase(o.cancel, [&](int i) { wheel.Cancel(&entries[i]); });
    totals.rearm += TimePhase(o.rearm, [&](int i) { wheel.Arm(&entries[i], ticks[i]).IgnoreError(); });
    for (auto& e : entries) wheel.Cancel(&e);
    ++totals.rounds;
  }
  totals.Report(state);
}
BENCHMARK(BM_Wheel_Ops)->ArgName("shuffled")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// T threads, each arming and then cancelling 1e5 timers of its own on one
// shared timer system (the process's, as Cyber code uses it): ns per
// Schedule() or Stop(), over the operations of all threads. threads:1 is
// the uncontended figure.
void BM_Timer_ArmCancelThreads(benchmark::State& state) {
  constexpr int kPerThread = 100000;
  std::vector<std::unique_ptr<Timer>> timers;
  timers.reserve(kPerThread);
  std::mt19937_64 rng(7 + state.thread_index());
  std::uniform_int_distribution<int64_t> ms(10000, 60000);
  for (int i = 0; i < kPerThread; ++i) {
    TimerOptions o;
    o.name = "timeout";
    o.period = absl::Milliseconds(ms(rng));
    o.oneshot = true;
    o.callback = [] {};
    timers.push_back(std::make_unique<Timer>(std::move(o)));
  }
  bool ok = true;
  for (auto _ : state) {
    for (auto& t : timers) ok &= t->Schedule().ok();
    for (auto& t : timers) t->Stop();
  }
  if (!ok) state.SkipWithError("Schedule() failed");
  state.SetItemsProcessed(state.iterations() * kPerThread * 2);
}
BENCHMARK(BM_Timer_ArmCancelThreads)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// VmRSS of this process, in bytes.
int64_t RssBytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  int64_t kb = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) kb = std::atoll(line + 6);
  }
  std::fclose(f);
  return kb * 1024;
}

// RSS per Timer at three stages, in a process of its own (see below).
struct MemoryFigures {
  double constructed = 0, armed = 0, after_fire = 0;
  bool all_fired = false;
};

MemoryFigures MeasureMemory() {
  SimulatedTimerSystem sim;
  const std::vector<absl::Duration> delays = Delays();
  int64_t fired = 0;
  std::vector<std::unique_ptr<Timer>> timers;
  timers.reserve(kTimers);
  const int64_t base = RssBytes();
  for (int i = 0; i < kTimers; ++i) {
    TimerOptions o;  // as Cyber's Timer(period, cb, true) gives, on `sim`
    o.period = delays[i];
    o.oneshot = true;
    o.callback = [&fired] { ++fired; };
    timers.push_back(std::make_unique<Timer>(std::move(o), &sim.driver()));
  }
  const int64_t constructed = RssBytes();
  for (auto& t : timers) t->Start();
  const int64_t armed = RssBytes();
  sim.RunFor(absl::Seconds(61));
  const int64_t after_fire = RssBytes();
  MemoryFigures m;
  m.constructed = static_cast<double>(constructed - base) / kTimers;
  m.armed = static_cast<double>(armed - base) / kTimers;
  m.after_fire = static_cast<double>(after_fire - base) / kTimers;
  m.all_fired = fired == kTimers;
  return m;
}

// This binary, run again with --memory_child: a fresh process whose heap
// has never held the other rows' timers (freed memory stays in the
// allocator and would hide the growth, even in a forked child).
void BM_Timer_Memory(benchmark::State& state) {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    state.SkipWithError("cannot find this binary");
    return;
  }
  self[len] = '\0';
  const std::string command = std::string("'") + self + "' --memory_child";
  for (auto _ : state) {
    FILE* child = popen(command.c_str(), "r");
    MemoryFigures m;
    const size_t n = child != nullptr ? std::fread(&m, sizeof m, 1, child) : 0;
    const int status = child != nullptr ? pclose(child) : -1;
    if (n != 1 || status != 0) {
      state.SkipWithError("the measuring child failed");
      return;
    }
    if (!m.all_fired) state.SkipWithError("not every timer fired once");
    // Includes the user's own allocation of each Timer (make_unique).
    state.counters["constructed_B"] = m.constructed;
    state.counters["armed_B"] = m.armed;
    state.counters["after_fire_B"] = m.after_fire;
  }
}
BENCHMARK(BM_Timer_Memory)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace timer
}  // namespace cyber

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--memory_child") == 0) {
    const cyber::timer::MemoryFigures m = cyber::timer::MeasureMemory();
    return std::fwrite(&m, sizeof m, 1, stdout) == 1 ? 0 : 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
