// Timers share their locks and stop-wait lists (timer_stripes.h). These
// tests take two timer cores that hash to the same stripe and check that
// sharing changes nothing a timer promises: a Stop() waiting for its own
// timer's call is not released by the neighbour's calls ending (each of
// which wakes the stripe's list), and the neighbour keeps running meanwhile.
// Real threads on the real clock, as in timer_race_test: no assertion
// depends on speed, waits are on conditions.

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "timer/callback_executor.h"
#include "timer/timer_system.h"
#include "timer/timer_core.h"
#include "timer/timer_stripes.h"

namespace cyber {
namespace timer {
namespace {

TimerOptions Periodic(const char* name, std::function<void()> cb) {
  TimerOptions o;
  o.name = name;
  o.period = absl::Milliseconds(2);
  o.callback = std::move(cb);
  return o;
}

// Two cores on one stripe: allocates until two collide (with 1024 stripes,
// a few dozen allocations on average); the others are freed.
std::pair<std::shared_ptr<TimerCore>, std::shared_ptr<TimerCore>>
TwoCoresOnOneStripe(const std::shared_ptr<TimerSystemCore>& front) {
  std::vector<std::shared_ptr<TimerCore>> cores;
  while (true) {
    cores.push_back(std::make_shared<TimerCore>(front));
    for (size_t i = 0; i + 1 < cores.size(); ++i) {
      if (StripeFor(cores[i].get()) == StripeFor(cores.back().get())) {
        return {cores[i], cores.back()};
      }
    }
  }
}

TEST(TimerStripeTest, StripesAreStableAndSpread) {
  std::vector<std::shared_ptr<int>> blocks;
  std::set<const TimerStripe*> used;
  for (int i = 0; i < 4096; ++i) {
    blocks.push_back(std::make_shared<int>(i));
    ASSERT_EQ(StripeFor(blocks.back().get()), StripeFor(blocks.back().get()));
    used.insert(StripeFor(blocks.back().get()));
  }
  // 4096 blocks over 1024 stripes: a fair hash uses ~98% of them.
  EXPECT_GT(used.size(), kTimerStripes / 2);
}

TEST(TimerStripeTest, StopWaitsForItsOwnCallWhileTheNeighbourKeepsEndingCalls) {
  CallbackExecutor::Options eo;
  eo.threads = 3;
  CallbackExecutor executor(eo);
  TimerSystem driver(SteadyClock::Get(), &executor);
  // (Not a structured binding: C++17 lambdas cannot capture one.)
  const auto pair = TwoCoresOnOneStripe(driver.system());
  const std::shared_ptr<TimerCore> blocked = pair.first;
  const std::shared_ptr<TimerCore> neighbour = pair.second;
  ASSERT_EQ(StripeFor(blocked.get()), StripeFor(neighbour.get()));

  std::atomic<bool> in_call{false};
  std::atomic<bool> release{false};
  blocked->Configure(Periodic("blocked", [&] {
                       in_call = true;
                       while (!release) std::this_thread::yield();
                       in_call = false;
                     }),
                     absl::OkStatus());
  std::atomic<int> neighbour_calls{0};
  neighbour->Configure(Periodic("neighbour", [&] { ++neighbour_calls; }),
                       absl::OkStatus());
  ASSERT_TRUE(neighbour->StartFixed(false).ok());
  ASSERT_TRUE(blocked->StartFixed(false).ok());
  while (!in_call) std::this_thread::yield();

  std::atomic<bool> stop_returned{false};
  std::thread stopper([&] {
    blocked->Stop();
    stop_returned = true;
  });
  // Each neighbour call that ends wakes the stripe's waiters, the stopper
  // among them; it must go back to waiting.
  const int seen = neighbour_calls.load();
  while (neighbour_calls.load() < seen + 50) std::this_thread::yield();
  EXPECT_FALSE(stop_returned.load());
  EXPECT_TRUE(in_call.load());

  release = true;
  stopper.join();
  EXPECT_TRUE(stop_returned.load());
  EXPECT_FALSE(in_call.load());
  EXPECT_FALSE(blocked->IsRunning());
  EXPECT_TRUE(neighbour->IsRunning());  // untouched by its neighbour's stop
  neighbour->Stop();
  driver.Shutdown();
  executor.Shutdown();
}

}  // namespace
}  // namespace timer
}  // namespace cyber
