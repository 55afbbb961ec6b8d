// hello_timer: the smallest robot-style program on this project's timer.
//
// It does what a sensor driver and a request handler do:
//  * a periodic "poller" timer (default 100 ms) whose callback receives a
//    TimerEvent and prints when the call was due, when it ran and how late;
//  * a oneshot "request_timeout" armed at each poll and cancelled by the next
//    one, the way a module arms a timeout per request and cancels it when the
//    answer comes: it fires only if a poll is missed.
// Deadlines are absolute (start + k * period), so lateness never accumulates
// and no call is ever early. At the end it prints the poller's statistics.
//
//   bazel run //examples/hello_timer -- --period=100ms --cycles=20

#include <atomic>
#include <cstdio>
#include <string>

#include "absl/time/time.h"
#include "cyber/common/log.h"
#include "cyber/init/init.h"
#include "cyber/time/steady_clock.h"
#include "gflags/gflags.h"
#include "timer/timer.h"

DEFINE_string(period, "100ms", "poll period, as a duration (e.g. 10ms, 0.5s)");
DEFINE_int32(cycles, 20, "number of polls to run (0: until Ctrl-C)");

namespace {

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage("polls on a periodic timer with a oneshot timeout");
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

  std::atomic<int> timeouts{0};
  cyber::TimerOptions timeout_options;
  timeout_options.name = "request_timeout";
  timeout_options.period = period * 2;  // two polls' worth of patience
  timeout_options.oneshot = true;
  timeout_options.callback = [&timeouts] {
    ++timeouts;
    std::printf("request_timeout fired: a poll was missed\n");
  };
  cyber::Timer timeout(timeout_options);

  std::atomic<int> polls{0};
  const cyber::Instant start = cyber::SteadyClock::Get()->Now();
  cyber::TimerOptions poll_options;
  poll_options.name = "poller";
  poll_options.period = period;
  poll_options.latency_percentiles = true;  // for p50/p99 in the summary
  poll_options.event_callback = [&](const cyber::TimerEvent& e) {
    const int n = ++polls;
    if (FLAGS_cycles != 0 && n > FLAGS_cycles) return;
    timeout.Stop();  // the previous request was answered
    std::printf("poll %3d  due %9.3f ms  ran %9.3f ms  late %7.3f ms\n", n,
                Ms(e.expected_time - start), Ms(e.actual_time - start),
                Ms(e.actual_time - e.expected_time));
    std::fflush(stdout);
    if (FLAGS_cycles != 0 && n == FLAGS_cycles) {
      cyber::AsyncShutdown();  // main finishes; callbacks must not Shutdown()
      return;
    }
    timeout.Start();  // a new request, a new timeout
  };
  cyber::Timer poller(poll_options);
  // Errors are absl::Status values naming the timer and the value.
  const absl::Status status = poller.Schedule();
  if (!status.ok()) {
    AERROR << "hello_timer: " << status.message();
    return 2;
  }
  std::printf("hello_timer: polling every %s, %d polls (Ctrl-C stops)\n",
              absl::FormatDuration(period).c_str(), FLAGS_cycles);
  std::fflush(stdout);

  cyber::WaitForShutdown();
  poller.Stop();
  timeout.Stop();
  const cyber::TimerStatistics s = poller.GetStatistics();
  std::printf(
      "done: %llu polls, lateness p50 %.3f ms p99 %.3f ms max %.3f ms, "
      "overruns %llu, missed periods %llu, timeouts fired %d\n",
      static_cast<unsigned long long>(s.fires), Ms(s.lateness_p50),
      Ms(s.lateness_p99), Ms(s.lateness_max),
      static_cast<unsigned long long>(s.overruns),
      static_cast<unsigned long long>(s.missed_periods), timeouts.load());
  cyber::Shutdown();
  return 0;
}
