// Work runs in the processor group its conf entry names (issue 21, item 4
// (b)): a timer listed under an isolated "rt" group runs on that group's
// threads, at that entry's priority; a task created by a name in that group
// does too; anything unlisted runs in the first group. Before, every timer
// ran on the first group's threads while its priority came from "rt".
//
// Real processor threads, since the point is which thread runs the call:
// each processor thread is named "<group>-<index>" (processor_group.cc), and
// the call records the name of the thread it runs on. No timing assertion:
// the test waits (bounded by test::Eventually) for the call to have run.

#include <pthread.h>

#include <atomic>
#include <string>

#include "cyber/common/mutex.h"
#include "cyber/common/test_waits.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace scheduler {
namespace {

constexpr char kConf[] = R"(
classic_conf {
  groups { name: "main" processor_num: 1 tasks { name: "main_timer" prio: 2 } }
  groups {
    name: "rt"
    processor_num: 1
    tasks { name: "rt_timer" prio: 3 }
    tasks { name: "rt_task" prio: 5 }
  }
}
)";

Scheduler::Options RtOptions() {
  Scheduler::Options o;
  o.name = "route";
  auto conf = ParseSchedulerConfig(kConf, "route.conf");
  EXPECT_TRUE(conf.ok()) << conf.status();
  if (conf.ok()) o.config = *std::move(conf);
  return o;
}

// What one call saw: its thread's name and its routine's route.
class CallSeen {
 public:
  void Record() {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    const CRoutine* r = CRoutine::Current();
    MutexLock lock(&mu_);
    thread_ = name;
    priority_ = r != nullptr ? r->priority() : -1;
    group_ = r != nullptr ? r->group() : -1;
    done_.store(true, std::memory_order_release);
  }
  bool Await() const {
    return test::Eventually([this] { return done_.load(std::memory_order_acquire); });
  }
  std::string thread() const {
    MutexLock lock(&mu_);
    return thread_;
  }
  int priority() const {
    MutexLock lock(&mu_);
    return priority_;
  }
  int group() const {
    MutexLock lock(&mu_);
    return group_;
  }

 private:
  mutable Mutex mu_;
  std::string thread_ ABSL_GUARDED_BY(mu_);
  int priority_ ABSL_GUARDED_BY(mu_) = -1;
  int group_ ABSL_GUARDED_BY(mu_) = -1;
  std::atomic<bool> done_{false};
};

TimerOptions OneshotRecording(const std::string& name, CallSeen* seen) {
  TimerOptions o;
  o.name = name;
  o.period = absl::Milliseconds(2);
  o.oneshot = true;
  o.callback = [seen] { seen->Record(); };
  return o;
}

TEST(SchedulerRouteTest, ATimerNamedInAGroupRunsOnThatGroupsThreads) {
  Scheduler sched(RtOptions());
  timer::TimerSystem driver(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(&driver);
  CallSeen rt;
  CallSeen main;
  CallSeen unlisted;
  Timer rt_timer(OneshotRecording("rt_timer", &rt), &driver);
  Timer main_timer(OneshotRecording("main_timer", &main), &driver);
  Timer other_timer(OneshotRecording("unlisted", &unlisted), &driver);
  ASSERT_TRUE(rt_timer.Schedule().ok());
  ASSERT_TRUE(main_timer.Schedule().ok());
  ASSERT_TRUE(other_timer.Schedule().ok());
  ASSERT_TRUE(rt.Await());
  ASSERT_TRUE(main.Await());
  ASSERT_TRUE(unlisted.Await());
  EXPECT_EQ(rt.thread(), "rt-0");
  EXPECT_EQ(rt.priority(), 3);
  EXPECT_EQ(rt.group(), 1);
  EXPECT_EQ(main.thread(), "main-0");
  EXPECT_EQ(main.priority(), 2);
  EXPECT_EQ(unlisted.thread(), "main-0");
  EXPECT_EQ(unlisted.priority(), 0);
  driver.Shutdown();
  sched.Shutdown();
}

TEST(SchedulerRouteTest, RouteForNamesTheConfEntrysPriorityAndGroup) {
  Scheduler sched(RtOptions());
  EXPECT_EQ(sched.RouteFor("rt_timer"), (timer::Route{3, 1}));
  EXPECT_EQ(sched.RouteFor("main_timer"), (timer::Route{2, 0}));
  EXPECT_EQ(sched.RouteFor("unlisted"), (timer::Route{0, 0}));
  sched.Shutdown();
}

TEST(SchedulerRouteTest, WorkDispatchedOnARouteRunsInItsGroup) {
  Scheduler sched(RtOptions());
  CallSeen seen;
  ASSERT_TRUE(sched.Dispatch([&seen] { seen.Record(); }, timer::Route{7, 1}, nullptr));
  ASSERT_TRUE(seen.Await());
  EXPECT_EQ(seen.thread(), "rt-0");
  EXPECT_EQ(seen.priority(), 7);
  sched.Shutdown();
}

TEST(SchedulerRouteTest, AsyncFromARoutineKeepsItsRoute) {
  Scheduler sched(RtOptions());
  CallSeen seen;
  ASSERT_TRUE(sched
                  .CreateTask("rt_task",
                              [&sched, &seen] {
                                sched.Async([&seen] { seen.Record(); });
                              })
                  .ok());
  ASSERT_TRUE(seen.Await());
  EXPECT_EQ(seen.thread(), "rt-0");
  EXPECT_EQ(seen.priority(), 5);
  EXPECT_EQ(seen.group(), 1);
  sched.Shutdown();
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
