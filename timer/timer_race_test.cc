// Stop/destroy races on the real clock with real threads: timers started,
// stopped and destroyed from several threads while their callbacks run on the
// callback executor. Run under --config=tsan and --config=asan to be
// meaningful; the assertions check Stop()'s contract directly.
//
// Real time is used because the races are the point. No assertion depends on
// how fast anything runs: iteration counts are fixed, waits are on conditions,
// and the one deliberate pause (QuiescentAfterStop) can only miss a bug, never
// invent one.

#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "timer/callback_executor.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

struct Probe {
  std::atomic<int> in_callback{0};
  std::atomic<int> fires{0};
  std::atomic<int> overlaps{0};  // callback entered while already running
};

TimerOptions ProbeOptions(const std::string& name, Probe* probe, bool oneshot,
                          absl::Duration work) {
  TimerOptions o;
  o.name = name;
  o.period = absl::Milliseconds(2);
  o.oneshot = oneshot;
  o.callback = [probe, work] {
    if (probe->in_callback.fetch_add(1) != 0) ++probe->overlaps;
    ++probe->fires;
    if (work > absl::ZeroDuration()) SteadyClock::Get()->SleepFor(work);
    probe->in_callback.fetch_sub(1);
  };
  return o;
}

class TimerRaceTest : public ::testing::Test {
 protected:
  TimerRaceTest() : executor_(Options()), driver_(SteadyClock::Get(), &executor_) {}
  static CallbackExecutor::Options Options() {
    CallbackExecutor::Options o;
    o.threads = 4;
    return o;
  }
  CallbackExecutor executor_;
  TimerSystem driver_;
};

TEST_F(TimerRaceTest, StopReturnsOnlyWhenTheCallbackIsNotRunning) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 300;
  std::vector<std::thread> threads;
  std::atomic<int> violations{0};
  std::vector<Probe> probes(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      Probe& probe = probes[t];
      Timer timer(ProbeOptions("race" + std::to_string(t), &probe, t % 2 == 1,
                               absl::Microseconds(200)),
                  &driver_);
      for (int round = 0; round < kRounds; ++round) {
        ASSERT_TRUE(timer.Schedule().ok());
        // Let it (maybe) fire: wait a random 0..3 ms of real time.
        SteadyClock::Get()->SleepFor(absl::Microseconds(rng() % 3000));
        timer.Stop();
        if (probe.in_callback.load() != 0) ++violations;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(violations, 0);
  int total = 0;
  for (Probe& p : probes) {
    EXPECT_EQ(p.overlaps, 0) << "a callback ran concurrently with itself";
    total += p.fires;
  }
  EXPECT_GT(total, 0);
}

TEST_F(TimerRaceTest, DestroyWhileTheCallbackRunsWaitsForIt) {
  for (int i = 0; i < 200; ++i) {
    Probe probe;
    {
      Timer timer(ProbeOptions("doomed", &probe, false, absl::Microseconds(500)),
                  &driver_);
      ASSERT_TRUE(timer.Schedule().ok());
      SteadyClock::Get()->SleepFor(absl::Microseconds(100 * (i % 40)));
    }  // ~Timer: synchronous stop
    ASSERT_EQ(probe.in_callback.load(), 0) << "round " << i;
  }
}

TEST_F(TimerRaceTest, SharedTimersHammeredFromManyThreadsStayConsistent) {
  constexpr int kTimers = 4;
  std::vector<Probe> probes(kTimers);
  std::vector<std::unique_ptr<Timer>> timers;
  for (int i = 0; i < kTimers; ++i) {
    timers.push_back(std::make_unique<Timer>(
        ProbeOptions("shared" + std::to_string(i), &probes[i], i == 0,
                     absl::ZeroDuration()),
        &driver_));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      for (int op = 0; op < 2000; ++op) {
        Timer& timer = *timers[rng() % kTimers];
        switch (rng() % 4) {
          case 0:
          case 1:
            ASSERT_TRUE(timer.Schedule().ok());
            break;
          case 2:
            timer.Stop();
            break;
          default:
            (void)timer.GetStatistics();
            (void)timer.IsRunning();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (auto& t : timers) t->Stop();
  for (Probe& p : probes) {
    EXPECT_EQ(p.in_callback.load(), 0);
    EXPECT_EQ(p.overlaps, 0);
  }
}

TEST_F(TimerRaceTest, QuiescentAfterStop) {
  // After Stop() returns nothing may fire again, however long we look.
  std::vector<Probe> probes(16);
  std::vector<std::unique_ptr<Timer>> timers;
  for (size_t i = 0; i < probes.size(); ++i) {
    timers.push_back(std::make_unique<Timer>(
        ProbeOptions("q" + std::to_string(i), &probes[i], false, absl::ZeroDuration()),
        &driver_));
    ASSERT_TRUE(timers.back()->Schedule().ok());
  }
  SteadyClock::Get()->SleepFor(absl::Milliseconds(20));
  std::vector<int> at_stop;
  for (size_t i = 0; i < timers.size(); ++i) {
    timers[i]->Stop();
    at_stop.push_back(probes[i].fires.load());
  }
  SteadyClock::Get()->SleepFor(absl::Milliseconds(30));  // 15 periods
  executor_.WaitIdle();
  for (size_t i = 0; i < timers.size(); ++i) {
    EXPECT_EQ(probes[i].fires.load(), at_stop[i]) << "fired after Stop(): " << i;
  }
}

}  // namespace
}  // namespace timer
}  // namespace cyber
