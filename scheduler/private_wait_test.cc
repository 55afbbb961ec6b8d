// CRoutine::PrivateWait: a wait of library code inside a routine that only
// its own WakeWait() (or cancellation) ends. A user's Notify() neither ends
// it nor is consumed by it, WaitList's Unpark() neither, an early WakeWait
// is kept, and a late one (after the wait ended) is ignored.
//
// A scheduler without threads: the test runs the routines itself
// (RunReady), so each step happens exactly where the test puts it.

#include <atomic>
#include <string>

#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"

namespace cyber {
namespace scheduler {
namespace {

Scheduler::Options Threadless() {
  Scheduler::Options o;
  o.name = "private_wait";
  o.config = DefaultSchedulerConfig(1);
  o.run_threads = false;
  return o;
}

// Where a waiting routine publishes itself, as a waker would keep it.
struct Waiter {
  std::atomic<CRoutine*> routine{nullptr};
  std::atomic<uint64_t> ticket{0};
};

class PrivateWaitTest : public ::testing::Test {
 protected:
  PrivateWaitTest() : sched_(Threadless()) {}
  ~PrivateWaitTest() override {
    sched_.RemoveTask("t").IgnoreError();
    sched_.RunReady();
    sched_.Shutdown();
  }
  Scheduler sched_;
};

TEST_F(PrivateWaitTest, ANotifyNeitherEndsItNorIsConsumedByIt) {
  Waiter waiter;
  std::atomic<int> step{0};
  ASSERT_TRUE(sched_.CreateTask("t", [&] {
    {
      CRoutine::PrivateWait wait;
      waiter.ticket = wait.ticket();
      waiter.routine = wait.routine();
      step = 1;
      wait.Park();
      step = 2;
    }
    CRoutine::WaitForData();  // the notification that came meanwhile
    step = 3;
    CRoutine::WaitForData();  // none left: parks
    step = 4;
  }).ok());
  sched_.RunReady();
  ASSERT_EQ(step.load(), 1);
  ASSERT_TRUE(sched_.NotifyTask("t").ok());
  sched_.RunReady();
  EXPECT_EQ(step.load(), 1) << "a Notify() ended a PrivateWait";
  waiter.routine.load()->WakeWait(waiter.ticket);
  sched_.RunReady();
  EXPECT_EQ(step.load(), 3) << "the Notify() that came during the wait was lost";
  ASSERT_TRUE(sched_.NotifyTask("t").ok());
  sched_.RunReady();
  EXPECT_EQ(step.load(), 4);
}

TEST_F(PrivateWaitTest, AWakeBeforeParkIsKeptAndALateOneIsIgnored) {
  Waiter waiter;
  std::atomic<int> step{0};
  std::atomic<uint64_t> first_ticket{0};
  ASSERT_TRUE(sched_.CreateTask("t", [&] {
    {
      CRoutine::PrivateWait wait;
      first_ticket = wait.ticket();
      wait.routine()->WakeWait(wait.ticket());  // before Park(): kept
      wait.Park();                               // returns at once
      step = 1;
    }
    CRoutine::WaitForData();
    {
      CRoutine::PrivateWait wait;  // a new wait: the old ticket is stale
      waiter.ticket = wait.ticket();
      waiter.routine = wait.routine();
      step = 2;
      wait.Park();
      step = 3;
    }
  }).ok());
  sched_.RunReady();
  ASSERT_EQ(step.load(), 1);
  ASSERT_TRUE(sched_.NotifyTask("t").ok());
  sched_.RunReady();
  ASSERT_EQ(step.load(), 2);
  EXPECT_NE(waiter.ticket.load(), first_ticket.load());
  waiter.routine.load()->WakeWait(first_ticket);  // the first wait's: ignored
  sched_.RunReady();
  EXPECT_EQ(step.load(), 2) << "a wake-up for an ended wait ended a later one";
  waiter.routine.load()->WakeWait(waiter.ticket);
  sched_.RunReady();
  EXPECT_EQ(step.load(), 3);
}

TEST_F(PrivateWaitTest, WaitListsUnparkAndAPrivateWakeDoNotEndEachOthersWait) {
  Waiter waiter;
  std::atomic<int> step{0};
  ASSERT_TRUE(sched_.CreateTask("t", [&] {
    CRoutine* const self = CRoutine::Current();
    {
      CRoutine::PrivateWait wait;
      waiter.ticket = wait.ticket();
      waiter.routine = self;
      step = 1;
      wait.Park();
      step = 2;
    }
    self->Park();  // the Unpark() that came during the private wait
    step = 3;
  }).ok());
  sched_.RunReady();
  ASSERT_EQ(step.load(), 1);
  waiter.routine.load()->Unpark();
  sched_.RunReady();
  EXPECT_EQ(step.load(), 1) << "an Unpark() ended a PrivateWait";
  waiter.routine.load()->WakeWait(waiter.ticket);
  sched_.RunReady();
  EXPECT_EQ(step.load(), 3);
}

TEST_F(PrivateWaitTest, CancellationEndsItByUnwinding) {
  std::atomic<int> step{0};
  std::atomic<bool> unwound{false};
  struct Guard {
    std::atomic<bool>* flag;
    ~Guard() { *flag = true; }
  };
  ASSERT_TRUE(sched_.CreateTask("t", [&] {
    Guard guard{&unwound};
    CRoutine::PrivateWait wait;
    step = 1;
    wait.Park();
    step = 2;
  }).ok());
  sched_.RunReady();
  ASSERT_EQ(step.load(), 1);
  ASSERT_TRUE(sched_.RemoveTask("t").ok());
  sched_.RunReady();
  EXPECT_EQ(step.load(), 1);
  EXPECT_TRUE(unwound.load());
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
