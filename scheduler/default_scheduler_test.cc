#include "scheduler/default_scheduler.h"

#include <stdexcept>
#include <string>

#include "absl/time/time.h"

#include "gflags/gflags.h"
#include "gtest/gtest.h"
#include "cyber/runtime/process_runtime.h"
#include "scheduler/croutine.h"

DECLARE_int32(scheduler_processors);
DECLARE_string(scheduler_policy);
DECLARE_int32(scheduler_priority);

namespace cyber {
namespace {

// Issue 21: a routine's SleepFor on the process scheduler made on first use
// (no cyber::Init) aborted the process ("SleepFor needs a timing wheel").
// First in this file: the process has never started a scheduler.
TEST(DefaultSchedulerTest, SleepForInAnAsyncTaskWorksWithoutInit) {
  FLAGS_scheduler_processors = 2;
  auto f = cyber::Async([] {
    // A routine parks on the real wheel: the test is that it comes back
    // (no abort); nothing about its timing is asserted.
    scheduler::CRoutine::SleepFor(absl::Milliseconds(3));
    return 5;
  });
  EXPECT_EQ(f.get(), 5);
}

TEST(DefaultSchedulerTest, AsyncRunsOnTheProcessScheduler) {
  auto f = cyber::Async([](int a, int b) { return a + b; }, 40, 2);
  EXPECT_EQ(f.get(), 42);
  EXPECT_EQ(scheduler::DefaultScheduler()->stats().processors, 2);
  ShutdownProcessRuntime();
  ShutdownProcessRuntime();  // idempotent
}

// After a shutdown, and until the next start (cyber::Init), the process
// scheduler refuses work with an error that names it: never an abort, never
// a silent no-op. The next start makes a working one, wheel included.
TEST(DefaultSchedulerTest, AfterShutdownAsyncFailsClearlyUntilTheNextStart) {
  auto refused = cyber::Async([] { return 1; });
  try {
    refused.get();
    ADD_FAILURE() << "a shut-down scheduler ran a task";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("scheduler \"default\""), std::string::npos)
        << e.what();
  }
  scheduler::Scheduler* s = StartProcessRuntime()->scheduler();
  EXPECT_EQ(s, scheduler::DefaultScheduler());
  EXPECT_EQ(s, StartProcessRuntime()->scheduler());  // running: kept
  auto f = cyber::Async([] {
    // A routine parks on the real wheel: the test is that it comes back
    // (no abort); nothing about its timing is asserted.
    scheduler::CRoutine::SleepFor(absl::Milliseconds(3));
    return 6;
  });
  EXPECT_EQ(f.get(), 6);
  ShutdownProcessRuntime();
}

TEST(DefaultSchedulerTest, BadFlagsAreReportedAndTheDefaultIsUsed) {
  FLAGS_scheduler_processors = 1;
  FLAGS_scheduler_policy = "SCHED_FIFO";
  FLAGS_scheduler_priority = 0;  // invalid for SCHED_FIFO (1..99)
  ::testing::internal::CaptureStderr();
  scheduler::Scheduler* s = StartProcessRuntime()->scheduler();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("--scheduler_* flags"), std::string::npos) << log;
  EXPECT_NE(log.find("processor_prio 0"), std::string::npos) << log;
  EXPECT_EQ(s->stats().processors, 1);  // still runs, on the default layout
  EXPECT_EQ(cyber::Async([] { return 7; }).get(), 7);
  ShutdownProcessRuntime();
  FLAGS_scheduler_policy = "SCHED_OTHER";
}

}  // namespace
}  // namespace cyber
