// scheduler::Instance(): Cyber RT's bool-returning task calls on the process
// scheduler (a false is logged with the reason).

#include "scheduler/scheduler_factory.h"

#include <atomic>

#include "cyber/common/test_waits.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "scheduler/default_scheduler.h"

namespace cyber {
namespace scheduler {
namespace {

TEST(SchedulerInstanceTest, CreateNotifyAndRemoveATaskTheCyberWay) {
  auto sched = scheduler::Instance();
  std::atomic<int> woken{0};
  std::atomic<bool> waiting{false};
  ASSERT_TRUE(sched->CreateTask(
      [&] {
        while (true) {
          waiting = true;
          CRoutine::WaitForData();  // cancelled by RemoveTask (throws)
          ++woken;
        }
      },
      "compat_loop"));
  ASSERT_TRUE(test::Eventually([&] { return waiting.load(); }));
  EXPECT_TRUE(sched->NotifyTask("compat_loop"));
  ASSERT_TRUE(test::Eventually([&] { return woken.load() >= 1; }));
  EXPECT_TRUE(sched->RemoveTask("compat_loop"));
  EXPECT_EQ(sched->scheduler(), DefaultScheduler());
}

TEST(SchedulerInstanceTest, FailuresAreFalseNotCrashes) {
  auto sched = scheduler::Instance();
  EXPECT_FALSE(sched->CreateTask([] {}, ""));               // empty name
  EXPECT_FALSE(sched->CreateTask(nullptr, "no_body"));      // empty body
  EXPECT_FALSE(sched->NotifyTask("no_such_task"));          // NotFound
  EXPECT_FALSE(sched->RemoveTask("no_such_task"));
  ASSERT_TRUE(sched->CreateTask([] { CRoutine::WaitForData(); }, "twice"));
  EXPECT_FALSE(sched->CreateTask([] {}, "twice"));          // AlreadyExists
  EXPECT_TRUE(sched->RemoveTask("twice"));
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
