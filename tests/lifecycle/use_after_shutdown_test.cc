// Contract pinned (the design contract, "Lifetimes and process wiring"): a timer used
// after cyber::Shutdown() gets a clear error, never a silent no-op or a busy
// retry. The chosen design: a Timer created *and* started after Shutdown()
// (on the process-default system) fails Schedule() with FailedPrecondition
// naming the timer and saying "shut down"; it is then not running and never
// calls its callback (nor keeps retrying a refused dispatch).
//
// Process-global (cyber::Init/Shutdown), hence a binary of its own. Absence
// of calls can only be observed over a window of real time (the default
// timer system runs on the steady clock); a longer window could only make
// the test stricter, never make a correct implementation fail.

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "cyber/init/init.h"
#include "gtest/gtest.h"
#include "timer/timer.h"

namespace cyber {
namespace {

// 30 periods of the 10 ms timers below.
constexpr std::chrono::milliseconds kObservationWindow{300};

void ExpectShutDownError(const absl::Status& s, const std::string& name) {
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find(name), std::string::npos)
      << "error does not name timer \"" << name << "\": " << s;
  EXPECT_NE(s.message().find("shut down"), std::string::npos)
      << "error does not say \"shut down\": " << s;
}

TEST(UseAfterShutdown, TimerCreatedAndStartedAfterShutdownFailsClearly) {
  ASSERT_TRUE(Init("use_after_shutdown_test"));
  Shutdown();

  std::atomic<int> periodic_calls{0};
  std::atomic<int> oneshot_calls{0};
  std::atomic<int> cyber_calls{0};

  // Modern surface, periodic.
  TimerOptions p;
  p.name = "late_periodic";
  p.period = absl::Milliseconds(10);
  p.callback = [&periodic_calls] { ++periodic_calls; };
  Timer periodic(p);
  ExpectShutDownError(periodic.Schedule(), "late_periodic");
  EXPECT_FALSE(periodic.IsRunning());

  // Modern surface, oneshot (today: it busy-retries the refused dispatch).
  TimerOptions o;
  o.name = "late_oneshot";
  o.period = absl::Milliseconds(10);
  o.oneshot = true;
  o.callback = [&oneshot_calls] { ++oneshot_calls; };
  Timer oneshot(o);
  ExpectShutDownError(oneshot.Schedule(), "late_oneshot");
  EXPECT_FALSE(oneshot.IsRunning());

  // Cyber surface: Start() reports through the log; the state must say so.
  Timer cyber_timer(10, [&cyber_calls] { ++cyber_calls; }, false);
  cyber_timer.Start();
  EXPECT_FALSE(cyber_timer.IsRunning());
  ExpectShutDownError(cyber_timer.Schedule(), cyber_timer.name());
  EXPECT_FALSE(cyber_timer.IsRunning());

  std::this_thread::sleep_for(kObservationWindow);  // see the header comment
  EXPECT_EQ(periodic_calls.load(), 0);
  EXPECT_EQ(oneshot_calls.load(), 0);
  EXPECT_EQ(cyber_calls.load(), 0);
  for (const Timer* t : {&periodic, &oneshot, &cyber_timer}) {
    const TimerStatistics s = t->GetStatistics();
    EXPECT_EQ(s.fires, 0u) << t->name();
    EXPECT_EQ(s.dispatch_refusals, 0u)
        << t->name() << ": a timer that failed to start kept trying to run";
    EXPECT_FALSE(t->IsRunning()) << t->name();
  }
  periodic.Stop();
  oneshot.Stop();
  cyber_timer.Stop();
}

}  // namespace
}  // namespace cyber
