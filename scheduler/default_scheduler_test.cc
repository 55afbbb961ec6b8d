#include "scheduler/default_scheduler.h"

#include <string>

#include "gflags/gflags.h"
#include "gtest/gtest.h"

DECLARE_int32(scheduler_processors);
DECLARE_string(scheduler_policy);
DECLARE_int32(scheduler_priority);

namespace cyber {
namespace {

TEST(DefaultSchedulerTest, AsyncRunsOnTheProcessScheduler) {
  FLAGS_scheduler_processors = 2;
  auto f = cyber::Async([](int a, int b) { return a + b; }, 40, 2);
  EXPECT_EQ(f.get(), 42);
  EXPECT_EQ(scheduler::DefaultScheduler()->stats().processors, 2);
  scheduler::ShutdownDefaultScheduler();
  scheduler::ShutdownDefaultScheduler();  // idempotent
}

TEST(DefaultSchedulerTest, BadFlagsAreReportedAndTheDefaultIsUsed) {
  FLAGS_scheduler_processors = 1;
  FLAGS_scheduler_policy = "SCHED_FIFO";
  FLAGS_scheduler_priority = 0;  // invalid for SCHED_FIFO (1..99)
  ::testing::internal::CaptureStderr();
  scheduler::Scheduler* s = scheduler::DefaultScheduler();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("--scheduler_* flags"), std::string::npos) << log;
  EXPECT_NE(log.find("processor_prio 0"), std::string::npos) << log;
  EXPECT_EQ(s->stats().processors, 1);  // still runs, on the default layout
  EXPECT_EQ(cyber::Async([] { return 7; }).get(), 7);
  scheduler::ShutdownDefaultScheduler();
  FLAGS_scheduler_policy = "SCHED_OTHER";
}

}  // namespace
}  // namespace cyber
