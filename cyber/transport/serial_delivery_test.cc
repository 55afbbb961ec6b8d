// SerialDelivery: items handed one at a time, in order, by one routine at a
// time; yields, bounds, refusals, handler failures and synchronous stops
// from every kind of caller.
//
// Most tests run a scheduler without processor threads (the test thread
// runs the ready routines with RunReady, a simulated clock moves only when
// the test says so): what happens is the same every run. The tests with
// threads assert no duration; their waits are generous deadlines on
// conditions.

#include "cyber/transport/serial_delivery.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/common/test_waits.h"
#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"

namespace cyber {
namespace transport_internal {
namespace {

using scheduler::CRoutine;
using scheduler::Scheduler;
using test::Eventually;

Scheduler::Options Manual(size_t max_routines = size_t{1} << 16) {
  Scheduler::Options o;
  o.name = "serial";
  o.run_threads = false;
  o.max_routines = max_routines;
  return o;
}

Scheduler::Options Threaded(int processors) {
  Scheduler::Options o;
  o.name = "serial_threads";
  o.config = scheduler::DefaultSchedulerConfig(processors);
  return o;
}

SerialDeliveryBase::Options Options(Scheduler* scheduler, size_t capacity = 0,
                                    int per_slice = 32) {
  SerialDeliveryBase::Options o;
  o.name = "test delivery";
  o.scheduler = scheduler;
  o.capacity = capacity;
  o.items_per_slice = per_slice;
  return o;
}

// What the handler saw, and how often it overlapped itself.
struct Seen {
  mutable Mutex mu;
  std::vector<int> items ABSL_GUARDED_BY(mu);
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> outside_routine{0};

  void Add(int item) {
    if (inside.fetch_add(1) != 0) ++overlaps;
    if (CRoutine::Current() == nullptr) ++outside_routine;
    {
      MutexLock lock(&mu);
      items.push_back(item);
    }
    inside.fetch_sub(1);
  }
  std::vector<int> Items() const {
    MutexLock lock(&mu);
    return items;
  }
};

// The owner a SerialDelivery lives in.
struct Owner {
  Owner(SerialDeliveryBase::Options options,
        SerialDelivery<int>::Handler handler)
      : delivery(std::move(options), std::move(handler)) {}
  SerialDelivery<int> delivery;
};

std::vector<int> Range(int from, int to) {
  std::vector<int> v;
  for (int i = from; i < to; ++i) v.push_back(i);
  return v;
}

void ExpectBalanced(const SerialDeliveryStats& s) {
  EXPECT_EQ(s.added, s.delivered + s.dropped_overflow + s.refused_full +
                         s.dropped_stopped + s.pending);
}

TEST(SerialDeliveryTest, HandsItemsOverInOrderInARoutineOneDrainForABurst) {
  Scheduler sched(Manual());
  Seen seen;
  auto owner = std::make_shared<Owner>(Options(&sched), [&](int& i) { seen.Add(i); });
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(owner->delivery.Add(i, owner));
  EXPECT_EQ(sched.queued(), 1u);  // one drain for the burst
  EXPECT_EQ(owner->delivery.stats().pending, 10u);
  sched.RunReady();
  EXPECT_EQ(seen.Items(), Range(0, 10));
  EXPECT_EQ(seen.outside_routine.load(), 0);
  const SerialDeliveryStats s = owner->delivery.stats();
  EXPECT_EQ(s.added, 10u);
  EXPECT_EQ(s.delivered, 10u);
  EXPECT_EQ(s.pending, 0u);
  ExpectBalanced(s);
  // Drained: the next item dispatches a new drain.
  EXPECT_TRUE(owner->delivery.Add(10, owner));
  EXPECT_EQ(sched.queued(), 1u);
  sched.RunReady();
  EXPECT_EQ(seen.Items(), Range(0, 11));
  owner->delivery.Stop();
  sched.Shutdown();
}

TEST(SerialDeliveryTest, YieldsItsProcessorEveryNItems) {
  Scheduler sched(Manual());
  std::vector<std::string> order;  // the test thread runs everything
  auto owner = std::make_shared<Owner>(Options(&sched, 0, /*per_slice=*/3),
                                       [&](int& i) { order.push_back(std::to_string(i)); });
  for (int i = 0; i < 7; ++i) owner->delivery.Add(i, owner);
  ASSERT_TRUE(sched.Dispatch([&] { order.push_back("other"); }));
  sched.RunReady();
  EXPECT_EQ(order, (std::vector<std::string>{"0", "1", "2", "other", "3", "4", "5", "6"}));
  owner->delivery.Stop();
  sched.Shutdown();
}

TEST(SerialDeliveryTest, ABoundedQueueDropsItsOldestItem) {
  Scheduler sched(Manual());
  Seen seen;
  auto owner = std::make_shared<Owner>(Options(&sched, /*capacity=*/2),
                                       [&](int& i) { seen.Add(i); });
  for (int i = 0; i < 5; ++i) owner->delivery.Add(i, owner);
  SerialDeliveryStats s = owner->delivery.stats();
  EXPECT_EQ(s.dropped_overflow, 3u);
  EXPECT_EQ(s.pending, 2u);
  sched.RunReady();
  EXPECT_EQ(seen.Items(), (std::vector<int>{3, 4}));  // the freshest
  s = owner->delivery.stats();
  EXPECT_EQ(s.delivered, 2u);
  ExpectBalanced(s);
  owner->delivery.Stop();
  sched.Shutdown();
}

TEST(SerialDeliveryTest, AFullQueueThatRefusesTheNewestHandsItBack) {
  Scheduler sched(Manual());
  Seen seen;
  SerialDeliveryBase::Options o = Options(&sched, /*capacity=*/2);
  o.overflow = SerialDeliveryBase::Options::Overflow::kRefuseNewest;
  auto owner = std::make_shared<Owner>(o, [&](int& i) { seen.Add(i); });
  std::vector<int> refused;
  for (int i = 0; i < 5; ++i) {
    int item = i;
    const auto admission = owner->delivery.Offer(item, owner);
    if (admission == SerialDeliveryBase::Admission::kRefusedFull) {
      refused.push_back(item);  // still the caller's
    } else {
      EXPECT_EQ(admission, SerialDeliveryBase::Admission::kQueued);
    }
  }
  EXPECT_EQ(refused, (std::vector<int>{2, 3, 4}));
  sched.RunReady();
  EXPECT_EQ(seen.Items(), (std::vector<int>{0, 1}));  // the first come
  SerialDeliveryStats s = owner->delivery.stats();
  EXPECT_EQ(s.refused_full, 3u);
  EXPECT_EQ(s.dropped_overflow, 0u);
  ExpectBalanced(s);
  owner->delivery.Stop();
  int late = 9;
  EXPECT_EQ(owner->delivery.Offer(late, owner), SerialDeliveryBase::Admission::kStopped);
  sched.Shutdown();
}

TEST(SerialDeliveryTest, ADroppedOldestItemIsHandedToTheCaller) {
  Scheduler sched(Manual());
  Seen seen;
  auto owner = std::make_shared<Owner>(Options(&sched, /*capacity=*/1),
                                       [&](int& i) { seen.Add(i); });
  int first = 1;
  int second = 2;
  std::optional<int> displaced;
  EXPECT_EQ(owner->delivery.Offer(first, owner, &displaced),
            SerialDeliveryBase::Admission::kQueued);
  EXPECT_FALSE(displaced.has_value());
  EXPECT_EQ(owner->delivery.Offer(second, owner, &displaced),
            SerialDeliveryBase::Admission::kQueued);
  ASSERT_TRUE(displaced.has_value());
  EXPECT_EQ(*displaced, 1);
  sched.RunReady();
  EXPECT_EQ(seen.Items(), (std::vector<int>{2}));
  owner->delivery.Stop();
  sched.Shutdown();
}

TEST(SerialDeliveryTest, ARefusedDrainIsCountedAndTheNextAddTriesAgain) {
  Scheduler sched(Manual(/*max_routines=*/1));
  Seen seen;
  auto owner = std::make_shared<Owner>(Options(&sched), [&](int& i) { seen.Add(i); });
  ASSERT_TRUE(sched.Dispatch([] {}));  // takes the only routine slot
  EXPECT_TRUE(owner->delivery.Add(1, owner));  // queued; its drain refused
  SerialDeliveryStats s = owner->delivery.stats();
  EXPECT_EQ(s.dispatch_refusals, 1u);
  EXPECT_EQ(s.pending, 1u);
  sched.RunReady();  // the slot's routine ends
  EXPECT_TRUE(seen.Items().empty());
  EXPECT_TRUE(owner->delivery.Add(2, owner));  // tries again
  sched.RunReady();
  EXPECT_EQ(seen.Items(), (std::vector<int>{1, 2}));
  s = owner->delivery.stats();
  EXPECT_EQ(s.dispatch_refusals, 1u);
  ExpectBalanced(s);
  owner->delivery.Stop();
  sched.Shutdown();
}

TEST(SerialDeliveryTest, ADrainDroppedUnrunIsNoticedAndTheNextAddTriesAgain) {
  Scheduler sched(Manual());
  Seen seen;
  auto owner = std::make_shared<Owner>(Options(&sched), [&](int& i) { seen.Add(i); });
  EXPECT_TRUE(owner->delivery.Add(1, owner));  // its drain is queued...
  sched.Shutdown();                            // ...and dropped unrun
  EXPECT_TRUE(seen.Items().empty());
  // The drain is known not to run: this Add tries again (and the shut-down
  // scheduler's refusal is counted).
  EXPECT_TRUE(owner->delivery.Add(2, owner));
  const SerialDeliveryStats s = owner->delivery.stats();
  EXPECT_EQ(s.dispatch_refusals, 1u);
  EXPECT_EQ(s.pending, 2u);
  EXPECT_EQ(s.delivered, 0u);
  owner->delivery.Stop();
  EXPECT_EQ(owner->delivery.stats().dropped_stopped, 2u);
}

TEST(SerialDeliveryTest, AThrowingHandlerIsCountedAndDeliveryGoesOn) {
  Scheduler sched(Manual());
  Seen seen;
  auto owner = std::make_shared<Owner>(Options(&sched), [&](int& i) {
    seen.Add(i);
    if (i == 1) throw std::runtime_error("bad item");
    if (i == 2) throw 42;
  });
  for (int i = 0; i < 4; ++i) owner->delivery.Add(i, owner);
  sched.RunReady();
  EXPECT_EQ(seen.Items(), Range(0, 4));
  const SerialDeliveryStats s = owner->delivery.stats();
  EXPECT_EQ(s.handler_exceptions, 2u);
  EXPECT_EQ(s.delivered, 4u);
  owner->delivery.Stop();
  sched.Shutdown();
}

TEST(SerialDeliveryTest, AfterCloseItemsAreRefusedAndCountedAndQueuedOnesHandedBack) {
  Scheduler sched(Manual());
  Seen seen;
  auto owner = std::make_shared<Owner>(Options(&sched), [&](int& i) { seen.Add(i); });
  for (int i = 0; i < 3; ++i) owner->delivery.Add(i, owner);
  std::vector<int> dropped;
  owner->delivery.Close(&dropped);
  EXPECT_EQ(dropped, Range(0, 3));
  EXPECT_TRUE(owner->delivery.stopped());
  EXPECT_FALSE(owner->delivery.Add(3, owner));
  sched.RunReady();  // the drain finds the queue closed
  EXPECT_TRUE(seen.Items().empty());
  const SerialDeliveryStats s = owner->delivery.stats();
  EXPECT_EQ(s.dropped_stopped, 4u);
  EXPECT_EQ(s.pending, 0u);
  ExpectBalanced(s);
  sched.Shutdown();
}

TEST(SerialDeliveryTest, StopFromTheHandlerReturnsAtOnceAndNothingFollows) {
  Scheduler sched(Manual());
  Seen seen;
  std::shared_ptr<Owner> owner;
  owner = std::make_shared<Owner>(Options(&sched), [&](int& i) {
    seen.Add(i);
    if (i == 1) owner->delivery.Stop();  // its own queue: no wait
  });
  for (int i = 0; i < 4; ++i) owner->delivery.Add(i, owner);
  sched.RunReady();
  EXPECT_EQ(seen.Items(), Range(0, 2));
  EXPECT_EQ(owner->delivery.stats().dropped_stopped, 2u);
  owner->delivery.AwaitIdle();  // not running
  sched.Shutdown();
  owner.reset();
}

// A handler suspended in SleepFor on a simulated clock: a stop from another
// routine of the only processor must park (a blocked processor could never
// resume the handler).
class SleepingHandlerTest : public ::testing::Test {
 protected:
  SleepingHandlerTest()
      : clock_(Instant() + absl::Hours(1)),
        sched_(Manual()),
        driver_(&clock_, &sched_, [] {
          timer::TimerSystem::Options o;
          o.name = "serial-tick";
          o.run_thread = false;
          return o;
        }()) {
    sched_.SetTimerSystem(&driver_);
  }
  ~SleepingHandlerTest() override { sched_.Shutdown(); }

  // Runs what is ready, then moves the clock by `d` and runs what is due.
  void RunFor(absl::Duration d) {
    sched_.RunReady();
    clock_.Advance(d);
    driver_.Step(clock_.Now());
    sched_.RunReady();
  }

  SimulatedClock clock_;
  Scheduler sched_;
  timer::TimerSystem driver_;
};

TEST_F(SleepingHandlerTest, StopFromAnotherRoutineParksUntilTheHandlerFinished) {
  std::vector<std::string> order;
  auto owner = std::make_shared<Owner>(Options(&sched_), [&](int&) {
    order.push_back("handler sleeps");
    CRoutine::SleepFor(absl::Milliseconds(10));
    order.push_back("handler done");
  });
  owner->delivery.Add(1, owner);
  owner->delivery.Add(2, owner);  // dropped by the stop
  sched_.RunReady();
  ASSERT_TRUE(sched_.Dispatch([&] {
    owner->delivery.Stop();
    order.push_back("stopped");
  }));
  RunFor(absl::Milliseconds(5));
  EXPECT_EQ(order, (std::vector<std::string>{"handler sleeps"}));
  RunFor(absl::Milliseconds(5));
  EXPECT_EQ(order, (std::vector<std::string>{"handler sleeps", "handler done", "stopped"}));
  EXPECT_EQ(owner->delivery.stats().dropped_stopped, 1u);
}

TEST_F(SleepingHandlerTest, ACancelledHandlerEndsTheDrainAndLeavesTheRestQueued) {
  Seen seen;
  auto owner = std::make_shared<Owner>(Options(&sched_), [&](int& i) {
    seen.Add(i);
    CRoutine::SleepFor(absl::Hours(1));  // cancelled by the shutdown
  });
  owner->delivery.Add(1, owner);
  owner->delivery.Add(2, owner);
  sched_.RunReady();
  sched_.Shutdown();  // cancels the sleeping handler's routine
  owner->delivery.AwaitIdle();  // not running any more
  EXPECT_EQ(seen.Items(), (std::vector<int>{1}));
  SerialDeliveryStats s = owner->delivery.stats();
  EXPECT_EQ(s.pending, 1u);
  EXPECT_EQ(s.handler_exceptions, 0u);  // a cancellation is no failure
  // Not in flight any more: the next Add tries a drain (refused).
  owner->delivery.Add(3, owner);
  s = owner->delivery.stats();
  EXPECT_EQ(s.dispatch_refusals, 1u);
  ExpectBalanced(s);
}

// Lanes: up to N handler calls at once, each in its own routine, items
// taken in Add() order; no more drains than items need.
TEST_F(SleepingHandlerTest, LanesRunUpToNHandlersSideBySideInAddOrder) {
  std::vector<std::string> order;
  int inside = 0;
  int most_inside = 0;
  SerialDeliveryBase::Options o = Options(&sched_);
  o.lanes = 3;
  auto owner = std::make_shared<Owner>(o, [&](int& i) {
    ++inside;
    most_inside = std::max(most_inside, inside);
    order.push_back("start " + std::to_string(i));
    CRoutine::SleepFor(absl::Milliseconds(10));
    order.push_back("end " + std::to_string(i));
    --inside;
  });
  owner->delivery.Add(1, owner);
  EXPECT_EQ(sched_.queued(), 1u);
  owner->delivery.Add(2, owner);
  EXPECT_EQ(sched_.queued(), 2u);
  owner->delivery.Add(3, owner);
  owner->delivery.Add(4, owner);  // every lane is in flight: it waits
  owner->delivery.Add(5, owner);
  EXPECT_EQ(sched_.queued(), 3u);
  sched_.RunReady();
  EXPECT_EQ(order, (std::vector<std::string>{"start 1", "start 2", "start 3"}));
  EXPECT_EQ(owner->delivery.running(), 3);
  RunFor(absl::Milliseconds(10));
  EXPECT_EQ(most_inside, 3);
  EXPECT_EQ(order, (std::vector<std::string>{"start 1", "start 2", "start 3", "end 1",
                                             "start 4", "end 2", "start 5", "end 3"}));
  RunFor(absl::Milliseconds(10));
  EXPECT_EQ(owner->delivery.running(), 0);
  EXPECT_EQ(order.size(), 10u);
  SerialDeliveryStats s = owner->delivery.stats();
  EXPECT_EQ(s.delivered, 5u);
  ExpectBalanced(s);
  // Idle again: one item needs one drain.
  owner->delivery.Add(6, owner);
  EXPECT_EQ(sched_.queued(), 1u);
  RunFor(absl::Milliseconds(10));
  EXPECT_EQ(order.back(), "end 6");
  owner->delivery.Stop();
}

// A stop waits for every running lane, except the caller's own.
TEST_F(SleepingHandlerTest, StopFromOneLaneWaitsForTheOtherLanesNotForItself) {
  std::vector<std::string> order;
  SerialDeliveryBase::Options o = Options(&sched_);
  o.lanes = 2;
  std::shared_ptr<Owner> owner;
  owner = std::make_shared<Owner>(o, [&](int& i) {
    if (i == 1) {
      CRoutine::SleepFor(absl::Milliseconds(20));
      order.push_back("slow done");
    } else {
      CRoutine::SleepFor(absl::Milliseconds(5));
      owner->delivery.Stop();  // parks until lane 1 is done, not for itself
      order.push_back("stopper done");
    }
  });
  owner->delivery.Add(1, owner);
  owner->delivery.Add(2, owner);
  owner->delivery.Add(3, owner);  // dropped by the stop
  sched_.RunReady();
  RunFor(absl::Milliseconds(5));
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(owner->delivery.running(), 2);  // the stopper is parked in its handler
  RunFor(absl::Milliseconds(15));
  EXPECT_EQ(order, (std::vector<std::string>{"slow done", "stopper done"}));
  EXPECT_EQ(owner->delivery.stats().dropped_stopped, 1u);
  EXPECT_EQ(owner->delivery.running(), 0);
}

TEST(SerialDeliveryThreadedTest, ManyThreadsAddingNeverOverlapAndKeepEachOnesOrder) {
  Scheduler sched(Threaded(2));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  Mutex mu;
  std::vector<std::vector<int>> per_thread(kThreads);
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> count{0};
  auto owner = std::make_shared<Owner>(Options(&sched, 0, /*per_slice=*/8), [&](int& i) {
    if (inside.fetch_add(1) != 0) ++overlaps;
    {
      MutexLock lock(&mu);
      per_thread[i / kPerThread].push_back(i % kPerThread);
    }
    inside.fetch_sub(1);
    count.fetch_add(1);
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) owner->delivery.Add(t * kPerThread + k, owner);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(Eventually([&] { return count.load() == kThreads * kPerThread; }));
  EXPECT_EQ(overlaps.load(), 0);
  {
    MutexLock lock(&mu);
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(per_thread[t], Range(0, kPerThread)) << t;
  }
  owner->delivery.Stop();
  ExpectBalanced(owner->delivery.stats());
  sched.Shutdown();
}

TEST(SerialDeliveryThreadedTest, StopFromAThreadWaitsForTheRunningHandler) {
  Scheduler sched(Threaded(1));
  test::Gate gate;
  std::atomic<bool> handler_done{false};
  auto owner = std::make_shared<Owner>(Options(&sched), [&](int&) {
    gate.Wait();
    handler_done = true;
  });
  owner->delivery.Add(1, owner);
  ASSERT_TRUE(gate.AwaitEntered());
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    owner->delivery.Stop();
    stopped = true;
    EXPECT_TRUE(handler_done.load()) << "Stop() returned while the handler ran";
  });
  // Stop() waits (for as long as the gate stays shut); then returns.
  gate.Open();
  stopper.join();
  EXPECT_TRUE(stopped.load());
  sched.Shutdown();
}

}  // namespace
}  // namespace transport_internal
}  // namespace cyber
