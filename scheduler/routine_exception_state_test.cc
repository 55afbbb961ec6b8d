// Exceptions across routine switches. The C++ runtime keeps, per thread,
// the exceptions being handled (what std::current_exception() and `throw;`
// see) and the number in flight (std::uncaught_exceptions()). A routine
// that suspends inside a catch handler, or inside a destructor that
// unwinding runs, must find its own when it continues, whatever other
// routines did on that thread meanwhile and whichever thread continues it,
// and must leave none of it to the thread or to the next routine run on its
// stack.
//
// Everything runs on the test's thread and on simulated time: a scheduler
// without processor threads (RunReady) and a timer system without a tick
// thread (Step), so each order of suspensions is played exactly, every run.
//
// A check that fails skips the `throw;` that would follow it (rethrowing
// another routine's exception, or none, which terminates), so the state
// being wrong shows as a failed expectation rather than a crash where it
// can.

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "cyber/time/instant.h"
#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"

namespace cyber {
namespace scheduler {
namespace {

// An exception that says whose it is: its what() lives in the exception
// object, which the runtime frees when the last handler of it ends, so
// reading it after that is a use after free the sanitizers see.
class Tagged : public std::exception {
 public:
  explicit Tagged(std::string tag) : tag_(std::move(tag)) {}
  const char* what() const noexcept override { return tag_.c_str(); }

 private:
  std::string tag_;
};

std::string Tag(int routine, const char* role) {
  return "r" + std::to_string(routine) + ":" + role;
}

// The exception std::current_exception() names on this thread now: a
// Tagged's what(), "none", or "other".
std::string CurrentException() {
  const std::exception_ptr current = std::current_exception();
  if (!current) return "none";
  try {
    std::rethrow_exception(current);
  } catch (const Tagged& e) {
    return e.what();
  } catch (...) {
    return "other";
  }
}

// What the thread that runs routines must look like between resumes.
void ExpectNoExceptionState(const char* where) {
  EXPECT_EQ(CurrentException(), "none") << where;
  EXPECT_EQ(std::uncaught_exceptions(), 0) << where;
}

Scheduler::Options OneProcessorRunHere() {
  Scheduler::Options o;
  o.name = "exceptions";
  o.config = DefaultSchedulerConfig(1);
  o.run_threads = false;  // routines run on the test's thread: RunReady()
  return o;
}

timer::TimerSystem::Options NoTickThread() {
  timer::TimerSystem::Options o;
  o.run_thread = false;  // the test moves the wheel: Step()
  return o;
}

// A scheduler and a timing wheel, both driven by the test on simulated
// time.
class RoutineExceptionStateTest : public ::testing::Test {
 protected:
  RoutineExceptionStateTest()
      : clock_(Instant() + absl::Hours(1)),
        sched_(OneProcessorRunHere()),
        timers_(&clock_, &sched_, NoTickThread()) {
    sched_.SetTimerSystem(&timers_);
  }
  ~RoutineExceptionStateTest() override {
    sched_.Shutdown();
    timers_.Shutdown();
  }

  // Moves time to `t`, wakes the routines whose sleep ended and runs what
  // is ready; returns the number of resumes.
  size_t RunUntil(Instant t) {
    clock_.AdvanceTo(t);
    timers_.Step(t);
    return sched_.RunReady();
  }

  SimulatedClock clock_;
  Scheduler sched_;
  timer::TimerSystem timers_;
};

// --- Every order ------------------------------------------------------------

// The turns of an order: `order[k]` is the routine that continues at step
// k, and step k is at start + (k + 1) * kTurn. A routine suspends by
// sleeping until its next turn (a back-off through the timing wheel).
constexpr absl::Duration kTurn = absl::Milliseconds(10);

class Turns {
 public:
  Turns(Instant start, const std::vector<int>& order, int routines)
      : next_(routines, 0), turns_(routines) {
    for (size_t k = 0; k < order.size(); ++k) {
      turns_[order[k]].push_back(start + kTurn * static_cast<int64_t>(k + 1));
    }
  }
  // Called by routine `r` at each suspension point: sleeps until its next
  // turn and records that it continued.
  void Suspend(int r) {
    ASSERT_LT(next_[r], turns_[r].size()) << "routine " << r;
    CRoutine::SleepUntil(turns_[r][next_[r]++]);
    continued_.push_back(r);
  }
  const std::vector<int>& continued() const { return continued_; }

 private:
  std::vector<size_t> next_;
  std::vector<std::vector<Instant>> turns_;
  std::vector<int> continued_;
};

// A destructor that suspends while an exception unwinds past it, and
// records what it saw before and after.
class SuspendsWhileUnwinding {
 public:
  struct Seen {
    int in_flight_before = -1;
    int in_flight_after = -1;
    std::string handled_after;
  };
  SuspendsWhileUnwinding(Turns* turns, int r, Seen* seen)
      : turns_(turns), r_(r), seen_(seen) {}
  ~SuspendsWhileUnwinding() {
    seen_->in_flight_before = std::uncaught_exceptions();
    // A cancellation (the test failed elsewhere and shuts down) cannot
    // leave a destructor that runs during unwinding; it ends the wait.
    try {
      turns_->Suspend(r_);
    } catch (const RoutineCancelled&) {
    }
    seen_->in_flight_after = std::uncaught_exceptions();
    seen_->handled_after = CurrentException();
  }

 private:
  Turns* const turns_;
  const int r_;
  Seen* const seen_;
};

// Suspensions per routine after its first (which only waits for its first
// turn): in a handler, in a nested handler, in a destructor while unwinding.
constexpr int kTurnsPerRoutine = 4;

// Routine r: throws A, catches it and suspends in the handler; throws B
// inside it, catches it and suspends in that nested handler; back in A's
// handler, rethrows A with `throw;` and catches it again (the same object);
// throws C past a destructor that suspends; ends with nothing handled and
// nothing in flight.
void ThrowCatchSuspendRethrow(int r, Turns* turns) {
  const std::string a = Tag(r, "A");
  const std::string b = Tag(r, "B");
  const std::string c = Tag(r, "C");
  turns->Suspend(r);
  try {
    throw Tagged(a);
  } catch (const Tagged& held) {
    turns->Suspend(r);
    EXPECT_STREQ(held.what(), a.c_str());
    EXPECT_EQ(CurrentException(), a);
    EXPECT_EQ(std::uncaught_exceptions(), 0);
    try {
      throw Tagged(b);
    } catch (const Tagged& nested) {
      turns->Suspend(r);
      EXPECT_STREQ(nested.what(), b.c_str());
      EXPECT_EQ(CurrentException(), b);
    }
    const bool own = CurrentException() == a;
    EXPECT_TRUE(own) << "routine " << r << " handles " << CurrentException();
    if (own) {
      try {
        throw;
      } catch (const Tagged& again) {
        EXPECT_EQ(&again, &held) << "routine " << r;
      }
    }
    SuspendsWhileUnwinding::Seen seen;
    try {
      SuspendsWhileUnwinding guard(turns, r, &seen);
      throw Tagged(c);
    } catch (const Tagged& last) {
      EXPECT_STREQ(last.what(), c.c_str());
    }
    EXPECT_EQ(seen.in_flight_before, 1) << "routine " << r;
    EXPECT_EQ(seen.in_flight_after, 1) << "routine " << r;
    EXPECT_EQ(seen.handled_after, a) << "routine " << r;
    EXPECT_STREQ(held.what(), a.c_str());
  }
  EXPECT_EQ(CurrentException(), "none") << "routine " << r;
  EXPECT_EQ(std::uncaught_exceptions(), 0) << "routine " << r;
}

std::string OrderString(const std::vector<int>& order) {
  std::ostringstream s;
  for (int r : order) s << r;
  return s.str();
}

// Three routines, each suspending four times with exceptions handled or in
// flight, continued in every order there is (12! / (4!)^3 = 34,650
// orders), on one thread. Each order reuses the routines and stacks of the
// last.
TEST_F(RoutineExceptionStateTest, EachRoutineKeepsItsOwnExceptionsInEveryOrder) {
  constexpr int kRoutines = 3;
  std::vector<int> order;
  for (int r = 0; r < kRoutines; ++r) {
    for (int k = 0; k < kTurnsPerRoutine; ++k) order.push_back(r);
  }
  int orders = 0;
  do {
    ++orders;
    SCOPED_TRACE("order " + OrderString(order));
    const Instant start = clock_.Now();
    Turns turns(start, order, kRoutines);
    for (int r = 0; r < kRoutines; ++r) {
      ASSERT_TRUE(sched_.Dispatch([r, &turns] { ThrowCatchSuspendRethrow(r, &turns); }));
    }
    ASSERT_EQ(sched_.RunReady(), static_cast<size_t>(kRoutines));  // to turn 0
    for (size_t k = 0; k < order.size(); ++k) {
      ASSERT_EQ(RunUntil(start + kTurn * static_cast<int64_t>(k + 1)), 1u)
          << "step " << k;
      ExpectNoExceptionState("between resumes");
    }
    EXPECT_EQ(turns.continued(), order);
    ASSERT_EQ(sched_.stats().live, 0u);
    if (HasFailure()) break;  // one failing order says it all
  } while (std::next_permutation(order.begin(), order.end()));
  if (!HasFailure()) {
    EXPECT_EQ(orders, 34650);
  }
}

// --- The shapes -----------------------------------------------------

// Retry with back-off, written the obvious way: two routines sleep in their
// handlers and then use the exception and rethrow it.
TEST_F(RoutineExceptionStateTest, ABackOffInAHandlerKeepsTheRoutinesException) {
  std::vector<std::string> rethrown;
  const Instant start = clock_.Now();
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(sched_.Dispatch([r, &rethrown] {
      const std::string mine = Tag(r, "A");
      try {
        try {
          throw Tagged(mine);
        } catch (const std::exception& e) {
          CRoutine::SleepFor(kTurn * (r + 1));  // r0 continues first
          EXPECT_STREQ(e.what(), mine.c_str());
          if (CurrentException() == mine) throw;
          ADD_FAILURE() << "routine " << r << " handles " << CurrentException();
        }
      } catch (const Tagged& again) {
        rethrown.push_back(again.what());
      }
    }));
  }
  ASSERT_EQ(sched_.RunReady(), 2u);  // both asleep in their handlers
  ExpectNoExceptionState("both routines asleep in handlers");
  ASSERT_EQ(RunUntil(start + kTurn), 1u);
  ExpectNoExceptionState("one routine asleep in a handler");
  ASSERT_EQ(RunUntil(start + 2 * kTurn), 1u);
  ExpectNoExceptionState("both done");
  EXPECT_EQ(rethrown, (std::vector<std::string>{Tag(0, "A"), Tag(1, "A")}));
}

// Yield() inside handlers: the routines take turns (the run queue is FIFO),
// each seeing its own exception at every turn.
TEST_F(RoutineExceptionStateTest, YieldingInAHandlerKeepsTheRoutinesException) {
  constexpr int kRoutines = 3;
  constexpr int kYields = 3;
  std::vector<std::string> seen;
  for (int r = 0; r < kRoutines; ++r) {
    ASSERT_TRUE(sched_.Dispatch([r, &seen] {
      const std::string mine = Tag(r, "A");
      const Tagged* held = nullptr;
      try {
        try {
          throw Tagged(mine);
        } catch (const Tagged& e) {
          held = &e;
          for (int k = 0; k < kYields; ++k) {
            CRoutine::Yield();
            seen.push_back(CurrentException());
          }
          if (CurrentException() == mine) throw;
        }
      } catch (const Tagged& again) {
        EXPECT_EQ(&again, held);
      }
    }));
  }
  EXPECT_EQ(sched_.RunReady(), static_cast<size_t>(kRoutines * (kYields + 1)));
  ExpectNoExceptionState("all done");
  std::vector<std::string> expected;
  for (int k = 0; k < kYields; ++k) {
    for (int r = 0; r < kRoutines; ++r) expected.push_back(Tag(r, "A"));
  }
  EXPECT_EQ(seen, expected);
}

// A routine that suspends in a handler on one thread and continues on
// another takes its exception along and leaves nothing on the first.
TEST_F(RoutineExceptionStateTest, ARoutineContinuedOnAnotherThreadRethrowsItsOwn) {
  std::string after_move;
  bool rethrown_same = false;
  ASSERT_TRUE(sched_.Dispatch([&] {
    const Tagged* held = nullptr;
    try {
      try {
        throw Tagged("moved:A");
      } catch (const Tagged& e) {
        held = &e;
        CRoutine::Yield();  // continued by the second thread
        after_move = CurrentException();
        if (after_move == "moved:A") throw;
      }
    } catch (const Tagged& again) {
      rethrown_same = &again == held;
    }
  }));
  std::thread first([&] {
    EXPECT_EQ(sched_.RunReady(1), 1u);  // to the Yield()
    ExpectNoExceptionState("the thread the routine left");
  });
  first.join();
  std::thread second([&] {
    EXPECT_EQ(sched_.RunReady(), 1u);
    ExpectNoExceptionState("the thread the routine finished on");
  });
  second.join();
  EXPECT_EQ(after_move, "moved:A");
  EXPECT_TRUE(rethrown_same);
}

// std::uncaught_exceptions() in a destructor that suspends while unwinding
// counts the routine's exception in flight, and only in that routine.
TEST_F(RoutineExceptionStateTest, UncaughtExceptionsCountsOnlyTheRoutinesOwn) {
  const Instant start = clock_.Now();
  std::vector<int> unwinding;  // seen by the unwinding routine
  std::vector<int> other;      // seen by the other one meanwhile
  struct Guard {
    std::vector<int>* seen;
    ~Guard() {
      seen->push_back(std::uncaught_exceptions());
      CRoutine::SleepFor(2 * kTurn);
      seen->push_back(std::uncaught_exceptions());
    }
  };
  ASSERT_TRUE(sched_.Dispatch([&] {
    try {
      Guard guard{&unwinding};
      throw Tagged("unwinding:A");
    } catch (const Tagged&) {
    }
    unwinding.push_back(std::uncaught_exceptions());
  }));
  ASSERT_TRUE(sched_.Dispatch([&] {
    other.push_back(std::uncaught_exceptions());
    CRoutine::SleepFor(kTurn);
    other.push_back(std::uncaught_exceptions());
  }));
  ASSERT_EQ(sched_.RunReady(), 2u);
  ExpectNoExceptionState("a routine suspended while unwinding");
  ASSERT_EQ(RunUntil(start + kTurn), 1u);  // the other one, meanwhile
  ASSERT_EQ(RunUntil(start + 2 * kTurn), 1u);
  ExpectNoExceptionState("both done");
  EXPECT_EQ(unwinding, (std::vector<int>{1, 1, 0}));
  EXPECT_EQ(other, (std::vector<int>{0, 0}));
}

// --- What a routine leaves behind -------------------------------------------

// Where a routine's stack is: its body's frame. (Not a local's address:
// ASan may keep locals on a stack of its own.)
__attribute__((noinline)) uintptr_t StackMark() {
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
}

bool SameStack(uintptr_t a, uintptr_t b) {
  return (a > b ? a - b : b - a) < kDefaultStackSize;
}

// A routine suspended in a handler and cancelled there unwinds out of the
// handler (RoutineCancelled in flight through it) and ends; the next
// routine run on its stack starts with nothing handled and nothing in
// flight, and so does the thread.
TEST_F(RoutineExceptionStateTest, ARoutineCancelledInAHandlerLeavesNothingBehind) {
  CRoutine* first = nullptr;
  uintptr_t first_stack = 0;
  int in_flight_while_cancelled = -1;
  struct Guard {
    int* seen;
    ~Guard() { *seen = std::uncaught_exceptions(); }
  };
  ASSERT_TRUE(sched_.Dispatch([&] {
    first = CRoutine::Current();
    first_stack = StackMark();
    try {
      throw Tagged("cancelled:A");
    } catch (const Tagged&) {
      Guard guard{&in_flight_while_cancelled};
      CRoutine::SleepFor(absl::Hours(1));  // ended by the cancellation
      ADD_FAILURE() << "slept through a cancellation";
    }
  }));
  ASSERT_EQ(sched_.RunReady(), 1u);
  ExpectNoExceptionState("a routine asleep in a handler");
  // A routine running meanwhile handles nothing either.
  std::string meanwhile;
  ASSERT_TRUE(sched_.Dispatch([&] { meanwhile = CurrentException(); }));
  ASSERT_EQ(sched_.RunReady(), 1u);
  EXPECT_EQ(meanwhile, "none");

  first->Cancel();
  ASSERT_EQ(sched_.RunReady(), 1u);
  EXPECT_EQ(in_flight_while_cancelled, 1);  // RoutineCancelled, unwinding
  ExpectNoExceptionState("the cancelled routine ended");
  ASSERT_EQ(sched_.stats().live, 0u);

  std::string next_handles;
  int next_in_flight = -1;
  uintptr_t next_stack = 0;
  ASSERT_TRUE(sched_.Dispatch([&] {
    next_stack = StackMark();
    next_handles = CurrentException();
    next_in_flight = std::uncaught_exceptions();
  }));
  ASSERT_EQ(sched_.RunReady(), 1u);
  EXPECT_EQ(next_handles, "none");
  EXPECT_EQ(next_in_flight, 0);
  // The stack the cancelled routine left last (contexts are reused last
  // in, first out): the check above is about what that routine left.
  EXPECT_TRUE(SameStack(next_stack, first_stack));
}

// A routine whose exception escapes its body after a suspension in the
// handler (the routine's entry logs it) ends cleanly; the routine that ran
// meanwhile and the next one on its stack see nothing of it.
TEST_F(RoutineExceptionStateTest, AnExceptionEscapingARoutineLeavesNothingBehind) {
  uintptr_t escaping_stack = 0;
  ASSERT_TRUE(sched_.Dispatch([&] {
    escaping_stack = StackMark();
    try {
      throw Tagged("escaping:A");
    } catch (const Tagged&) {
      CRoutine::Yield();
      if (CurrentException() == "escaping:A") throw;  // out of the body
      ADD_FAILURE() << "handles " << CurrentException();
    }
  }));
  std::string meanwhile;
  ASSERT_TRUE(sched_.Dispatch([&] { meanwhile = CurrentException(); }));
  ASSERT_EQ(sched_.RunReady(), 3u);  // escaping, meanwhile, escaping again
  EXPECT_EQ(meanwhile, "none");
  ExpectNoExceptionState("the exception escaped its routine");

  std::string next_handles;
  int next_in_flight = -1;
  uintptr_t next_stack = 0;
  ASSERT_TRUE(sched_.Dispatch([&] {
    next_stack = StackMark();
    next_handles = CurrentException();
    next_in_flight = std::uncaught_exceptions();
  }));
  ASSERT_EQ(sched_.RunReady(), 1u);
  EXPECT_EQ(next_handles, "none");
  EXPECT_EQ(next_in_flight, 0);
  EXPECT_TRUE(SameStack(next_stack, escaping_stack));
}

// Shutdown cancels routines asleep in handlers; each unwinds out of its
// handler, and the stacks are then unwound and freed with the scheduler.
TEST(RoutineExceptionStateShutdownTest, ShutdownUnwindsRoutinesAsleepInHandlers) {
  SimulatedClock clock(Instant() + absl::Hours(1));
  auto sched = std::make_unique<Scheduler>(OneProcessorRunHere());
  timer::TimerSystem timers(&clock, sched.get(), NoTickThread());
  sched->SetTimerSystem(&timers);
  std::vector<std::string> ended;
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(sched->Dispatch([r, &ended] {
      try {
        throw Tagged(Tag(r, "A"));
      } catch (const Tagged& e) {
        try {
          CRoutine::SleepFor(absl::Hours(1));
        } catch (const RoutineCancelled&) {
          ended.push_back(std::string(e.what()) + " " + CurrentException());
          throw;
        }
      }
    }));
  }
  ASSERT_EQ(sched->RunReady(), 3u);
  ExpectNoExceptionState("three routines asleep in handlers");
  sched->Shutdown();
  ExpectNoExceptionState("after shutdown");
  std::sort(ended.begin(), ended.end());  // cancelled in any order
  EXPECT_EQ(ended, (std::vector<std::string>{"r0:A other", "r1:A other",
                                             "r2:A other"}));
  timers.Shutdown();
  sched.reset();  // destroys the contexts: each parked stack is unwound
  ExpectNoExceptionState("after the scheduler is gone");
}

}  // namespace
}  // namespace scheduler
}  // namespace cyber
