// Three APIs of other timer libraries, tested in their own terms
// (docs/timer_peers.md):
//   * folly HHWheelTimer: setDefaultTimeout() and scheduleTimeout(callback)
//     without a delay -> TimerSystem::set_default_timeout and
//     TimerOptions::use_default_timeout;
//   * Netty HashedWheelTimer: stop() returns the timeouts it cancelled,
//     each then isCancelled() -> TimerSystem::ShutdownAndCancelAll();
//   * rclcpp TimerBase::is_ready(): due, not yet called -> Timer::IsReady().
// And the origin of a periodic schedule (kTick: the first tick boundary at
// or after Schedule(); kExact: Schedule() itself).
// Deterministic: a thread-free timer system on a simulated clock, with a
// dispatcher that holds calls where a test needs one "queued".

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/time/simulated_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "timer/testing/holding_dispatcher.h"
#include "timer/testing/timer_options_for_test.h"
#include "timer/timer.h"
#include "timer/timer_system.h"

namespace cyber {
namespace timer {
namespace {

using timer_test::Oneshot;
using timer_test::Periodic;
using ::testing::UnorderedElementsAre;

constexpr absl::Duration kMs = absl::Milliseconds(1);

class PeerApisTest : public ::testing::Test {
 protected:
  PeerApisTest()
      : clock_(kEpoch), system_(&clock_, &dispatcher_, Opts()) {}
  // The wheel's epoch (its first tick boundary): the clock at construction.
  static constexpr Instant kEpoch = Instant::FromEpoch(absl::Hours(1));
  static TimerSystem::Options Opts() {
    TimerSystem::Options o;
    o.name = "peers";
    o.run_thread = false;
    return o;
  }
  // Moves the clock by `d` and expires what is due (queued, not run).
  void AdvanceAndExpire(absl::Duration d) {
    clock_.Advance(d);
    system_.Step(clock_.Now());
  }
  // Runs every due call at each planned event until `d` has passed.
  void RunFor(absl::Duration d) {
    const Instant end = clock_.Now() + d;
    while (true) {
      const Instant next = system_.Step(clock_.Now());
      dispatcher_.RunHeld();
      if (next > end) break;
      clock_.AdvanceTo(std::max(next, clock_.Now()));
    }
    clock_.AdvanceTo(end);
    system_.Step(clock_.Now());
    dispatcher_.RunHeld();
  }

  SimulatedClock clock_;
  HoldingDispatcher dispatcher_;
  TimerSystem system_;
};

// --- folly: setDefaultTimeout / scheduleTimeout(callback) --------------------

TimerOptions DefaultTimeout(const std::string& name, int* fired) {
  TimerOptions o = Oneshot(name, absl::ZeroDuration(), [fired] { ++*fired; });
  o.use_default_timeout = true;
  return o;
}

// folly: "scheduleTimeout(callback)" with no default set fails; here the
// Schedule() says which timer and which system.
TEST_F(PeerApisTest, FollyScheduleWithoutADefaultTimeoutFails) {
  int fired = 0;
  Timer t(DefaultTimeout("lookup", &fired), &system_);
  EXPECT_FALSE(system_.default_timeout().has_value());
  const absl::Status status = t.Schedule();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("\"lookup\""), std::string::npos) << status;
  EXPECT_NE(status.message().find("\"peers\""), std::string::npos) << status;
  EXPECT_NE(status.message().find("set_default_timeout"), std::string::npos);
  EXPECT_EQ(t.phase(), TimerPhase::kNotStarted);
  RunFor(absl::Seconds(1));
  EXPECT_EQ(fired, 0);
}

// folly's test "DefaultTimeout": a callback scheduled without a delay
// fires after the wheel's default timeout, not before.
TEST_F(PeerApisTest, FollyDefaultTimeoutIsTheDelay) {
  system_.set_default_timeout(30 * kMs);
  int fired = 0;
  Timer t(DefaultTimeout("lookup", &fired), &system_);
  ASSERT_TRUE(t.Schedule().ok());
  EXPECT_EQ(t.TimeUntilNextCall(), 30 * kMs);
  RunFor(29 * kMs);
  EXPECT_EQ(fired, 0);
  RunFor(2 * kMs);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(t.phase(), TimerPhase::kFired);
}

// The default is read at each Schedule()/Reset(): a change applies to the
// next one, not to a timeout already armed.
TEST_F(PeerApisTest, FollyADefaultChangeAppliesFromTheNextSchedule) {
  TimerSystem::Options o = Opts();
  o.default_timeout = 10 * kMs;
  TimerSystem system(&clock_, &dispatcher_, o);
  int fired = 0;
  Timer t(DefaultTimeout("lookup", &fired), &system);
  ASSERT_TRUE(t.Schedule().ok());
  system.set_default_timeout(50 * kMs);
  EXPECT_EQ(t.TimeUntilNextCall(), 10 * kMs);
  ASSERT_TRUE(t.Reset().ok());
  EXPECT_EQ(t.TimeUntilNextCall(), 50 * kMs);
  system.Shutdown();
}

TEST(PeerApisOptionsTest, ADefaultTimeoutOnAPeriodicTimerIsRefused) {
  TimerOptions o = Periodic("poll", 10 * kMs);
  o.use_default_timeout = true;
  const absl::Status status = ValidateTimerOptions(o);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("\"poll\""), std::string::npos) << status;
  EXPECT_NE(status.message().find("use_default_timeout"), std::string::npos);
}

// --- Netty: stop() returns the unprocessed timeouts, each cancelled ----------

// Netty's HashedWheelTimerTest "testStopTimer" and "testTimerShouldThrow
// ExceptionAfterShutdownForNewTimeouts": the pending timeouts come back,
// each reports cancelled (and its cancel() is then false); a fired one does
// not come back; a new timeout after stop() is refused.
TEST_F(PeerApisTest, NettyStopReturnsThePendingTimeoutsEachCancelled) {
  int on_cancel = 0;
  auto with_cancel = [&](TimerOptions o) {
    o.on_cancel = [&] { ++on_cancel; };
    return o;
  };
  Timer fired(with_cancel(Oneshot("fired", 5 * kMs)), &system_);
  Timer a(with_cancel(Oneshot("a", absl::Seconds(10))), &system_);
  Timer b(with_cancel(Oneshot("b", absl::Seconds(20))), &system_);
  Timer poll(with_cancel(Periodic("poll", 10 * kMs)), &system_);
  Timer never_started(with_cancel(Oneshot("idle", 5 * kMs)), &system_);
  for (Timer* t : {&fired, &a, &b, &poll}) ASSERT_TRUE(t->Schedule().ok());
  RunFor(25 * kMs);
  ASSERT_EQ(fired.phase(), TimerPhase::kFired);
  AdvanceAndExpire(10 * kMs);  // poll's next call is queued, not run
  ASSERT_EQ(poll.phase(), TimerPhase::kScheduled);

  const std::vector<std::string> cancelled = system_.ShutdownAndCancelAll();
  EXPECT_THAT(cancelled, UnorderedElementsAre("a", "b", "poll"));
  EXPECT_EQ(on_cancel, 3);
  for (Timer* t : {&a, &b, &poll}) {
    EXPECT_EQ(t->phase(), TimerPhase::kCancelled) << t->name();
    EXPECT_FALSE(t->Cancel()) << t->name();
    EXPECT_FALSE(t->IsRunning()) << t->name();
  }
  EXPECT_EQ(fired.phase(), TimerPhase::kFired);
  EXPECT_EQ(never_started.phase(), TimerPhase::kNotStarted);
  // The queued call of poll never runs.
  dispatcher_.RunHeld();
  EXPECT_EQ(poll.GetStatistics().fires, 2u);
  EXPECT_EQ(on_cancel, 3);
  // After stop(): newTimeout() is refused.
  EXPECT_EQ(never_started.Schedule().code(),
            absl::StatusCode::kFailedPrecondition);
  // A second stop() finds nothing.
  EXPECT_TRUE(system_.ShutdownAndCancelAll().empty());
}

// --- rclcpp: is_ready() -------------------------------------------------------

// rclcpp's test_timer "test_is_ready": not ready before its time, ready
// once due (and while its call waits for an executor), not ready after the
// call, not ready when cancelled.
TEST_F(PeerApisTest, RclcppIsReadyWhenDueAndNotYetCalled) {
  int calls = 0;
  Timer t(Periodic("ctrl", 10 * kMs, [&] { ++calls; }), &system_);
  EXPECT_FALSE(t.IsReady());  // not started
  ASSERT_TRUE(t.Schedule().ok());
  EXPECT_FALSE(t.IsReady());
  const absl::Duration left = t.TimeUntilNextCall();
  clock_.Advance(left - absl::Nanoseconds(1));
  EXPECT_FALSE(t.IsReady());
  clock_.Advance(absl::Nanoseconds(1));  // due, the wheel not yet stepped
  EXPECT_TRUE(t.IsReady());
  system_.Step(clock_.Now());  // queued for its processor
  EXPECT_TRUE(t.IsReady());
  dispatcher_.RunHeld();
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(t.IsReady());
  clock_.Advance(10 * kMs);
  EXPECT_TRUE(t.IsReady());
  t.Stop();
  EXPECT_FALSE(t.IsReady());  // rclcpp: a cancelled timer is never ready
}

TEST_F(PeerApisTest, RclcppAOneshotIsNotReadyOnceItsCallBegan) {
  bool ready_in_call = true;
  std::unique_ptr<Timer> t;
  t = std::make_unique<Timer>(
      Oneshot("once", 5 * kMs, [&] { ready_in_call = t->IsReady(); }),
      &system_);
  ASSERT_TRUE(t->Schedule().ok());
  AdvanceAndExpire(6 * kMs);
  EXPECT_TRUE(t->IsReady());
  dispatcher_.RunHeld();
  EXPECT_FALSE(ready_in_call);
  EXPECT_FALSE(t->IsReady());
}

// --- The origin of a periodic schedule ---------------------------------------

// Started 0.7 ms past a tick boundary. kTick: calls at the first boundary
// at or after Schedule() plus k periods (up to a tick after
// start + k * period); kExact: at start + k * period itself.
TEST_F(PeerApisTest, APeriodicScheduleStartsOnATickOrAtScheduleItself) {
  for (const TimerPrecision precision :
       {TimerPrecision::kTick, TimerPrecision::kExact}) {
    SCOPED_TRACE(precision == TimerPrecision::kTick ? "kTick" : "kExact");
    std::vector<Instant> calls;
    TimerOptions o = Periodic("poll", 10 * kMs, [&] {
      calls.push_back(clock_.Now());
    });
    o.precision = precision;
    Timer t(o, &system_);
    // To a tick boundary, then 0.7 ms past it.
    const absl::Duration since_boundary =
        (clock_.Now() - kEpoch) % system_.tick();
    clock_.Advance((system_.tick() - since_boundary) % system_.tick() +
                   absl::Microseconds(700));
    const Instant start = clock_.Now();
    ASSERT_TRUE(t.Schedule().ok());
    RunFor(35 * kMs);
    t.Stop();
    ASSERT_EQ(calls.size(), 3u);
    const absl::Duration origin_offset =
        precision == TimerPrecision::kExact ? absl::ZeroDuration()
                                            : absl::Microseconds(1300);
    for (int k = 1; k <= 3; ++k) {
      EXPECT_EQ(calls[k - 1], start + origin_offset + k * 10 * kMs) << k;
    }
  }
}

}  // namespace
}  // namespace timer
}  // namespace cyber
