// Contract pinned (the design contract, "Timer: contract" and "Lifetimes"): a callback
// never runs concurrently with itself, and Stop() means the same from every
// caller, also for a timer whose callback reconfigures or restarts it: when
// Stop() returns (here: from another thread) no call is running, none begins
// afterwards, and IsRunning() is false.
//   * ReconfigureFromOwnCallback: a 2 ms periodic timer whose callback calls
//     Configure() (new period, same callback) + Schedule() on its own timer.
//   * RestartFromOwnCallback: a oneshot "watchdog" whose callback re-arms it
//     with Start()/Schedule().
//
// Real clock and a 2-thread CallbackExecutor on purpose: these are races
// between the tick thread, the executor threads and the stopping thread. The
// SimulatedTimerSystem runs callbacks inline on one thread and cannot show a
// callback overlapping itself or outliving Stop(). Nothing asserted depends
// on speed: iteration counts are fixed, waits are on conditions, and the only
// fixed pauses are (a) work inside the callback that widens the race window
// and (b) the observation window after Stop(), which can only miss a bug,
// never invent one.

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "cyber/common/test_waits.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "timer/callback_executor.h"
#include "timer/timer_system.h"
#include "timer/timer.h"

namespace cyber {
namespace timer {
namespace {

using test::Eventually;

constexpr int kIterations = 30;
constexpr std::chrono::milliseconds kObservation{20};  // 10 periods of 2 ms

CallbackExecutor::Options TwoThreads() {
  CallbackExecutor::Options o;
  o.threads = 2;
  o.name = "rearm";
  return o;
}

struct Probe {
  std::atomic<int> inside{0};    // calls in progress
  std::atomic<int> calls{0};     // calls begun
  std::atomic<int> overlaps{0};  // a call began while another was in progress
  std::atomic<bool> quit{false};  // end of test: stop re-arming
  std::atomic<Timer*> self{nullptr};
  void Enter() {
    if (inside.fetch_add(1) != 0) ++overlaps;
    ++calls;
  }
  void Leave() { inside.fetch_sub(1); }
};

// After Stop() returned: nothing running now, nothing begins for a while.
// Returns false (after recording failures) if the contract was broken.
bool ExpectQuietAfterStop(const Probe& p, const Timer& t, int iteration) {
  bool ok = true;
  const int running_now = p.inside.load();
  const bool running_flag = t.IsRunning();
  const int calls_at_stop = p.calls.load();
  EXPECT_EQ(running_now, 0) << "iteration " << iteration
                            << ": a call was still running when Stop() returned";
  EXPECT_FALSE(running_flag) << "iteration " << iteration
                             << ": IsRunning() right after Stop() returned";
  ok = ok && running_now == 0 && !running_flag;
  int max_inside = 0;
  const auto until = std::chrono::steady_clock::now() + kObservation;
  while (std::chrono::steady_clock::now() < until) {
    max_inside = std::max(max_inside, p.inside.load());
    std::this_thread::yield();
  }
  const int later = p.calls.load() - calls_at_stop;
  EXPECT_EQ(max_inside, 0) << "iteration " << iteration
                           << ": a call was running after Stop() returned";
  EXPECT_EQ(later, 0) << "iteration " << iteration << ": " << later
                      << " calls began after Stop() returned";
  return ok && max_inside == 0 && later == 0;
}

// Configure(period alternating 2 ms / 4 ms, same callback) then Schedule().
TimerOptions Reconfiguring(Probe* p, int n) {
  TimerOptions o;
  o.name = "reconfiguring";
  o.period = absl::Milliseconds(n % 2 == 0 ? 2 : 4);
  o.callback = [p, n] {
    p->Enter();
    if (!p->quit.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(300));  // work
      Timer* t = p->self.load();
      EXPECT_TRUE(t->Configure(Reconfiguring(p, n + 1)).ok());
      t->Schedule().IgnoreError();
      // More work after re-arming, longer than a period: the new schedule's
      // first call is due meanwhile and must wait for this one.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    p->Leave();
  };
  return o;
}

TEST(SelfRearm, ReconfigureFromOwnCallbackNeverOverlapsAndStopIsFinal) {
  CallbackExecutor executor(TwoThreads());
  TimerSystem driver(SteadyClock::Get(), &executor);
  std::vector<std::unique_ptr<Probe>> probes;
  std::vector<std::unique_ptr<Timer>> timers;  // kept until the end
  for (int i = 0; i < kIterations; ++i) {
    probes.push_back(std::make_unique<Probe>());
    Probe* p = probes.back().get();
    timers.push_back(std::make_unique<Timer>(Reconfiguring(p, 0), &driver));
    Timer* t = timers.back().get();
    p->self = t;
    ASSERT_TRUE(t->Schedule().ok());
    // Stop while a call is in progress (usually in its post-re-arm work).
    ASSERT_TRUE(Eventually([&] { return p->calls.load() >= 3 && p->inside.load() > 0; }))
        << "iteration " << i << ": calls " << p->calls.load();
    t->Stop();
    const bool quiet = ExpectQuietAfterStop(*p, *t, i);
    EXPECT_EQ(p->overlaps.load(), 0)
        << "iteration " << i << ": the callback ran concurrently with itself "
        << p->overlaps.load() << " times (in " << p->calls.load() << " calls)";
    if (!quiet || p->overlaps.load() != 0) break;  // one reproduction is enough
  }
  for (auto& p : probes) p->quit = true;
  for (auto& t : timers) t->Stop();
  executor.WaitIdle();
  timers.clear();
}

// A oneshot that re-arms itself: Start() (Cyber surface) on even iterations,
// Schedule() on odd ones.
TimerOptions Watchdog(Probe* p, bool use_start) {
  TimerOptions o;
  o.name = "watchdog";
  o.period = absl::Milliseconds(2);
  o.oneshot = true;
  o.callback = [p, use_start] {
    p->Enter();
    if (!p->quit.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // work
      Timer* t = p->self.load();
      if (use_start) {
        t->Start();
      } else {
        t->Schedule().IgnoreError();
      }
    }
    p->Leave();
  };
  return o;
}

TEST(SelfRearm, RestartFromOwnCallbackStopsForGood) {
  CallbackExecutor executor(TwoThreads());
  TimerSystem driver(SteadyClock::Get(), &executor);
  std::vector<std::unique_ptr<Probe>> probes;
  std::vector<std::unique_ptr<Timer>> timers;
  for (int i = 0; i < kIterations; ++i) {
    probes.push_back(std::make_unique<Probe>());
    Probe* p = probes.back().get();
    timers.push_back(std::make_unique<Timer>(Watchdog(p, i % 2 == 0), &driver));
    Timer* t = timers.back().get();
    p->self = t;
    ASSERT_TRUE(t->Schedule().ok());
    // Every third iteration stops at an arbitrary moment; the others while
    // the callback is in its work, before it re-arms.
    ASSERT_TRUE(Eventually([&] {
      return p->calls.load() >= 3 && (i % 3 == 2 || p->inside.load() > 0);
    })) << "iteration " << i << ": calls " << p->calls.load();
    t->Stop();
    const bool quiet = ExpectQuietAfterStop(*p, *t, i);
    EXPECT_EQ(p->overlaps.load(), 0) << "iteration " << i;
    if (!quiet) {
      // Show how far it goes on: count calls for a while longer.
      const int at = p->calls.load();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ADD_FAILURE() << "iteration " << i << ": after Stop() the watchdog fired "
                    << p->calls.load() - at << " more times in 100 ms; IsRunning() "
                    << t->IsRunning();
      break;
    }
  }
  for (auto& p : probes) p->quit = true;
  for (auto& t : timers) t->Stop();
  executor.WaitIdle();
  timers.clear();
}

}  // namespace
}  // namespace timer
}  // namespace cyber
