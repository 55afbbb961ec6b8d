// hello_timer: the smallest program on this project's foundation.
//
// Initializes the process (logging, Ctrl-C handling), then paces a loop with
// cyber::Rate on the monotonic clock and prints, for every cycle, when it was
// due, when it woke and how late that was. Because deadlines are absolute
// (start + k * period), lateness never accumulates: the last line's "drift"
// stays at one cycle's wake-up jitter however long it runs.
//
//   bazel run //examples/hello_timer -- --period=100ms --cycles=20

#include <cstdio>
#include <string>

#include "absl/time/time.h"
#include "cyber/common/log.h"
#include "cyber/init/init.h"
#include "cyber/time/rate.h"
#include "cyber/time/steady_clock.h"
#include "gflags/gflags.h"

DEFINE_string(period, "100ms",
              "loop period, as a duration (e.g. 10ms, 0.5s)");
DEFINE_int32(cycles, 20, "number of cycles to run (0: until Ctrl-C)");

int main(int argc, char** argv) {
  gflags::SetUsageMessage("paces a loop on absolute deadlines and reports it");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  if (!cyber::Init(argv[0])) return 1;

  absl::Duration period;
  if (!absl::ParseDuration(FLAGS_period, &period)) {
    AERROR << "hello_timer: flag --period: \"" << FLAGS_period
           << "\" is not a duration (try 100ms)";
    return 2;
  }
  if (FLAGS_cycles < 0) {
    AERROR << "hello_timer: flag --cycles: " << FLAGS_cycles
           << " must not be negative";
    return 2;
  }
  cyber::SteadyClock* clock = cyber::SteadyClock::Get();
  auto rate = cyber::Rate::Create(period, clock);
  if (!rate.ok()) {
    AERROR << "hello_timer: flag --period: " << rate.status();
    return 2;
  }

  std::printf("hello_timer: period %s, %d cycles (Ctrl-C stops)\n",
              absl::FormatDuration(period).c_str(), FLAGS_cycles);
  const cyber::Instant start = clock->Now();
  absl::Duration worst = absl::ZeroDuration();
  int cycle = 0;
  while (cyber::OK() && (FLAGS_cycles == 0 || cycle < FLAGS_cycles)) {
    const cyber::Instant due = rate->NextDeadline();
    rate->Sleep();
    const cyber::Instant woke = clock->Now();
    ++cycle;
    const absl::Duration late = woke - due;
    if (late > worst) worst = late;
    std::printf("cycle %3d  due %10.3f ms  woke %10.3f ms  late %7.1f us\n",
                cycle, absl::ToDoubleMilliseconds(due - start),
                absl::ToDoubleMilliseconds(woke - start),
                absl::ToDoubleMicroseconds(late));
    std::fflush(stdout);
  }
  const absl::Duration elapsed = clock->Now() - start;
  std::printf(
      "done: %d cycles in %.3f ms (schedule %.3f ms), worst lateness %.1f us, "
      "missed cycles %lld\n",
      cycle, absl::ToDoubleMilliseconds(elapsed),
      absl::ToDoubleMilliseconds(cycle * period),
      absl::ToDoubleMicroseconds(worst),
      static_cast<long long>(rate->MissedCycles()));
  cyber::Shutdown();
  return 0;
}
