// A runtime owns a clock, a timer system, a scheduler and a bus, and code
// running on its behalf finds it by one rule (the installed RuntimeScope):
// its routines, and any code that enters it with ScopedRuntime.

#include "cyber/runtime/runtime.h"

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cyber/init/init.h"
#include "cyber/common/runtime_scope.h"
#include "cyber/task/task.h"
#include "cyber/runtime/process_runtime.h"
#include "cyber/time/current_clock.h"
#include "cyber/time/steady_clock.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/time/time.h"
#include "cyber/node/node.h"
#include "cyber/testing/run_simulated_runtime.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "scheduler/default_scheduler.h"
#include "timer/timer.h"

namespace cyber {
namespace {

// A runtime without threads on a simulated clock, stepped by the test.
class SimulatedRuntimeTest : public ::testing::Test {
 protected:
  SimulatedRuntimeTest() : clock_(Instant() + absl::Hours(1)), runtime_(Opts(&clock_)) {}

  static Runtime::Options Opts(SimulatedClock* clock) {
    Runtime::Options o;
    o.name = "sim_rt";
    o.clock = clock;
    o.run_threads = false;
    return o;
  }

  // Until the clock reads `t` and nothing is left to run at it.
  void RunUntil(Instant t) {
    test::RunSimulatedRuntimeUntil(&runtime_, &clock_, t);
  }

  SimulatedClock clock_;
  Runtime runtime_;
};

TEST_F(SimulatedRuntimeTest, ItsRoutinesFindItsPieces) {
  struct Seen {
    Clock* clock = nullptr;
    scheduler::Scheduler* scheduler = nullptr;
    ChannelBus* bus = nullptr;
    scheduler::Scheduler* node_scheduler = nullptr;
    ChannelBus* node_bus = nullptr;
  };
  auto seen = std::make_shared<Seen>();
  ASSERT_TRUE(runtime_.scheduler()->Dispatch([seen] {
    seen->clock = CurrentClock();
    seen->scheduler = scheduler::CurrentScheduler();
    seen->bus = CurrentRuntime().part(&RuntimeScope::bus);
    Node node("inside");
    seen->node_scheduler = node.scheduler();
    seen->node_bus = node.bus();
  }));
  runtime_.scheduler()->RunReady();
  EXPECT_EQ(seen->clock, &clock_);
  EXPECT_EQ(seen->scheduler, runtime_.scheduler());
  EXPECT_EQ(seen->bus, runtime_.bus());
  EXPECT_EQ(seen->node_scheduler, runtime_.scheduler());
  EXPECT_EQ(seen->node_bus, runtime_.bus());
  // Outside any runtime's code: the process runtime's.
  EXPECT_EQ(CurrentClock(), SteadyClock::Get());
  EXPECT_EQ(CurrentRuntime().part(&RuntimeScope::bus), ProcessRuntime()->bus());
  EXPECT_NE(ProcessRuntime()->bus(), runtime_.bus());
}

TEST_F(SimulatedRuntimeTest, EnteredCodeUsesItAndLeavingRestoresTheOuterScope) {
  std::vector<absl::Duration> fired;
  {
    ScopedRuntime enter(runtime_.scope());
    EXPECT_EQ(CurrentRuntimeScope(), runtime_.scope());
    EXPECT_EQ(CurrentClock(), &clock_);
    EXPECT_EQ(scheduler::CurrentScheduler(), runtime_.scheduler());
    {
      ScopedRuntime none(nullptr);
      EXPECT_EQ(CurrentClock(), SteadyClock::Get());
    }
    EXPECT_EQ(CurrentClock(), &clock_);
    // A plain Timer started here runs on the runtime's wheel and clock.
    TimerOptions o;
    o.name = "in_runtime";
    o.period = absl::Milliseconds(10);
    o.oneshot = true;
    const Instant start = clock_.Now();
    o.callback = [&fired, this, start] { fired.push_back(clock_.Now() - start); };
    Timer t(o);
    ASSERT_TRUE(t.Schedule().ok());
    // Time::Now() reads the runtime's simulated clock.
    EXPECT_EQ(Time::Now().ToNanosecond(),
              static_cast<uint64_t>(absl::ToInt64Nanoseconds(clock_.Now().SinceEpoch())));
    RunUntil(start + absl::Milliseconds(20));
    t.Stop();
  }
  EXPECT_EQ(CurrentRuntimeScope(), nullptr);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0], absl::Milliseconds(10));
}

TEST_F(SimulatedRuntimeTest, SleepForInAnAsyncTaskFollowsItsClock) {
  absl::Duration slept;
  auto f = runtime_.scheduler()->Async([&slept, this] {
    const Instant before = clock_.Now();
    cyber::SleepFor(absl::Milliseconds(7));
    slept = clock_.Now() - before;
    return 3;
  });
  RunUntil(clock_.Now() + absl::Milliseconds(50));
  ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(f.get(), 3);
  EXPECT_GE(slept, absl::Milliseconds(7));  // never early
  EXPECT_LE(slept, absl::Milliseconds(8));  // at most one tick late
}

// A runtime with threads on the steady clock: a test's own, sharing nothing
// with the process runtime, shut down in order, safe to outlive.
TEST(RuntimeTest, ATestsOwnRuntimeRunsAsyncSleepAndTimersThenShutsDownCleanly) {
  Runtime::Options o;
  o.name = "own";
  o.config = scheduler::DefaultSchedulerConfig(2);
  auto rt = std::make_unique<Runtime>(o);
  auto f = rt->scheduler()->Async([] {
    // A routine parks on the real wheel: the test is that it comes back
    // (no abort); nothing about its timing is asserted.
    cyber::SleepFor(absl::Milliseconds(3));
    return scheduler::CurrentScheduler();
  });
  EXPECT_EQ(f.get(), rt->scheduler());

  std::promise<void> fired;
  TimerOptions t;
  t.name = "own_oneshot";
  t.period = absl::Milliseconds(4);
  t.oneshot = true;
  t.callback = [&fired] { fired.set_value(); };
  Timer timer(t, rt->timers());
  ASSERT_TRUE(timer.Schedule().ok());
  fired.get_future().wait();

  rt->Shutdown();
  rt->Shutdown();  // idempotent
  const absl::Status s = timer.Schedule();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  rt.reset();       // the timer outlives its runtime
  timer.Stop();     // still safe
  EXPECT_EQ(timer.Schedule().code(), absl::StatusCode::kFailedPrecondition);
}

// The process runtime: Init -> Shutdown -> Init is a clean restart, and a
// shut-down process scheduler is freed once nothing uses it (a Node made
// in the first run holds it until it goes).
TEST(ProcessRuntimeTest, InitShutdownInitKeepsNothingForEver) {
  ASSERT_TRUE(Init("runtime_test"));
  std::weak_ptr<scheduler::Scheduler> first = scheduler::DefaultSchedulerRef();
  auto node = std::make_unique<Node>("outlives_its_run");
  auto reader = node->TryCreateReader<int>("/outlives", [](const std::shared_ptr<const int>&) {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  Shutdown();
  EXPECT_FALSE(first.expired());
  ASSERT_TRUE(Init("runtime_test"));
  EXPECT_NE(scheduler::DefaultScheduler(), first.lock().get());
  EXPECT_FALSE(first.expired());  // the node and its reader still hold it
  node.reset();
  reader = absl::StatusOr<std::shared_ptr<Reader<int>>>(nullptr);
  EXPECT_TRUE(first.expired());
  // The new run works, SleepFor in an Async task included.
  auto f = cyber::Async([] {
    // A routine parks on the real wheel: the test is that it comes back
    // (no abort); nothing about its timing is asserted.
    cyber::SleepFor(absl::Milliseconds(2));
    return 9;
  });
  EXPECT_EQ(f.get(), 9);
  Shutdown();
}

}  // namespace
}  // namespace cyber
