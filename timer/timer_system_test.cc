#include "timer/timer_system.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "cyber/time/simulated_clock.h"
#include "cyber/time/steady_clock.h"
#include "gtest/gtest.h"
#include "timer/testing/steady_time_simulated_clock.h"

namespace cyber {
namespace timer {
namespace {

constexpr absl::Duration kMs = absl::Milliseconds(1);

// Records each expiry: which target, at what clock time, in what order.
struct Log {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, Instant>> fires;
};

class RecordingTarget final : public ExpiryTargetOf<RecordingTarget> {
 public:
  RecordingTarget(int id, Clock* clock, Log* log) : id_(id), clock_(clock), log_(log) {}
  void OnExpired(uint32_t) {
    std::lock_guard<std::mutex> lock(log_->mu);
    log_->fires.emplace_back(id_, clock_->Now());
    log_->cv.notify_all();
  }

 private:
  const int id_;
  Clock* const clock_;
  Log* const log_;
};

// A driver on a clock of type C dispatching to a D, and the targets a test
// makes, each cancelled at its end (an armed target must be).
template <typename C, typename D>
class RecordingDriverTest : public ::testing::Test {
 protected:
  explicit RecordingDriverTest(TimerSystem::Options options = {})
      : driver_(&clock_, &dispatcher_, std::move(options)) {}
  std::shared_ptr<RecordingTarget> Target(int id) {
    auto t = std::make_shared<RecordingTarget>(id, &clock_, &log_);
    targets_.push_back(t);
    return t;
  }
  void TearDown() override {
    for (auto& t : targets_) driver_.Cancel(t.get());
  }

  C clock_{Instant() + absl::Hours(5)};
  D dispatcher_;
  TimerSystem driver_;
  Log log_;
  std::vector<std::shared_ptr<RecordingTarget>> targets_;
};

class TickDriverSimTest
    : public RecordingDriverTest<SimulatedClock, InlineDispatcher> {};

TEST_F(TickDriverSimTest, EmptyWheelBlocksWithoutWakingUp) {
  driver_.AwaitIdle();  // (its first call wakes the thread once, by design)
  EXPECT_EQ(driver_.PlannedWake(), Instant::InfiniteFuture());
  const uint64_t before = driver_.stats().wakeups;
  EXPECT_LE(before, 1u);
  clock_.Advance(absl::Hours(10));
  driver_.AwaitIdle();
  EXPECT_EQ(driver_.stats().wakeups, before);  // the reference wakes 500/s
}

TEST_F(TickDriverSimTest, SleepsUntilTheNextExpiryAndWakesForAnEarlierArm) {
  const Instant start = clock_.Now();
  auto late = Target(1);
  ASSERT_TRUE(driver_.Arm(late.get(), start + absl::Seconds(1)).ok());
  driver_.AwaitIdle();
  EXPECT_EQ(driver_.PlannedWake(), start + absl::Seconds(1));
  auto early = Target(2);
  ASSERT_TRUE(driver_.Arm(early.get(), start + 10 * kMs).ok());
  driver_.AwaitIdle();  // the arm woke it; it re-planned
  EXPECT_EQ(driver_.PlannedWake(), start + 10 * kMs);
  clock_.AdvanceTo(start + 10 * kMs);
  driver_.AwaitIdle();
  ASSERT_EQ(log_.fires.size(), 1u);
  EXPECT_EQ(log_.fires[0].first, 2);
  EXPECT_EQ(log_.fires[0].second, start + 10 * kMs);
}

TEST_F(TickDriverSimTest, AnArmAfterACancelWakesTheThreadOnlyIfDueBeforeItsSleepEnds) {
  // A request's timeout, armed and cancelled per call: the cancel moves the
  // plan later but the tick thread still sleeps until the old plan, so the
  // next timeout, due after that, needs no wake-up; it is still on time.
  const Instant start = clock_.Now();
  auto first = Target(1);
  ASSERT_TRUE(driver_.Arm(first.get(), start + absl::Seconds(1)).ok());
  driver_.AwaitIdle();
  EXPECT_EQ(driver_.PlannedWake(), start + absl::Seconds(1));
  EXPECT_TRUE(driver_.Cancel(first.get()));
  const uint64_t wakeups = driver_.stats().wakeups;
  auto second = Target(2);
  auto armed = driver_.Arm(second.get(), start + absl::Seconds(2));
  ASSERT_TRUE(armed.ok());
  EXPECT_FALSE(armed->wake_needed);
  EXPECT_TRUE(armed->plan_earlier);
  driver_.AwaitIdle();
  EXPECT_EQ(driver_.stats().wakeups, wakeups);
  EXPECT_EQ(driver_.PlannedWake(), start + absl::Seconds(1));  // its sleep
  // It wakes at the old plan, finds nothing, and plans for the second.
  clock_.AdvanceTo(start + absl::Seconds(1));
  driver_.AwaitIdle();
  EXPECT_TRUE(log_.fires.empty());
  EXPECT_EQ(driver_.PlannedWake(), start + absl::Seconds(2));
  clock_.AdvanceTo(start + absl::Seconds(2));
  driver_.AwaitIdle();
  ASSERT_EQ(log_.fires.size(), 1u);
  EXPECT_EQ(log_.fires[0].first, 2);
  EXPECT_EQ(log_.fires[0].second, start + absl::Seconds(2));
  // One due before the sleep ends still wakes it.
  auto third = Target(3);
  armed = driver_.Arm(third.get(), start + absl::Seconds(2) + 10 * kMs);
  ASSERT_TRUE(armed.ok());
  EXPECT_TRUE(armed->wake_needed);
}

TEST_F(TickDriverSimTest, LateWakeProcessesEverySkippedTickInOrder) {
  const Instant start = clock_.Now();
  for (int i = 50; i >= 1; --i) {  // armed in reverse; must fire in time order
    ASSERT_TRUE(driver_.Arm(Target(i).get(), start + 2 * i * kMs).ok());
  }
  driver_.AwaitIdle();
  // The tick thread "oversleeps" by 200 ms: one jump, no intermediate wakes.
  clock_.AdvanceTo(start + 200 * kMs);
  driver_.AwaitIdle();
  ASSERT_EQ(log_.fires.size(), 50u);
  for (int i = 1; i <= 50; ++i) EXPECT_EQ(log_.fires[i - 1].first, i);
  EXPECT_EQ(driver_.stats().expired, 50u);
}

TEST_F(TickDriverSimTest, NeverExpiresBeforeTheDeadline) {
  const Instant start = clock_.Now();
  auto t = Target(1);
  const Instant deadline = start + absl::Microseconds(4500);  // 2.25 ticks
  ASSERT_TRUE(driver_.Arm(t.get(), deadline).ok());
  driver_.AwaitIdle();
  // Planned at the first tick boundary at or after the deadline.
  EXPECT_EQ(driver_.PlannedWake(), start + 6 * kMs);
  clock_.AdvanceTo(deadline);
  driver_.AwaitIdle();
  EXPECT_TRUE(log_.fires.empty());
  clock_.AdvanceTo(start + 6 * kMs);
  driver_.AwaitIdle();
  ASSERT_EQ(log_.fires.size(), 1u);
  EXPECT_GE(log_.fires[0].second, deadline);
}

TEST_F(TickDriverSimTest, ArmAfterShutdownIsAClearError) {
  auto t = Target(1);
  driver_.Shutdown();
  driver_.Shutdown();  // idempotent
  auto r = driver_.Arm(t.get(), clock_.Now() + kMs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("shut down"), std::string::npos);
}

TEST(TickDriverRealClockTest, ExpiresOnTheSteadyClockNeverEarly) {
  // Real time. Only the lower bound is asserted (the wake can only be late on
  // a loaded machine); the wait limit merely bounds a failing run.
  SteadyClock* clock = SteadyClock::Get();
  InlineDispatcher dispatcher;
  TimerSystem driver(clock, &dispatcher);
  Log log;
  auto target = std::make_shared<RecordingTarget>(1, clock, &log);
  const Instant deadline = clock->Now() + 15 * kMs;
  ASSERT_TRUE(driver.Arm(target.get(), deadline).ok());
  {
    std::unique_lock<std::mutex> lock(log.mu);
    ASSERT_TRUE(log.cv.wait_for(lock, std::chrono::seconds(20),
                                [&] { return !log.fires.empty(); }));
    EXPECT_GE(log.fires[0].second, deadline);
  }
  driver.Cancel(target.get());
}

TEST(TickDriverRealClockTest, IdleDriverDoesNotWakeUp) {
  // With nothing armed the tick thread waits without a deadline, so no amount
  // of real time (or machine load) can produce a wake-up.
  InlineDispatcher dispatcher;
  TimerSystem driver(SteadyClock::Get(), &dispatcher);
  driver.AwaitIdle();  // (its first call wakes the thread once, by design)
  const uint64_t before = driver.stats().wakeups;
  EXPECT_LE(before, 1u);
  SteadyClock::Get()->SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(driver.stats().wakeups, before);
}

TEST(TickDriverStepTest, ThreadFreeDriverExpiresOnStepAndPlansTheNextEvent) {
  // Options::run_thread false: the same loop body, driven by the caller.
  SimulatedClock clock(Instant() + absl::Hours(1));
  InlineDispatcher dispatcher;
  TimerSystem::Options options;
  options.run_thread = false;
  TimerSystem driver(&clock, &dispatcher, options);
  Log log;
  auto target = std::make_shared<RecordingTarget>(1, &clock, &log);
  const Instant start = clock.Now();
  EXPECT_EQ(driver.Step(start), Instant::InfiniteFuture());
  ASSERT_TRUE(driver.Arm(target.get(), start + 10 * kMs).ok());
  EXPECT_EQ(driver.Step(start), start + 10 * kMs);  // nothing due yet
  clock.AdvanceTo(start + 10 * kMs);
  EXPECT_EQ(driver.Step(clock.Now()), Instant::InfiniteFuture());
  ASSERT_EQ(log.fires.size(), 1u);
  EXPECT_EQ(log.fires[0].second, start + 10 * kMs);
  EXPECT_EQ(driver.stats().wakeups, 0u);  // no thread, nothing woke
}

// --- Announcements (Dispatcher::ExpectWork) --------------------------------

using SteadyTime = std::chrono::steady_clock::time_point;
using Expectation = std::optional<SteadyTime>;

// Runs tasks inline and records what the timer system announces.
class RecordingDispatcher final : public Dispatcher {
 public:
  using Dispatcher::Dispatch;
  bool Dispatch(std::function<void()> task, int /*priority*/) override {
    task();
    return true;
  }
  void ExpectWork(Expectation when) override {
    std::lock_guard<std::mutex> lock(mu_);
    announced_.push_back(when);
  }
  std::vector<Expectation> announced() {
    std::lock_guard<std::mutex> lock(mu_);
    return announced_;
  }

 private:
  std::mutex mu_;
  std::vector<Expectation> announced_;
};

TimerSystem::Options WithoutThread() {
  TimerSystem::Options options;
  options.run_thread = false;
  return options;
}

class TickDriverAnnouncementTest
    : public RecordingDriverTest<SteadyTimeSimulatedClock, RecordingDispatcher> {
 protected:
  TickDriverAnnouncementTest() : RecordingDriverTest(WithoutThread()) {}
  static Expectation At(Instant t) {
    return SteadyTimeSimulatedClock::Steady(t);
  }

  const Instant start_ = clock_.Now();  // the wheel's epoch: ticks at 2 ms
};

TEST_F(TickDriverAnnouncementTest, ArmingAnnouncesTheEarlierDeadline) {
  driver_.Step(start_);
  EXPECT_TRUE(dispatcher_.announced().empty());  // empty wheel, as before
  auto late = Target(1);
  auto early = Target(2);
  ASSERT_TRUE(driver_.Arm(late.get(), start_ + 10 * kMs).ok());
  // An earlier event wakes the tick thread; it announces when it plans.
  driver_.Step(start_);
  EXPECT_EQ(dispatcher_.announced(),
            std::vector<Expectation>({At(start_ + 10 * kMs)}));
  ASSERT_TRUE(driver_.Arm(early.get(), start_ + 4 * kMs).ok());
  driver_.Step(start_);
  EXPECT_EQ(dispatcher_.announced().back(), At(start_ + 4 * kMs));
  // A later arm changes nothing, and a plan that did not change is not
  // announced again.
  ASSERT_TRUE(driver_.Arm(Target(3).get(), start_ + 40 * kMs).ok());
  driver_.Step(start_);
  EXPECT_EQ(dispatcher_.announced().size(), 2u);
  // The deadline rounds up to its tick, as the expiry does.
  ASSERT_TRUE(driver_.Arm(Target(4).get(), start_ + absl::Microseconds(2500))
                  .ok());
  driver_.Step(start_);
  EXPECT_EQ(dispatcher_.announced().back(), At(start_ + 4 * kMs));
  ASSERT_TRUE(driver_.Arm(Target(5).get(), start_ + absl::Microseconds(500))
                  .ok());
  driver_.Step(start_);
  EXPECT_EQ(dispatcher_.announced().back(), At(start_ + 2 * kMs));
}

TEST_F(TickDriverAnnouncementTest, CancellingTheOnlyTimerAnnouncesNothing) {
  auto timeout = Target(1);
  ASSERT_TRUE(driver_.Arm(timeout.get(), start_ + 200 * kMs).ok());
  driver_.Step(start_);
  ASSERT_EQ(dispatcher_.announced().back(), At(start_ + 200 * kMs));
  // On the cancelling thread, at once: no Step, no wake of the tick thread.
  EXPECT_TRUE(driver_.Cancel(timeout.get()));
  EXPECT_EQ(dispatcher_.announced(),
            std::vector<Expectation>({At(start_ + 200 * kMs), std::nullopt}));
  driver_.Step(start_);  // the tick thread's pass agrees: said once
  EXPECT_EQ(dispatcher_.announced().size(), 2u);
}

TEST_F(TickDriverAnnouncementTest, CancelOrRearmOfTheNextEventAnnouncesWhatIsNext) {
  auto first = Target(1);
  auto second = Target(2);
  auto other = Target(3);
  ASSERT_TRUE(driver_.Arm(first.get(), start_ + 4 * kMs).ok());
  ASSERT_TRUE(driver_.Arm(second.get(), start_ + 10 * kMs).ok());
  ASSERT_TRUE(driver_.Arm(other.get(), start_ + 30 * kMs).ok());
  driver_.Step(start_);
  ASSERT_EQ(dispatcher_.announced().back(), At(start_ + 4 * kMs));
  EXPECT_TRUE(driver_.Cancel(other.get()));  // not next: nothing to say
  EXPECT_EQ(dispatcher_.announced().size(), 1u);
  EXPECT_TRUE(driver_.Cancel(first.get()));
  EXPECT_EQ(dispatcher_.announced().back(), At(start_ + 10 * kMs));
  // A watchdog kicked later: the re-arm announces where it went.
  ASSERT_TRUE(driver_.Arm(second.get(), start_ + 20 * kMs).ok());
  EXPECT_EQ(dispatcher_.announced().back(), At(start_ + 20 * kMs));
  EXPECT_EQ(dispatcher_.announced().size(), 3u);
}

TEST_F(TickDriverAnnouncementTest, AnExpiryAnnouncesTheNextEventThenNothing) {
  ASSERT_TRUE(driver_.Arm(Target(1).get(), start_ + 4 * kMs).ok());
  ASSERT_TRUE(driver_.Arm(Target(2).get(), start_ + 10 * kMs).ok());
  driver_.Step(start_);
  clock_.sim()->AdvanceTo(start_ + 4 * kMs);
  driver_.Step(clock_.Now());
  EXPECT_EQ(dispatcher_.announced().back(), At(start_ + 10 * kMs));
  clock_.sim()->AdvanceTo(start_ + 10 * kMs);
  driver_.Step(clock_.Now());
  EXPECT_EQ(log_.fires.size(), 2u);
  EXPECT_EQ(dispatcher_.announced(),
            std::vector<Expectation>({At(start_ + 4 * kMs),
                                      At(start_ + 10 * kMs), std::nullopt}));
}

TEST(TickDriverAnnouncementThreadTest, TheTickThreadAnnouncesAndShutdownEnds) {
  SteadyTimeSimulatedClock clock(Instant() + absl::Hours(5));
  const Instant start = clock.Now();
  RecordingDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher);
  Log log;
  auto late = std::make_shared<RecordingTarget>(1, &clock, &log);
  auto early = std::make_shared<RecordingTarget>(2, &clock, &log);
  ASSERT_TRUE(driver.Arm(late.get(), start + absl::Seconds(1)).ok());
  driver.AwaitIdle();  // it planned its sleep, and announced before that
  EXPECT_EQ(dispatcher.announced().back(),
            SteadyTimeSimulatedClock::Steady(start + absl::Seconds(1)));
  ASSERT_TRUE(driver.Arm(early.get(), start + 10 * kMs).ok());
  driver.AwaitIdle();
  EXPECT_EQ(dispatcher.announced().back(),
            SteadyTimeSimulatedClock::Steady(start + 10 * kMs));
  driver.Shutdown();  // nothing will expire any more
  EXPECT_EQ(dispatcher.announced().back(), std::nullopt);
  const size_t said = dispatcher.announced().size();
  driver.Cancel(early.get());  // shut down: silent
  driver.Cancel(late.get());
  EXPECT_EQ(dispatcher.announced().size(), said);
}

TEST(TickDriverAnnouncementThreadTest, ASimulatedClockDriverAnnouncesNothing) {
  // Its instants are not real time: no steady-time consumer may spin on
  // them.
  SimulatedClock clock(Instant() + absl::Hours(5));
  const Instant start = clock.Now();
  RecordingDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher);
  Log log;
  auto a = std::make_shared<RecordingTarget>(1, &clock, &log);
  auto b = std::make_shared<RecordingTarget>(2, &clock, &log);
  ASSERT_TRUE(driver.Arm(a.get(), start + 4 * kMs).ok());
  ASSERT_TRUE(driver.Arm(b.get(), start + 10 * kMs).ok());
  driver.AwaitIdle();
  clock.AdvanceTo(start + 4 * kMs);
  driver.AwaitIdle();
  EXPECT_EQ(log.fires.size(), 1u);
  driver.Cancel(b.get());
  driver.Shutdown();
  EXPECT_TRUE(dispatcher.announced().empty());
}


// --- Early hand-over (Dispatcher::HandOverLead) ----------------------------

constexpr absl::Duration kLead = absl::Microseconds(400);

// A dispatcher that takes work up to kLead ahead of its time.
class EarlyDispatcher final : public Dispatcher {
 public:
  using Dispatcher::Dispatch;
  bool Dispatch(std::function<void()> task, int /*priority*/) override {
    task();
    return true;
  }
  std::chrono::nanoseconds HandOverLead() const override {
    return absl::ToChronoNanoseconds(kLead);
  }
};

// Records, at each expiry, the not-before instant of the batch it is
// handed over in (none: due now).
struct HandOver {
  int id;
  Expectation not_before;
};
class HandOverTarget final : public ExpiryTargetOf<HandOverTarget> {
 public:
  HandOverTarget(int id, std::vector<HandOver>* log) : id_(id), log_(log) {}
  void OnExpired(uint32_t) {
    log_->push_back({id_, DispatchBatch::NotBefore()});
  }

 private:
  const int id_;
  std::vector<HandOver>* const log_;
};

// Thread-free, on simulated time that claims to be steady time: every
// step is the tick thread's pass at a chosen instant.
class EarlyHandOverTest : public ::testing::Test {
 protected:
  EarlyHandOverTest() : driver_(&clock_, &dispatcher_, WithoutThread()) {}
  ~EarlyHandOverTest() override {
    for (auto& t : targets_) driver_.Cancel(t.get());
  }
  std::shared_ptr<HandOverTarget> Target(int id) {
    targets_.push_back(std::make_shared<HandOverTarget>(id, &log_));
    return targets_.back();
  }
  // The not-before instant an early batch due at `t` carries.
  static Expectation NotBefore(Instant t) {
    return SteadyTimeSimulatedClock::Steady(t) + std::chrono::nanoseconds(1);
  }

  SteadyTimeSimulatedClock clock_{Instant() + absl::Hours(5)};
  EarlyDispatcher dispatcher_;
  TimerSystem driver_;
  const Instant start_ = clock_.Now();
  std::vector<HandOver> log_;
  std::vector<std::shared_ptr<HandOverTarget>> targets_;
};

TEST_F(EarlyHandOverTest, AnEventWithinTheLeadIsHandedOverNotBeforeItsInstant) {
  EXPECT_EQ(driver_.system()->hand_over_lead(), kLead);
  ASSERT_TRUE(driver_.Arm(Target(1).get(), start_ + 10 * kMs).ok());
  // More than the lead before: nothing.
  driver_.Step(start_ + 10 * kMs - kLead - absl::Microseconds(1));
  EXPECT_TRUE(log_.empty());
  // Within it: handed over now, held until the event.
  EXPECT_EQ(driver_.Step(start_ + 10 * kMs - absl::Microseconds(300)),
            Instant::InfiniteFuture());
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_[0].not_before, NotBefore(start_ + 10 * kMs));
  EXPECT_EQ(driver_.stats().early_passes, 1u);
  EXPECT_EQ(DispatchBatch::NotBefore(), std::nullopt);  // the batch ended
}

TEST_F(EarlyHandOverTest, ALateOrOnTimePassHandsOverAsDueNow) {
  ASSERT_TRUE(driver_.Arm(Target(1).get(), start_ + 10 * kMs).ok());
  ASSERT_TRUE(driver_.Arm(Target(2).get(), start_ + 20 * kMs).ok());
  driver_.Step(start_ + 10 * kMs);
  driver_.Step(start_ + 21 * kMs);
  ASSERT_EQ(log_.size(), 2u);
  EXPECT_EQ(log_[0].not_before, std::nullopt);
  EXPECT_EQ(log_[1].not_before, std::nullopt);
  EXPECT_EQ(driver_.stats().early_passes, 0u);
}

TEST_F(EarlyHandOverTest, OnePassHandsOverOneEventWithItsOwnInstant) {
  // Exact deadlines 100 us apart, both within the lead of the first pass:
  // one pass each, each batch not before its own deadline.
  const Instant first = start_ + 10 * kMs + absl::Microseconds(300);
  const Instant second = first + absl::Microseconds(100);
  ASSERT_TRUE(driver_.system()->ArmExact(Target(1).get(), first).ok());
  ASSERT_TRUE(driver_.system()->ArmExact(Target(2).get(), second).ok());
  const Instant now = first - absl::Microseconds(250);
  const Instant next = driver_.Step(now);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_[0].not_before, NotBefore(first));
  EXPECT_EQ(next, second);  // the tick thread would sleep until next - lead
  driver_.Step(now);
  ASSERT_EQ(log_.size(), 2u);
  EXPECT_EQ(log_[1].id, 2);
  EXPECT_EQ(log_[1].not_before, NotBefore(second));
}

TEST_F(EarlyHandOverTest, AnArmIntoATickProcessedEarlyIsServedOnThatTick) {
  // An early pass processes tick 5 (10 ms) at 9.7 ms. A kTick timer armed
  // then for 9.9 ms belongs to tick 5: it must not wait for tick 6.
  ASSERT_TRUE(driver_.Arm(Target(1).get(), start_ + 10 * kMs).ok());
  const Instant now = start_ + 10 * kMs - absl::Microseconds(300);
  driver_.Step(now);
  ASSERT_EQ(log_.size(), 1u);
  auto late_arm = Target(2);
  const auto armed =
      driver_.Arm(late_arm.get(), start_ + 10 * kMs - absl::Microseconds(100));
  ASSERT_TRUE(armed.ok());
  EXPECT_TRUE(armed->wake_needed);  // the tick thread comes back for it
  driver_.Step(now);
  ASSERT_EQ(log_.size(), 2u);
  EXPECT_EQ(log_[1].id, 2);
  EXPECT_EQ(log_[1].not_before, NotBefore(start_ + 10 * kMs));
  // A deadline already past stays as it was: the next tick, due now.
  auto past = Target(3);
  clock_.sim()->AdvanceTo(start_ + 11 * kMs);
  ASSERT_TRUE(driver_.Arm(past.get(), start_ + 10 * kMs).ok());
  EXPECT_FALSE(driver_.system()->wheel().IsArmed(late_arm.get()));
  EXPECT_EQ(driver_.Step(clock_.Now()), start_ + 12 * kMs);
  driver_.Step(start_ + 12 * kMs);
  ASSERT_EQ(log_.size(), 3u);
  EXPECT_EQ(log_[2].not_before, std::nullopt);
}

TEST(EarlyHandOverSimulatedTest, ASimulatedClockNeverHandsOverEarly) {
  SimulatedClock clock(Instant() + absl::Hours(5));
  const Instant start = clock.Now();
  EarlyDispatcher dispatcher;
  TimerSystem driver(&clock, &dispatcher, WithoutThread());
  EXPECT_EQ(driver.system()->hand_over_lead(), absl::ZeroDuration());
  std::vector<HandOver> log;
  auto target = std::make_shared<HandOverTarget>(1, &log);
  ASSERT_TRUE(driver.Arm(target.get(), start + 10 * kMs).ok());
  driver.Step(start + 10 * kMs - absl::Microseconds(100));
  EXPECT_TRUE(log.empty());
  driver.Step(start + 10 * kMs);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].not_before, std::nullopt);
}

TEST(EarlyHandOverSimulatedTest, ADispatcherWithoutALeadIsHandedWorkWhenDue) {
  SteadyTimeSimulatedClock clock(Instant() + absl::Hours(5));
  RecordingDispatcher dispatcher;  // HandOverLead() 0, the default
  TimerSystem driver(&clock, &dispatcher, WithoutThread());
  EXPECT_EQ(driver.system()->hand_over_lead(), absl::ZeroDuration());
}

}  // namespace
}  // namespace timer
}  // namespace cyber
