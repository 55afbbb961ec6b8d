// Repeated work (timer::RepeatedWork, Scheduler::MakeRepeatedWork): one
// routine per owner, queued again for each dispatch. What a timer's calls
// rely on: a run per dispatch while idle, a dispatch during a run followed
// by one more run (never before its own instant), only the latest of
// several waiting dispatches run, the owner held exactly while a run is in
// flight, refusals that leave it idle, and work that outlives its
// scheduler.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "cyber/common/test_waits.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "scheduler/scheduler.h"
#include "timer/timer.h"

namespace cyber {
namespace scheduler {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;
using test::Eventually;
using test::Gate;

SteadyTime SteadyNow() { return std::chrono::steady_clock::now(); }

Scheduler::Options Options(int processors, bool run_threads) {
  Scheduler::Options o;
  o.name = "repeat";
  o.config = DefaultSchedulerConfig(processors);
  o.run_threads = run_threads;
  return o;
}

// The owner's side: records each run's arg, its instant and its routine,
// and runs `during` inside each run.
struct Recorder {
  std::mutex mu;
  std::vector<uint32_t> args;
  std::vector<SteadyTime> began;
  std::vector<uint64_t> routines;
  std::function<void(uint32_t)> during;

  static void Run(void* self, uint32_t arg) {
    auto* r = static_cast<Recorder*>(self);
    {
      std::lock_guard<std::mutex> lock(r->mu);
      r->args.push_back(arg);
      r->began.push_back(SteadyNow());
      r->routines.push_back(CRoutine::Current()->id());
    }
    if (r->during) r->during(arg);
  }
  std::vector<uint32_t> Args() {
    std::lock_guard<std::mutex> lock(mu);
    return args;
  }
};

TEST(RepeatedWorkTest, EachDispatchOfIdleWorkRunsOnceInTheSameRoutine) {
  Scheduler sched(Options(1, /*run_threads=*/false));
  Recorder rec;
  std::shared_ptr<timer::RepeatedWork> work =
      sched.MakeRepeatedWork(&Recorder::Run, &rec, timer::Route{3, 0});
  ASSERT_NE(work, nullptr);
  EXPECT_EQ(work->dispatcher_id(), sched.id());
  EXPECT_EQ(sched.stats().live, 0u);  // idle work is not live

  auto owner = std::make_shared<int>(1);
  std::weak_ptr<int> watch = owner;
  ASSERT_TRUE(sched.DispatchRepeated(work.get(), 7, std::move(owner)));
  EXPECT_FALSE(watch.expired());  // held while the run is in flight
  EXPECT_EQ(sched.stats().live, 1u);
  EXPECT_EQ(sched.RunReady(), 1u);
  EXPECT_TRUE(watch.expired());  // released when it ended
  EXPECT_EQ(sched.stats().live, 0u);

  ASSERT_TRUE(sched.DispatchRepeated(work.get(), 8, nullptr));
  EXPECT_EQ(sched.RunReady(), 1u);
  EXPECT_EQ(rec.Args(), (std::vector<uint32_t>{7, 8}));
  ASSERT_EQ(rec.routines.size(), 2u);
  EXPECT_EQ(rec.routines[0], rec.routines[1]);  // one routine, reused
  const Scheduler::Stats s = sched.stats();
  EXPECT_EQ(s.dispatched, 2u);
  EXPECT_EQ(s.finished, 2u);
  EXPECT_EQ(s.live, 0u);
}

TEST(RepeatedWorkTest, ADispatchDuringARunFollowsItAndTheLatestReplacesAWaitingOne) {
  Scheduler sched(Options(1, /*run_threads=*/false));
  Recorder rec;
  auto work = sched.MakeRepeatedWork(&Recorder::Run, &rec, timer::Route{});
  rec.during = [&](uint32_t arg) {
    if (arg != 1) return;
    // From inside the run: it is in flight, so these follow it; the
    // second replaces the first, which never runs.
    EXPECT_TRUE(sched.DispatchRepeated(work.get(), 2, nullptr));
    EXPECT_TRUE(sched.DispatchRepeated(work.get(), 3, nullptr));
  };
  ASSERT_TRUE(sched.DispatchRepeated(work.get(), 1, nullptr));
  EXPECT_EQ(sched.RunReady(), 2u);
  EXPECT_EQ(rec.Args(), (std::vector<uint32_t>{1, 3}));
  const Scheduler::Stats s = sched.stats();
  EXPECT_EQ(s.dispatched, 2u);  // the replaced dispatch is not a run
  EXPECT_EQ(s.finished, 2u);
  EXPECT_EQ(s.live, 0u);
}

TEST(RepeatedWorkTest, AFollowingRunIsHeldUntilItsOwnInstantAndShutdownDropsIt) {
  Scheduler sched(Options(1, /*run_threads=*/false));
  Recorder rec;
  auto work = sched.MakeRepeatedWork(&Recorder::Run, &rec, timer::Route{});
  auto owner = std::make_shared<int>(1);
  std::weak_ptr<int> watch = owner;
  rec.during = [&](uint32_t arg) {
    if (arg != 1) return;
    // Handed over an hour ahead of its instant: held, whatever the
    // machine does meanwhile.
    timer::DispatchBatch early(&sched, SteadyNow() + std::chrono::hours(1));
    EXPECT_TRUE(sched.DispatchRepeated(work.get(), 2, nullptr));
  };
  ASSERT_TRUE(sched.DispatchRepeated(work.get(), 1, std::move(owner)));
  EXPECT_EQ(sched.RunReady(), 1u);
  EXPECT_EQ(rec.Args(), (std::vector<uint32_t>{1}));
  EXPECT_EQ(sched.queued(), 1u);  // held, not run
  EXPECT_FALSE(watch.expired());  // the following run holds the owner
  sched.Shutdown();  // releases it cancelled: it ends without running
  EXPECT_EQ(rec.Args(), (std::vector<uint32_t>{1}));
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(sched.stats().live, 0u);
}

TEST(RepeatedWorkTest, AFollowingRunBeginsAtItsInstantNeverBefore) {
  Scheduler sched(Options(2, /*run_threads=*/true));
  Recorder rec;
  auto work = sched.MakeRepeatedWork(&Recorder::Run, &rec, timer::Route{});
  std::atomic<int64_t> not_before_ns{0};
  rec.during = [&](uint32_t arg) {
    if (arg != 1) return;
    const SteadyTime not_before = SteadyNow() + std::chrono::milliseconds(30);
    not_before_ns = not_before.time_since_epoch().count();
    timer::DispatchBatch early(&sched, not_before);
    EXPECT_TRUE(sched.DispatchRepeated(work.get(), 2, nullptr));
  };
  ASSERT_TRUE(sched.DispatchRepeated(work.get(), 1, nullptr));
  ASSERT_TRUE(Eventually([&] { return rec.Args().size() == 2; }));
  std::lock_guard<std::mutex> lock(rec.mu);
  EXPECT_GE(rec.began[1].time_since_epoch().count(), not_before_ns.load());
}

TEST(RepeatedWorkTest, ARefusedDispatchLeavesItIdleAndReleasesTheOwner) {
  Scheduler::Options o = Options(1, /*run_threads=*/true);
  o.max_routines = 1;
  Scheduler sched(o);
  Gate gate;
  ASSERT_TRUE(sched.Dispatch([&] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());
  Recorder rec;
  auto work = sched.MakeRepeatedWork(&Recorder::Run, &rec, timer::Route{});
  auto owner = std::make_shared<int>(1);
  std::weak_ptr<int> watch = owner;
  EXPECT_FALSE(sched.DispatchRepeated(work.get(), 1, std::move(owner)));
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(sched.stats().refused, 1u);
  gate.Open();
  ASSERT_TRUE(Eventually([&] { return sched.stats().live == 0; }));
  ASSERT_TRUE(sched.DispatchRepeated(work.get(), 2, nullptr));  // idle again
  ASSERT_TRUE(Eventually([&] { return rec.Args().size() == 1; }));
  EXPECT_EQ(rec.Args(), (std::vector<uint32_t>{2}));
}

TEST(RepeatedWorkTest, WorkOfAnotherSchedulerOrAfterShutdownIsRefused) {
  Scheduler a(Options(1, /*run_threads=*/false));
  Recorder rec;
  auto work = a.MakeRepeatedWork(&Recorder::Run, &rec, timer::Route{});
  {
    Scheduler b(Options(1, /*run_threads=*/false));
    EXPECT_FALSE(b.DispatchRepeated(work.get(), 1, nullptr));
    EXPECT_FALSE(b.DispatchRepeated(nullptr, 1, nullptr));
  }
  a.Shutdown();
  EXPECT_FALSE(a.DispatchRepeated(work.get(), 1, nullptr));
  EXPECT_TRUE(rec.Args().empty());
}

TEST(RepeatedWorkTest, WorkThatSleptOutlivesItsSchedulerAndWheel) {
  std::shared_ptr<timer::RepeatedWork> work;
  Recorder rec;
  {
    SimulatedClock clock(Instant() + absl::Hours(1));
    Scheduler sched(Options(1, /*run_threads=*/true));
    timer::TickDriver driver(&clock, &sched);
    sched.SetTimerDriver(&driver);
    rec.during = [](uint32_t) { CRoutine::SleepFor(absl::Milliseconds(10)); };
    work = sched.MakeRepeatedWork(&Recorder::Run, &rec, timer::Route{});
    for (uint32_t arg = 1; arg <= 2; ++arg) {
      ASSERT_TRUE(sched.DispatchRepeated(work.get(), arg, nullptr));
      ASSERT_TRUE(Eventually([&] { return driver.wheel().size() == 1; }));
      clock.Advance(absl::Milliseconds(10));
      ASSERT_TRUE(Eventually([&] { return sched.stats().live == 0; }));
    }
    sched.Shutdown();
  }
  EXPECT_EQ(rec.Args(), (std::vector<uint32_t>{1, 2}));
  work.reset();  // after its scheduler and wheel: touches neither
}

TEST(RepeatedWorkTest, ATimersCallsRunInOneRoutine) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  Scheduler sched(Options(1, /*run_threads=*/true));
  timer::TickDriver driver(&clock, &sched);
  sched.SetTimerDriver(&driver);
  std::mutex mu;
  std::vector<uint64_t> routines;
  TimerOptions o;
  o.name = "reused";
  o.period = absl::Milliseconds(10);
  o.callback = [&] {
    std::lock_guard<std::mutex> lock(mu);
    routines.push_back(CRoutine::Current()->id());
  };
  Timer timer(o, &driver);
  ASSERT_TRUE(timer.Schedule().ok());
  for (int call = 1; call <= 3; ++call) {
    clock.Advance(absl::Milliseconds(10));
    ASSERT_TRUE(Eventually([&] {
      std::lock_guard<std::mutex> lock(mu);
      return routines.size() == static_cast<size_t>(call);
    }));
  }
  timer.Stop();
  EXPECT_EQ(routines[0], routines[1]);
  EXPECT_EQ(routines[1], routines[2]);
  EXPECT_TRUE(Eventually([&] { return sched.stats().live == 0; }));
  sched.Shutdown();
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
