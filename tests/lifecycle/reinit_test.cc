// Contract pinned (the design contract, "Lifetimes and process wiring"): Init ->
// Shutdown -> Init is a clean restart. A Timer constructed while the process
// is between a Shutdown() and the next Init() (which is exactly what a gtest
// fixture with a Timer member does: the member is built before SetUp's
// Init()) must not pin the process to the shut-down scheduler; timers of the
// new run fire, in every cycle.
//
// Process-global (cyber::Init/Shutdown), hence a binary of its own. The
// process-default timer system runs on the steady clock by design, so this
// test uses real time; it only asserts generous upper bounds (5 calls of a
// 10 ms timer within 10 s).

#include <atomic>
#include <chrono>
#include <thread>

#include "cyber/init/init.h"
#include "gtest/gtest.h"
#include "timer/timer.h"

namespace cyber {
namespace {

constexpr int kCallsWanted = 5;
// Upper bound for 5 calls of a 10 ms timer: 200x the nominal 50 ms.
constexpr std::chrono::seconds kBound{10};

// Waits (polling) until `calls` reaches `n` or `kBound` passes.
bool AwaitCalls(const std::atomic<int>& calls, int n) {
  const auto limit = std::chrono::steady_clock::now() + kBound;
  while (calls.load() < n) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(ProcessWiring, TimerMadeBetweenShutdownAndInitFiresAfterReInit) {
  ASSERT_TRUE(Init("reinit_test"));
  for (int cycle = 0; cycle < 3; ++cycle) {
    SCOPED_TRACE(::testing::Message() << "cycle " << cycle);
    Shutdown();
    // Constructed (never started) between Shutdown() and Init().
    Timer in_between;
    ASSERT_TRUE(Init("reinit_test"));
    std::atomic<int> calls{0};
    Timer t(10, [&calls] { ++calls; }, false);  // Cyber surface, 10 ms periodic
    t.Start();
    EXPECT_TRUE(t.IsRunning());
    EXPECT_TRUE(AwaitCalls(calls, kCallsWanted))
        << "a 10 ms periodic timer made after re-Init fired " << calls.load()
        << " times in " << kBound.count() << " s; dispatch refusals: "
        << t.GetStatistics().dispatch_refusals;
    t.Stop();
  }
  Shutdown();
}

// The usual gtest pattern: the Timer is a fixture member (so it is built
// before SetUp() calls Init(), i.e. after the previous test's Shutdown()),
// Init() in SetUp(), Shutdown() in TearDown().
class ProcessWiringFixture : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(Init("reinit_test")); }
  void TearDown() override { Shutdown(); }

  void ExpectBothTimersFire() {
    timer_.SetTimerOption(TimerOption(10, [this] { ++member_calls_; }, false));
    timer_.Start();
    Timer local(10, [this] { ++local_calls_; }, false);
    local.Start();
    EXPECT_TRUE(AwaitCalls(member_calls_, kCallsWanted))
        << "fixture member timer fired " << member_calls_.load() << " times in "
        << kBound.count() << " s; dispatch refusals: "
        << timer_.GetStatistics().dispatch_refusals;
    EXPECT_TRUE(AwaitCalls(local_calls_, kCallsWanted))
        << "timer made in the test body fired " << local_calls_.load()
        << " times in " << kBound.count() << " s; dispatch refusals: "
        << local.GetStatistics().dispatch_refusals;
    local.Stop();
    timer_.Stop();
  }

  std::atomic<int> member_calls_{0};
  std::atomic<int> local_calls_{0};
  Timer timer_;  // after the counters: destroyed before them
};

TEST_F(ProcessWiringFixture, FixtureTimerFiresInCycle1) { ExpectBothTimersFire(); }
TEST_F(ProcessWiringFixture, FixtureTimerFiresInCycle2) { ExpectBothTimersFire(); }
TEST_F(ProcessWiringFixture, FixtureTimerFiresInCycle3) { ExpectBothTimersFire(); }
TEST_F(ProcessWiringFixture, FixtureTimerFiresInCycle4) { ExpectBothTimersFire(); }

}  // namespace
}  // namespace cyber
