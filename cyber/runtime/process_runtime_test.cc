// The process runtime's life (cyber/runtime/process_runtime.h): made on
// first use, kept by Init, shut down (kept, refusing work) by Shutdown,
// replaced by the next Init and freed once nothing holds it.
//
// The tests share the process, so they run in this order and each starts
// where the previous one left the process runtime.

#include "cyber/runtime/process_runtime.h"

#include <future>
#include <memory>
#include <stdexcept>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/init/init.h"
#include "cyber/runtime/runtime.h"
#include "cyber/time/steady_clock.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/node/node.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "scheduler/default_scheduler.h"
#include "cyber/common/runtime_scope.h"
#include "timer/timer.h"

namespace cyber {
namespace {

// A plain oneshot timer (no TimerSystem: the process timer system).
timer::TimerOptions Oneshot(const char* name, std::function<void()> callback) {
  timer::TimerOptions t;
  t.name = name;
  t.period = absl::Milliseconds(2);
  t.oneshot = true;
  t.callback = std::move(callback);
  return t;
}

// First in this file: nothing has made the process runtime yet.
TEST(ProcessRuntimeTest, BeforeInitFirstUseMakesItAndItsPiecesAreTheRuntimes) {
  auto f = cyber::Async([] {
    // A routine parks on the real wheel: the test is that it comes back
    // (no abort); nothing about its timing is asserted.
    scheduler::CRoutine::SleepFor(absl::Milliseconds(2));
    return scheduler::CurrentScheduler();
  });
  Runtime* rt = ProcessRuntime();
  EXPECT_EQ(f.get(), rt->scheduler());
  EXPECT_EQ(scheduler::DefaultScheduler(), rt->scheduler());
  EXPECT_EQ(scheduler::DefaultSchedulerRef().get(), rt->scheduler());
  EXPECT_EQ(rt->name(), "default");
  EXPECT_EQ(rt->clock(), SteadyClock::Get());
  // The rule's hint names its timer system; its scheduler's wheel and
  // clock are the runtime's.
  EXPECT_EQ(CurrentTimerSystemHint(), rt->timers()->system().get());
  EXPECT_EQ(CurrentRuntime().scope(), rt->scope());
  EXPECT_EQ(rt->scope()->timers.load(), rt->timers()->system().get());
  EXPECT_EQ(rt->scope()->clock.load(), rt->clock());
  EXPECT_EQ(rt->scope()->scheduler.load(), rt->scheduler());
  EXPECT_EQ(rt->scope()->bus.load(), rt->bus());

  // A plain Timer runs its callback on the runtime's scheduler.
  std::promise<scheduler::Scheduler*> ran_on;
  timer::Timer t(Oneshot("before_init", [&ran_on] {
    ran_on.set_value(scheduler::CurrentScheduler());
  }));
  ASSERT_TRUE(t.Schedule().ok());
  EXPECT_EQ(ran_on.get_future().get(), rt->scheduler());
}

TEST(ProcessRuntimeTest, InitKeepsTheRuntimeMadeOnFirstUse) {
  Runtime* before = ProcessRuntime();
  ASSERT_TRUE(Init("process_runtime_test"));
  EXPECT_EQ(ProcessRuntime(), before);
  EXPECT_EQ(StartProcessRuntime(), before);  // running: kept
  EXPECT_EQ(cyber::Async([] { return 3; }).get(), 3);
}

// Left initialized by the previous test.
TEST(ProcessRuntimeTest, ShutdownShutsItDownAndKeepsItRefusingWork) {
  Runtime* rt = ProcessRuntime();
  Shutdown();
  EXPECT_EQ(ProcessRuntime(), rt);  // kept until the next start
  EXPECT_EQ(scheduler::DefaultScheduler(), rt->scheduler());
  EXPECT_TRUE(rt->timers()->is_shut_down());

  auto refused = cyber::Async([] { return 1; });
  try {
    refused.get();
    ADD_FAILURE() << "a shut-down process runtime ran a task";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("scheduler \"default\""),
              std::string::npos)
        << e.what();
  }
  timer::Timer t(Oneshot("after_shutdown", [] {}));
  const absl::Status s = t.Schedule();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  ShutdownProcessRuntime();  // idempotent
}

// Left shut down by the previous test.
TEST(ProcessRuntimeTest, InitAfterShutdownMakesANewOneAndTheOldIsFreedWhenUnused) {
  std::weak_ptr<Runtime> old = ProcessRuntimeRef();
  ASSERT_TRUE(Init("process_runtime_test"));
  // Init kept the shut-down one? No: a new one.
  EXPECT_NE(ProcessRuntime(), old.lock().get());
  EXPECT_TRUE(old.expired());  // nothing held it

  // A node made in this run holds this run's runtime past its shutdown.
  std::weak_ptr<Runtime> second = ProcessRuntimeRef();
  auto node = std::make_unique<Node>("holds_the_runtime");
  auto reader = node->TryCreateReader<int>(
      "/process_runtime_test", [](const std::shared_ptr<const int>&) {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  Shutdown();
  ASSERT_TRUE(Init("process_runtime_test"));
  EXPECT_NE(ProcessRuntime(), second.lock().get());
  EXPECT_FALSE(second.expired());  // the node and its reader hold it
  node.reset();
  reader = absl::StatusOr<std::shared_ptr<Reader<int>>>(nullptr);
  EXPECT_TRUE(second.expired());

  // The new run works: its timer system is the process one, SleepFor too.
  EXPECT_EQ(CurrentTimerSystemHint(), ProcessRuntime()->timers()->system().get());
  auto f = cyber::Async([] {
    // A routine parks on the real wheel: the test is that it comes back
    // (no abort); nothing about its timing is asserted.
    scheduler::CRoutine::SleepFor(absl::Milliseconds(2));
    return 8;
  });
  EXPECT_EQ(f.get(), 8);
  Shutdown();
}

}  // namespace
}  // namespace cyber
