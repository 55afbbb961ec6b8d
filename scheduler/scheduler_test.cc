#include "scheduler/scheduler.h"

#include <pthread.h>

#include <time.h>

#include <atomic>
#include <map>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cyber/time/simulated_clock.h"
#include "cyber/time/steady_clock.h"
#include "cyber/common/test_waits.h"
#include "gtest/gtest.h"
#include "timer/testing/steady_time_simulated_clock.h"
#include "timer/timer.h"

namespace cyber {
namespace scheduler {
namespace {

Scheduler::Options WithProcessors(int n) {
  Scheduler::Options o;
  o.name = "test";
  o.config = DefaultSchedulerConfig(n);
  return o;
}

using test::Eventually;
using test::Gate;

std::string ThreadName() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

TEST(SchedulerTest, ReserveRoutinesKeepsContextsAndRefusesBeyondItsCaps) {
  Scheduler::Options o = WithProcessors(1);
  o.run_threads = false;
  Scheduler s(std::move(o));
  EXPECT_TRUE(s.ReserveRoutines(8).ok());
  EXPECT_GE(s.stack_stats().mapped, 8u);  // each context holds a stack
  const absl::Status refused = s.ReserveRoutines(1000);
  EXPECT_EQ(refused.code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(refused.message().find("scheduler \"test\": ReserveRoutines(1000)"),
            std::string::npos)
      << refused;
  // Reserved routines run like any other.
  int ran = 0;
  ASSERT_TRUE(s.Dispatch([&ran] { ++ran; }, 0));
  s.RunReady();
  EXPECT_EQ(ran, 1);
}

TEST(SchedulerTest, RoutinesYieldAndResumeInOrder) {
  Scheduler sched(WithProcessors(1));
  Gate gate;
  std::mutex mu;
  std::vector<std::string> trace;
  ASSERT_TRUE(sched.Dispatch([&] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());  // the only processor is busy: A and B queue up
  auto body = [&](const std::string& who) {
    for (int i = 0; i < 3; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        trace.push_back(who + std::to_string(i));
      }
      CRoutine::Yield();
    }
  };
  auto a = sched.Async(body, std::string("A"));
  auto b = sched.Async(body, std::string("B"));
  gate.Open();
  a.get();
  b.get();
  EXPECT_EQ(trace, (std::vector<std::string>{"A0", "B0", "A1", "B1", "A2", "B2"}));
}

TEST(SchedulerTest, SleepForWakesExactlyOnTimeOnTheSimulatedWheel) {
  SimulatedClock clock(Instant() + absl::Hours(2));
  Scheduler sched(WithProcessors(2));
  timer::TimerSystem driver(&clock, &sched);
  sched.SetTimerSystem(&driver);
  const Instant start = clock.Now();
  std::atomic<bool> about_to_sleep{false};
  auto woke = sched.Async([&] {
    about_to_sleep = true;
    CRoutine::SleepFor(absl::Milliseconds(50));
    return clock.Now();
  });
  ASSERT_TRUE(Eventually([&] { return driver.wheel().size() == 1; }));
  driver.AwaitIdle();
  EXPECT_EQ(driver.PlannedWake(), start + absl::Milliseconds(50));
  clock.AdvanceTo(start + absl::Milliseconds(49));
  driver.AwaitIdle();
  EXPECT_EQ(woke.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  clock.AdvanceTo(start + absl::Milliseconds(50));
  EXPECT_EQ(woke.get(), start + absl::Milliseconds(50));  // not early, not late
  sched.Shutdown();
}

TEST(SchedulerTest, DataWaitRoutineResumesOnNotify) {
  Scheduler sched(WithProcessors(2));
  std::mutex mu;
  std::condition_variable cv;
  int received = 0;
  ASSERT_TRUE(sched.CreateTask("consumer", [&] {
    while (true) {
      CRoutine::WaitForData();
      std::lock_guard<std::mutex> lock(mu);
      ++received;
      cv.notify_all();
    }
  }).ok());
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(sched.NotifyTask("consumer").ok());
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return received >= i; }));
  }
  // The loop never ends by itself: removing the task cancels it.
  ASSERT_TRUE(sched.RemoveTask("consumer").ok());
  EXPECT_EQ(sched.NotifyTask("consumer").code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(Eventually([&] { return sched.stats().live == 0; }));
  EXPECT_EQ(received, 5);
}

TEST(SchedulerTest, RemoveTaskUnwindsTheRoutineStack) {
  Scheduler sched(WithProcessors(1));
  std::atomic<bool> destroyed{false};
  std::atomic<bool> waiting{false};
  struct Guard {
    std::atomic<bool>* flag;
    ~Guard() { *flag = true; }
  };
  ASSERT_TRUE(sched.CreateTask("waiter", [&] {
    Guard guard{&destroyed};
    waiting = true;
    CRoutine::WaitForData();
    ADD_FAILURE() << "woke without data";
  }).ok());
  ASSERT_TRUE(Eventually([&] { return waiting.load(); }));
  ASSERT_TRUE(sched.RemoveTask("waiter").ok());
  ASSERT_TRUE(Eventually([&] { return destroyed.load(); }));
}

TEST(SchedulerTest, ClassicPolicyRunsHigherPriorityFirst) {
  Scheduler sched(WithProcessors(1));
  Gate gate;
  ASSERT_TRUE(sched.Dispatch([&] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());
  std::mutex mu;
  std::vector<int> order;
  std::atomic<int> done{0};
  // Queued while the processor is busy: low, high, mid, high, low.
  const int priorities[] = {1, 15, 7, 15, 1};
  for (int i = 0; i < 5; ++i) {
    const int prio = priorities[i];
    ASSERT_TRUE(sched.CreateTask("t" + std::to_string(i), [&, prio] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(prio);
      ++done;
    }, prio).ok());
  }
  gate.Open();
  ASSERT_TRUE(Eventually([&] { return done.load() == 5; }));
  EXPECT_EQ(order, (std::vector<int>{15, 15, 7, 1, 1}));
}

TEST(SchedulerTest, PinnedRoutineStaysOnItsProcessor) {
  Scheduler sched(WithProcessors(2));
  std::mutex mu;
  std::vector<std::string> seen;
  std::atomic<bool> done{false};
  ASSERT_TRUE(sched.CreateTask("pinned", [&] {
    for (int i = 0; i < 200; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(ThreadName());
      }
      CRoutine::Yield();
    }
    done = true;
  }, 0, /*processor=*/1).ok());
  // Competing unpinned work keeps both processors busy meanwhile.
  std::vector<std::future<void>> noise;
  for (int i = 0; i < 200; ++i) {
    noise.push_back(sched.Async([] { CRoutine::Yield(); }));
  }
  for (auto& f : noise) f.get();
  ASSERT_TRUE(Eventually([&] { return done.load(); }));
  ASSERT_EQ(seen.size(), 200u);
  for (const std::string& name : seen) EXPECT_EQ(name, "default-1");
}

TEST(SchedulerTest, HundredThousandAsyncTasksFromFourThreadsRunExactlyOnce) {
  Scheduler sched(WithProcessors(2));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25000;
  std::vector<std::atomic<int>> runs(kThreads * kPerThread);
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      // In waves of 1,000 in flight per producer (up to 4,000 at once).
      constexpr int kWave = 1000;
      std::vector<std::future<int>> futures;
      futures.reserve(kWave);
      for (int base = 0; base < kPerThread; base += kWave) {
        futures.clear();
        for (int i = base; i < base + kWave; ++i) {
          futures.push_back(sched.Async([&runs](int k) {
            ++runs[k];
            return k;
          }, t * kPerThread + i));
        }
        for (int i = 0; i < kWave; ++i) {
          ASSERT_EQ(futures[i].get(), t * kPerThread + base + i);
        }
      }
    });
  }
  for (auto& p : producers) p.join();
  for (auto& r : runs) ASSERT_EQ(r.load(), 1);
  EXPECT_EQ(sched.stats().dispatched, static_cast<uint64_t>(kThreads * kPerThread));
  // Stacks are reused, not mapped per task.
  EXPECT_LT(sched.stack_stats().mapped, 1000u);
}

TEST(SchedulerTest, AsyncDeliversTheExceptionThroughTheFuture) {
  Scheduler sched(WithProcessors(1));
  auto f = sched.Async([]() -> int { throw std::runtime_error("lidar offline"); });
  try {
    f.get();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "lidar offline");
  }
}

TEST(SchedulerTest, TimerCallbacksRunInsideRoutinesAndMayYield) {
  Scheduler sched(WithProcessors(1));  // one processor: yielding must share it
  timer::TimerSystem driver(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(&driver);
  std::atomic<bool> b_ran{false};
  std::atomic<bool> a_in_routine{false};
  std::atomic<bool> a_done{false};
  TimerOptions a;
  a.name = "yielder";
  a.period = absl::Milliseconds(2);
  a.oneshot = true;
  a.callback = [&] {
    a_in_routine = CRoutine::Current() != nullptr;
    while (!b_ran) CRoutine::Yield();  // would starve B if it held the thread
    a_done = true;
  };
  TimerOptions b = a;
  b.name = "other";
  b.period = absl::Milliseconds(4);
  b.callback = [&] { b_ran = true; };
  Timer ta(a, &driver);
  Timer tb(b, &driver);
  ASSERT_TRUE(ta.Schedule().ok());
  ASSERT_TRUE(tb.Schedule().ok());
  ASSERT_TRUE(Eventually([&] { return a_done.load(); }));
  EXPECT_TRUE(a_in_routine);
  EXPECT_TRUE(b_ran);
  ta.Stop();
  tb.Stop();
  sched.Shutdown();
}

TEST(SchedulerTest, TimerStopFromItsOwnCallbackAfterMovingThreadsReturns) {
  // A callback may resume on another processor after a Yield; Stop() must
  // still recognise it as its own caller (it compares coroutines, not
  // threads) and not wait for itself.
  Scheduler sched(WithProcessors(2));
  timer::TimerSystem driver(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(&driver);
  std::atomic<bool> moved{false};
  std::atomic<bool> stopped{false};
  std::unique_ptr<Timer> t;
  TimerOptions o;
  o.name = "wanderer";
  o.period = absl::Milliseconds(2);
  o.callback = [&] {
    const std::string first = ThreadName();
    // Bounded: ~25 s under TSan at 100,000 yields on a loaded 2-core machine.
    for (int i = 0; i < 10000 && ThreadName() == first; ++i) CRoutine::Yield();
    moved = ThreadName() != first;
    t->Stop();  // from its own callback, possibly on another thread
    stopped = true;
  };
  t = std::make_unique<Timer>(o, &driver);
  // Keep the other processor busy-ish so the yielding routine migrates.
  std::vector<std::future<void>> noise;
  for (int i = 0; i < 2000; ++i) noise.push_back(sched.Async([] { CRoutine::Yield(); }));
  ASSERT_TRUE(t->Schedule().ok());
  ASSERT_TRUE(Eventually([&] { return stopped.load(); })) << "Stop() waited for itself";
  for (auto& f : noise) f.get();
  EXPECT_FALSE(t->IsRunning());
  t.reset();
  sched.Shutdown();
}

TEST(SchedulerTest, StopFromAnotherRoutineWaitsForAParkedCallbackWithoutStarvingIt) {
  // One processor: the waiting Stop() must yield, not block the thread the
  // parked callback needs to finish; and it returns only after it finished.
  Scheduler sched(WithProcessors(1));
  timer::TimerSystem driver(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(&driver);
  std::atomic<bool> in_callback{false};
  std::atomic<bool> callback_done{false};
  TimerOptions o;
  o.name = "sleepy";
  o.period = absl::Milliseconds(2);
  o.oneshot = true;
  o.callback = [&] {
    in_callback = true;
    CRoutine::SleepFor(absl::Milliseconds(20));
    callback_done = true;
  };
  Timer t(o, &driver);
  ASSERT_TRUE(t.Schedule().ok());
  ASSERT_TRUE(Eventually([&] { return in_callback.load(); }));
  auto done_when_stop_returned = sched.Async([&] {
    t.Stop();
    return callback_done.load();
  });
  EXPECT_TRUE(done_when_stop_returned.get()) << "Stop() returned before its callback ended";
  sched.Shutdown();
}

TEST(SchedulerTest, SleepForAfterTheTimerSystemShutDownEndsTheRoutineCleanly) {
  Scheduler sched(WithProcessors(1));
  auto driver = std::make_unique<timer::TimerSystem>(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(driver.get());
  std::atomic<int> naps{0};
  ASSERT_TRUE(sched.CreateTask("looper", [&] {
    while (true) {
      CRoutine::SleepFor(absl::Milliseconds(1));
      ++naps;
    }
  }).ok());
  ASSERT_TRUE(Eventually([&] { return naps.load() > 3; }));
  driver->Shutdown();  // as cyber::Shutdown does before the scheduler
  // A routine that tries to sleep now can never be woken: it ends (unwinding
  // cleanly) instead of aborting the process.
  std::atomic<bool> unwound{false};
  struct Guard {
    std::atomic<bool>* flag;
    ~Guard() { *flag = true; }
  };
  ASSERT_TRUE(sched.CreateTask("late_sleeper", [&] {
    Guard guard{&unwound};
    CRoutine::SleepFor(absl::Milliseconds(1));
    ADD_FAILURE() << "slept on a shut-down timer system";
  }).ok());
  ASSERT_TRUE(Eventually([&] { return unwound.load(); }));
  sched.Shutdown();  // the looper, parked on the stopped wheel, is cancelled
  EXPECT_EQ(sched.stats().live, 0u);
}

TEST(SchedulerTest, ShutdownCancellingATimerCallbackIsNotCountedAsAnException) {
  Scheduler sched(WithProcessors(1));
  timer::TimerSystem driver(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(&driver);
  std::atomic<bool> parked{false};
  TimerOptions o;
  o.name = "parked";
  o.period = absl::Milliseconds(2);
  o.callback = [&] {
    parked = true;
    CRoutine::SleepFor(absl::Hours(1));
  };
  Timer t(o, &driver);
  ASSERT_TRUE(t.Schedule().ok());
  ASSERT_TRUE(Eventually([&] { return parked.load(); }));
  sched.Shutdown();  // cancels the parked callback
  EXPECT_EQ(t.GetStatistics().exceptions, 0u);
  EXPECT_FALSE(t.IsRunning());
  t.Stop();
}

TEST(SchedulerTest, AProcessorBlockedByALongTaskLosesNoTimerCallback) {
  // One of two processors is blocked for 300 ms by a task that never yields
  // (bad robot code); a 2 ms periodic timer keeps running on the other, and
  // every call is accounted for: made, or counted as missed.
  Scheduler sched(WithProcessors(2));
  timer::TimerSystem driver(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(&driver);
  Gate release;
  std::atomic<bool> blocking{false};
  ASSERT_TRUE(sched.Dispatch([&] {
    blocking = true;
    release.Wait();  // holds its processor thread
  }));
  ASSERT_TRUE(Eventually([&] { return blocking.load(); }));
  std::atomic<int> calls{0};
  TimerOptions o;
  o.name = "steady";
  o.period = absl::Milliseconds(2);
  o.callback = [&] { ++calls; };
  Timer t(o, &driver);
  ASSERT_TRUE(t.Schedule().ok());
  SteadyClock::Get()->SleepFor(absl::Milliseconds(300));  // the blocked span
  release.Open();
  t.Stop();
  const TimerStatistics s = t.GetStatistics();
  EXPECT_GT(calls.load(), 10);  // it ran meanwhile, on the free processor
  EXPECT_EQ(s.fires, static_cast<uint64_t>(calls.load()));
  EXPECT_EQ(s.early_fires, 0u);
  EXPECT_EQ(s.dispatch_refusals, 0u);
  sched.Shutdown();
}

TEST(SchedulerTest, BoundedRoutinesRefuseAndCount) {
  Scheduler::Options o = WithProcessors(1);
  o.max_routines = 4;
  Scheduler sched(o);
  Gate gate;
  ASSERT_TRUE(sched.Dispatch([&] { gate.Wait(); }));
  ASSERT_TRUE(gate.AwaitEntered());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sched.Dispatch([] {}));
  EXPECT_FALSE(sched.Dispatch([] {}));  // a 5th live routine: refused
  EXPECT_EQ(sched.CreateTask("late", [] {}).code(), absl::StatusCode::kResourceExhausted);
  auto refused = sched.Async([] { return 1; });
  EXPECT_THROW(refused.get(), std::runtime_error);
  EXPECT_EQ(sched.stats().refused, 2u);
  gate.Open();
}

TEST(SchedulerTest, CreateTaskRejectsBadInput) {
  Scheduler sched(WithProcessors(2));
  EXPECT_EQ(sched.CreateTask("", [] {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sched.CreateTask("x", nullptr).code(), absl::StatusCode::kInvalidArgument);
  const absl::Status bad_cpu = sched.CreateTask("x", [] {}, 0, 7);
  EXPECT_EQ(bad_cpu.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_cpu.message().find("processor 7 is outside group \"default\""),
            std::string::npos)
      << bad_cpu;
  ASSERT_TRUE(sched.CreateTask("dup", [] { CRoutine::WaitForData(); }).ok());
  EXPECT_EQ(sched.CreateTask("dup", [] {}).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(sched.RemoveTask("nope").code(), absl::StatusCode::kNotFound);
}

TEST(SchedulerTest, ShutdownWithTenThousandQueuedAndSleepingRoutinesJoins) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  auto sched = std::make_unique<Scheduler>(WithProcessors(2));
  timer::TimerSystem driver(&clock, sched.get());
  sched->SetTimerSystem(&driver);
  std::atomic<int> parked{0};
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(sched->CreateTask("sleeper" + std::to_string(i), [&] {
      ++parked;
      CRoutine::SleepFor(absl::Hours(5));
    }).ok());
    ASSERT_TRUE(sched->CreateTask("waiter" + std::to_string(i), [&] {
      ++parked;
      CRoutine::WaitForData();
    }).ok());
  }
  ASSERT_TRUE(Eventually([&] { return parked.load() == 40; }));
  Gate gate;
  ASSERT_TRUE(sched->Dispatch([&] { gate.Wait(); }));
  ASSERT_TRUE(sched->Dispatch([&] { gate.Wait(); }));  // both processors busy
  std::atomic<int> ran{0};
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(sched->Dispatch([&] { ++ran; }));
  std::thread opener([&] { gate.Open(); });
  sched->Shutdown();  // must return: cancels, drains, joins
  opener.join();
  EXPECT_EQ(sched->stats().live, 0u);
  EXPECT_LE(ran.load(), 10000);
  EXPECT_EQ(driver.wheel().size(), 0u);  // the sleepers' wheel entries are gone
  EXPECT_FALSE(sched->Dispatch([] {}));  // refused after shutdown
  sched.reset();
}

TEST(SchedulerTest, GroupsAndTaskPrioritiesComeFromACyberStyleConf) {
  auto config = ParseSchedulerConfig(R"(
    scheduler_conf {
      policy: "classic"
      classic_conf {
        groups: [
          { name: "compute" processor_num: 1 affinity: "range" cpuset: "0-1"
            processor_policy: "SCHED_OTHER" processor_prio: 0
            tasks: [ { name: "fusion" prio: 12 } ] },
          { name: "io" processor_num: 1
            tasks: [ { name: "lidar_driver" prio: 3 } ] }
        ]
      }
    })", "test.conf");
  ASSERT_TRUE(config.ok()) << config.status();
  Scheduler::Options o;
  o.name = "conf";
  o.config = *config;
  Scheduler sched(o);
  EXPECT_EQ(sched.stats().processors, 2);
  std::mutex mu;
  std::map<std::string, std::string> ran_on;
  std::atomic<int> done{0};
  for (const char* task : {"fusion", "lidar_driver"}) {
    ASSERT_TRUE(sched.CreateTask(task, [&, task] {
      std::lock_guard<std::mutex> lock(mu);
      ran_on[task] = ThreadName();
      ++done;
    }).ok());
  }
  ASSERT_TRUE(Eventually([&] { return done.load() == 2; }));
  EXPECT_EQ(ran_on["fusion"], "compute-0");
  EXPECT_EQ(ran_on["lidar_driver"], "io-0");
}

TEST(SchedulerTest, IdleProcessorsSleepInsteadOfSpinning) {
  // Real time, but the bound cannot be broken by a slow machine: idle
  // processors block on a condition variable, so over 300 ms they burn CPU
  // only if something spins. A spinning pool of 2 would use ~600 ms.
  Scheduler sched(WithProcessors(2));
  auto cpu_seconds = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
  };
  sched.Async([] {}).get();  // processors started and went idle
  const double before = cpu_seconds();
  SteadyClock::Get()->SleepFor(absl::Milliseconds(300));
  EXPECT_LT(cpu_seconds() - before, 0.05);
}

void Recurse(int depth) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  if (depth > 0) Recurse(depth - 1);
  frame[1] = frame[0];
}

TEST(SchedulerDeathTest, StackOverflowDiesOnTheGuardPage) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        Scheduler::Options o = WithProcessors(1);
        o.stack_size = 64 << 10;
        Scheduler sched(o);
        // 1 MiB of frames on a 64 KiB stack.
        sched.Async([] { Recurse(1024); }).get();
      },
      "");
}

// --- Early hand-over of timer work (held until its instant) ---------------

using SteadyTime = std::chrono::steady_clock::time_point;

SteadyTime SteadyNow() { return std::chrono::steady_clock::now(); }

TEST(SchedulerTest, WorkHandedOverAheadOfItsInstantBeginsAtItNeverBefore) {
  Scheduler sched(WithProcessors(2));
  // 100 ms ahead: the two lines below take far less, so the routine is
  // held (counted); whatever the machine does, it never begins early.
  const SteadyTime not_before = SteadyNow() + std::chrono::milliseconds(100);
  std::promise<SteadyTime> began;
  {
    timer::DispatchBatch early(&sched, not_before);
    EXPECT_EQ(timer::DispatchBatch::NotBefore(), not_before);
    ASSERT_TRUE(sched.Dispatch([&began] { began.set_value(SteadyNow()); }));
  }
  EXPECT_EQ(timer::DispatchBatch::NotBefore(), std::nullopt);
  EXPECT_GE(began.get_future().get(), not_before);
  const Scheduler::Stats s = sched.stats();
  EXPECT_EQ(s.handoffs_early, 1u);
  EXPECT_GT(s.handoff_held, absl::ZeroDuration());
}

TEST(SchedulerTest, AProcessorWaitingForHeldWorkRunsReadyWorkMeanwhile) {
  // One processor, a routine held for an hour: the processor waits for
  // it on its own timer, yet wakes for new work and runs it; shutdown does
  // not wait for the hour, and the held routine's body never runs.
  auto sched = std::make_unique<Scheduler>(WithProcessors(1));
  std::atomic<bool> held_ran{false};
  {
    timer::DispatchBatch early(sched.get(), SteadyNow() + std::chrono::hours(1));
    ASSERT_TRUE(sched->Dispatch([&held_ran] { held_ran = true; }));
  }
  EXPECT_EQ(sched->queued(), 1u);  // held counts as queued
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(sched->Async([] { return 7; }).get(), 7);
  }
  EXPECT_FALSE(held_ran.load());
  EXPECT_EQ(sched->stats().handoffs_early, 1u);
  sched->Shutdown();
  EXPECT_FALSE(held_ran.load());
  EXPECT_EQ(sched->stats().live, 0u);
}

TEST(SchedulerTest, HeldWorkRunsByPriorityWhenItsInstantComes) {
  Scheduler sched(WithProcessors(1));
  std::mutex mu;
  std::vector<int> order;
  std::promise<void> done;
  {
    // Handed over together: released together, higher priority first.
    timer::DispatchBatch early(&sched,
                               SteadyNow() + std::chrono::milliseconds(20));
    for (const int priority : {1, 5, 3}) {
      ASSERT_TRUE(sched.Dispatch(
          [&, priority] {
            std::lock_guard<std::mutex> lock(mu);
            order.push_back(priority);
            if (order.size() == 3) done.set_value();
          },
          priority));
    }
  }
  done.get_future().get();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(order, (std::vector<int>{5, 3, 1}));
}

TEST(SchedulerTest, ARoutineOfAnotherSchedulerWokenInAnEarlyBatchIsHeldToo) {
  // The batch is `first`'s; a routine `second` makes ready on this thread
  // meanwhile (a sleep the pass ended) must wait for the instant as well.
  Scheduler first(WithProcessors(1));
  Scheduler second(WithProcessors(1));
  std::atomic<bool> ran{false};
  {
    timer::DispatchBatch early(&first, SteadyNow() + std::chrono::hours(1));
    ASSERT_TRUE(second.Dispatch([&ran] { ran = true; }));
  }
  EXPECT_EQ(second.stats().handoffs_early, 1u);
  EXPECT_EQ(second.Async([] { return 1; }).get(), 1);
  EXPECT_FALSE(ran.load());
  second.Shutdown();  // released, cancelled: no hour's wait
  EXPECT_FALSE(ran.load());
}

// Simulated time whose instants claim to be real steady time, so that a
// thread-free timer system hands work over early at instants the test
// picks, to processors that hold it in real time.
using timer::SteadyTimeSimulatedClock;

timer::TimerSystem::Options ThreadFree() {
  timer::TimerSystem::Options options;
  options.run_thread = false;
  return options;
}

TEST(SchedulerTest, ATimerCallHandedOverEarlyBeginsAtItsDeadline) {
  Scheduler sched(WithProcessors(2));
  // Starts at the real present: the call's instant is 50 ms from now.
  SteadyTimeSimulatedClock clock(SteadyClock::Get()->Now());
  timer::TimerSystem driver(&clock, &sched, ThreadFree());
  ASSERT_EQ(driver.system()->hand_over_lead(), absl::Microseconds(400));
  const Instant start = clock.Now();
  std::promise<std::pair<timer::TimerEvent, SteadyTime>> called;
  timer::TimerOptions options;
  options.oneshot = true;
  options.period = absl::Milliseconds(50);
  options.event_callback = [&called](const timer::TimerEvent& e) {
    called.set_value({e, SteadyNow()});
  };
  timer::Timer timeout(std::move(options), &driver);
  ASSERT_TRUE(timeout.Schedule().ok());
  // The timer's own clock at the deadline (it reads it when the call
  // begins), the tick thread's pass 200 us before it.
  const Instant deadline = start + absl::Milliseconds(50);
  clock.AdvanceTo(deadline);
  driver.Step(deadline - absl::Microseconds(200));
  EXPECT_EQ(driver.stats().early_passes, 1u);
  const auto [event, began] = called.get_future().get();
  EXPECT_GE(began, SteadyClock::ToTimePoint(deadline));  // real time
  EXPECT_EQ(event.expected_time, deadline);
  EXPECT_GE(event.actual_time, event.expected_time);
  EXPECT_EQ(timeout.GetStatistics().early_fires, 0u);
  driver.Shutdown();
}

TEST(SchedulerTest, StopDropsATimerCallHandedOverEarlyAndShutdownDoesNotWait) {
  Scheduler sched(WithProcessors(2));
  // An hour ahead of real time: the call, handed over, is held that long.
  SteadyTimeSimulatedClock clock(SteadyClock::Get()->Now() + absl::Hours(1));
  timer::TimerSystem driver(&clock, &sched, ThreadFree());
  const Instant start = clock.Now();
  std::atomic<int> calls{0};
  timer::TimerOptions options;
  options.period = absl::Milliseconds(10);
  options.callback = [&calls] { calls.fetch_add(1); };
  timer::Timer periodic(std::move(options), &driver);
  ASSERT_TRUE(periodic.Schedule().ok());
  driver.Step(start + absl::Milliseconds(10) - absl::Microseconds(100));
  EXPECT_EQ(sched.stats().handoffs_early, 1u);
  EXPECT_EQ(sched.queued(), 1u);
  periodic.Stop();  // a queued call: dropped, and Stop() does not wait
  sched.Shutdown();
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(periodic.GetStatistics().fires, 0u);
  driver.Shutdown();
}

TEST(SchedulerTest, NoEarlyHandOverOnASimulatedClockOrWhenOff) {
  for (const bool on : {true, false}) {
    SimulatedClock clock(Instant() + absl::Hours(1));
    Scheduler::Options o = WithProcessors(2);
    o.anticipate_timer_work = on;
    Scheduler sched(std::move(o));
    EXPECT_EQ(sched.HandOverLead().count() > 0, on);
    timer::TimerSystem driver(on ? static_cast<Clock*>(&clock)
                                : static_cast<Clock*>(SteadyClock::Get()),
                             &sched);
    sched.SetTimerSystem(&driver);
    EXPECT_EQ(driver.system()->hand_over_lead(), absl::ZeroDuration()) << on;
    std::atomic<int> calls{0};
    timer::TimerOptions options;
    options.period = absl::Milliseconds(2);
    options.callback = [&] { calls.fetch_add(1); };
    timer::Timer periodic(std::move(options), &driver);
    ASSERT_TRUE(periodic.Schedule().ok());
    // Simulated time moves only here: tick by tick until five calls ran.
    ASSERT_TRUE(Eventually([&] {
      if (on) {
        driver.AwaitIdle();
        clock.Advance(absl::Milliseconds(2));
      }
      return calls.load() >= 5;
    }));
    periodic.Stop();
    const Scheduler::Stats s = sched.stats();
    EXPECT_EQ(s.handoffs_early, 0u) << on;
    EXPECT_EQ(driver.stats().early_passes, 0u) << on;
    // Nothing announced (simulated) or nobody anticipating (off).
    EXPECT_EQ(s.handoff_wakeups, 0u) << on;
  }
}

TEST(SchedulerTest, PeriodicCallsOnTheSteadyClockAreNeverEarly) {
  // The whole path on real time: tick thread, early hand-over, a processor
  // waiting on its own timer. Only what holds on any machine is asserted:
  // no call begins before its expected time (how many were handed over
  // early depends on how late this machine wakes the tick thread).
  Scheduler sched(WithProcessors(2));
  timer::TimerSystem driver(SteadyClock::Get(), &sched);
  sched.SetTimerSystem(&driver);
  std::atomic<int> calls{0};
  std::atomic<int> early{0};
  timer::TimerOptions options;
  options.period = absl::Milliseconds(5);
  options.event_callback = [&](const timer::TimerEvent& e) {
    if (e.actual_time < e.expected_time) early.fetch_add(1);
    calls.fetch_add(1);
  };
  timer::Timer periodic(std::move(options), &driver);
  ASSERT_TRUE(periodic.Schedule().ok());
  ASSERT_TRUE(Eventually([&] { return calls.load() >= 40; }));
  periodic.Stop();
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(periodic.GetStatistics().early_fires, 0u);
  const Scheduler::Stats s = sched.stats();
  RecordProperty("handoffs_early", static_cast<int>(s.handoffs_early));
  RecordProperty("early_passes",
                 static_cast<int>(driver.stats().early_passes));
}

// --- Batched hand-over (Dispatcher::BeginBatch / EndBatch) ----------------

Scheduler::Options WithoutThreads() {
  Scheduler::Options o = WithProcessors(2);
  o.run_threads = false;
  return o;
}

TEST(SchedulerTest, ABatchHoldsItsRoutinesUntilItEndsThenQueuesThemInOrder) {
  Scheduler sched(WithoutThreads());
  std::vector<int> order;
  {
    timer::DispatchBatch batch(&sched);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(sched.Dispatch([&order, i] { order.push_back(i); }));
    }
    // Accepted (live), but not queued before the batch ends.
    EXPECT_EQ(sched.queued(), 0u);
    EXPECT_EQ(sched.stats().live, 3u);
  }
  EXPECT_EQ(sched.queued(), 3u);
  EXPECT_EQ(sched.RunReady(), 3u);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TEST(SchedulerTest, AnotherSchedulersBatchDoesNotHoldThisOnesWork) {
  Scheduler mine(WithoutThreads());
  Scheduler other(WithoutThreads());
  timer::DispatchBatch batch(&other);
  ASSERT_TRUE(mine.Dispatch([] {}));
  EXPECT_EQ(mine.queued(), 1u);  // not held: the batch is other's
  ASSERT_TRUE(other.Dispatch([] {}));
  EXPECT_EQ(other.queued(), 0u);  // held until the batch ends
  EXPECT_EQ(mine.RunReady(), 1u);
}

TEST(SchedulerTest, ARefusedDispatchInABatchIsRefusedAtOnce) {
  Scheduler::Options o = WithoutThreads();
  o.max_routines = 1;
  Scheduler sched(std::move(o));
  timer::DispatchBatch batch(&sched);
  EXPECT_TRUE(sched.Dispatch([] {}));
  EXPECT_FALSE(sched.Dispatch([] {}));  // full: refused now, not at the end
  EXPECT_EQ(sched.stats().refused, 1u);
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
