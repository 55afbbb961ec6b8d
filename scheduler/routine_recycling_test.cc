// Recycled routines (Scheduler::Dispatch, CRoutine::Recycle): a dispatch
// takes a finished one-off routine instead of building one. What that must
// not change: each dispatch runs its own body once, on its own priority and
// group; nothing of the last run (its captures, its owner, a sleep, a
// wake-up flag) carries over; named tasks are never reused; admission and
// shutdown refuse as before.

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cyber/common/test_waits.h"
#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"

namespace cyber {
namespace scheduler {
namespace {

using test::Eventually;

Scheduler::Options Manual(SchedulerConfig config) {
  Scheduler::Options o;
  o.name = "recycle";
  o.config = std::move(config);
  o.run_threads = false;  // routines run here, by RunReady(), in order
  return o;
}

// Who ran: the routine's id and the route it ran on.
struct Ran {
  uint64_t id = 0;
  timer::Route route;
};

TEST(RoutineRecyclingTest, ADispatchReusesAFinishedRoutineWithNothingOfItsLastRun) {
  auto config = ParseSchedulerConfig(R"(
    scheduler_conf { classic_conf { groups: [
      { name: "a" processor_num: 1 }, { name: "b" processor_num: 1 } ] } })",
                                     "test.conf");
  ASSERT_TRUE(config.ok()) << config.status();
  Scheduler sched(Manual(*config));
  std::vector<Ran> ran;
  const auto record = [&] {
    ran.push_back({CRoutine::Current()->id(), sched.CurrentRoute()});
  };
  auto capture = std::make_shared<int>(1);
  auto owner = std::make_shared<int>(2);
  std::weak_ptr<int> capture_watch = capture;
  std::weak_ptr<int> owner_watch = owner;
  ASSERT_TRUE(sched.Dispatch([record, capture] { record(); },
                             timer::Route{5, 0}, std::move(owner)));
  capture.reset();
  EXPECT_EQ(sched.RunReady(), 1u);
  // Released when the body ended, though the routine is kept.
  EXPECT_TRUE(capture_watch.expired());
  EXPECT_TRUE(owner_watch.expired());

  ASSERT_TRUE(sched.Dispatch(record, timer::Route{2, 1}, nullptr));
  EXPECT_EQ(sched.RunReady(), 1u);
  ASSERT_EQ(ran.size(), 2u);
  EXPECT_EQ(ran[1].id, ran[0].id);  // the same routine, reused
  EXPECT_EQ(ran[0].route, (timer::Route{5, 0}));
  EXPECT_EQ(ran[1].route, (timer::Route{2, 1}));  // its own route
  const Scheduler::Stats s = sched.stats();
  EXPECT_EQ(s.dispatched, 2u);
  EXPECT_EQ(s.finished, 2u);
  EXPECT_EQ(s.live, 0u);
}

TEST(RoutineRecyclingTest, ABurstIsServedByTheRoutinesOfTheLastOne) {
  Scheduler sched(Manual(DefaultSchedulerConfig(1)));
  std::set<uint64_t> first;
  std::set<uint64_t> second;
  for (std::set<uint64_t>* ids : {&first, &second}) {
    for (int i = 0; i < 3000; ++i) {
      ASSERT_TRUE(sched.Dispatch([ids] { ids->insert(CRoutine::Current()->id()); }));
    }
    EXPECT_EQ(sched.RunReady(), 3000u);
  }
  EXPECT_EQ(first.size(), 3000u);  // in flight at once: 3000 routines
  EXPECT_EQ(second, first);        // ... each reused, none built
}

TEST(RoutineRecyclingTest, ARoutineThatSleptIsReusedAndSleepsExactlyAgain) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  Scheduler::Options o;
  o.name = "recycle";
  o.config = DefaultSchedulerConfig(1);
  Scheduler sched(o);
  timer::TimerSystem driver(&clock, &sched);
  sched.SetTimerSystem(&driver);
  std::vector<uint64_t> ids;
  std::vector<Instant> woke;
  std::atomic<int> done{0};
  for (int run = 0; run < 2; ++run) {
    const Instant start = clock.Now();
    ASSERT_TRUE(sched.Dispatch([&] {
      ids.push_back(CRoutine::Current()->id());
      CRoutine::SleepFor(absl::Milliseconds(10));
      woke.push_back(clock.Now());
      ++done;
    }));
    ASSERT_TRUE(Eventually([&] { return driver.wheel().size() == 1; }));
    driver.AwaitIdle();
    clock.Advance(absl::Milliseconds(9));
    driver.AwaitIdle();
    EXPECT_EQ(done.load(), run);  // not early
    clock.Advance(absl::Milliseconds(1));
    ASSERT_TRUE(Eventually([&] { return done.load() == run + 1; }));
    ASSERT_TRUE(Eventually([&] { return sched.stats().live == 0; }));
    EXPECT_EQ(woke.back(), start + absl::Milliseconds(10));
  }
  EXPECT_EQ(ids[1], ids[0]);
  sched.Shutdown();
}

TEST(RoutineRecyclingTest, NamedTasksAreNeverReused) {
  Scheduler sched(Manual(DefaultSchedulerConfig(1)));
  uint64_t task_id = 0;
  uint64_t dispatched_id = 0;
  ASSERT_TRUE(sched.CreateTask("named", [&] {
    task_id = CRoutine::Current()->id();
  }).ok());
  EXPECT_EQ(sched.RunReady(), 1u);
  ASSERT_TRUE(sched.Dispatch([&] { dispatched_id = CRoutine::Current()->id(); }));
  EXPECT_EQ(sched.RunReady(), 1u);
  EXPECT_NE(task_id, 0u);
  EXPECT_NE(dispatched_id, task_id);
}

TEST(RoutineRecyclingTest, AdmissionAndShutdownRefuseThoughRoutinesAreKept) {
  Scheduler::Options o = Manual(DefaultSchedulerConfig(1));
  o.max_routines = 2;
  Scheduler sched(o);
  int ran = 0;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(sched.Dispatch([&] { ++ran; }));
  EXPECT_EQ(sched.RunReady(), 2u);  // two finished routines, kept
  // Two named tasks (never reused) fill the live set: a kept routine must
  // not take a dispatch past max_routines.
  ASSERT_TRUE(sched.CreateTask("a", [&] { ++ran; }).ok());
  ASSERT_TRUE(sched.CreateTask("b", [&] { ++ran; }).ok());
  auto owner = std::make_shared<int>(1);
  std::weak_ptr<int> watch = owner;
  EXPECT_FALSE(sched.Dispatch([&] { ++ran; }, timer::Route{}, std::move(owner)));
  EXPECT_TRUE(watch.expired());  // the refused task and its owner are gone
  EXPECT_EQ(sched.stats().refused, 1u);
  EXPECT_EQ(sched.RunReady(), 2u);  // the tasks
  ASSERT_TRUE(sched.Dispatch([&] { ++ran; }));  // room again
  EXPECT_EQ(sched.RunReady(), 1u);
  sched.Shutdown();
  EXPECT_FALSE(sched.Dispatch([&] { ++ran; }));
  EXPECT_EQ(sched.stats().refused, 2u);
  EXPECT_EQ(ran, 5);
  EXPECT_EQ(sched.stats().live, 0u);
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
