// Contract pinned (the design contract, "Lifetimes": a synchronous stop means the same
// from every caller, and a routine waiting parks): Reader::Shutdown() is
// synchronous — it returns once the reader's callback in progress has
// finished — when called from a scheduler routine, and from a plain thread,
// while that callback is suspended in CRoutine::SleepFor. On a scheduler with
// ONE processor a Shutdown() that blocks its processor thread can never see
// the callback (which needs that processor to resume) finish: a deadlock.
//
// Simulated clock: the callback stays asleep exactly until the test advances
// time, so Shutdown() is guaranteed to be waiting for a suspended callback.
// A deadlocked processor cannot be recovered from, so on a hang the test ends
// the process with a message; each test runs in its own process (see BUILD).

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "cyber/common/test_waits.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/node/node.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "scheduler/scheduler.h"
#include "timer/timer_system.h"

namespace cyber {
namespace {

using scheduler::CRoutine;
using scheduler::Scheduler;
using test::Eventually;

constexpr std::chrono::seconds kBound{10};

struct Scan {
  int seq = 0;
};

Scheduler::Options OneProcessor() {
  Scheduler::Options o;
  o.name = "reader";
  o.config = scheduler::DefaultSchedulerConfig(1);
  return o;
}

bool WaitFor(const std::atomic<bool>& flag) {
  const auto until = std::chrono::steady_clock::now() + kBound;
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

[[noreturn]] void Hang(const char* who, int finished) {
  std::fprintf(stderr,
               "FAILED (hang): Reader::Shutdown() from %s did not return within "
               "%d s after the callback's sleep ended (callback finished: %d); "
               "ending the process.\n",
               who, static_cast<int>(kBound.count()), finished);
  std::fflush(stderr);
  std::_Exit(1);
}

// One reader whose callback sleeps 200 ms (simulated); `shut_down_from` is
// called once the callback is asleep and must start reader->Shutdown().
class SleepingReader {
 public:
  SleepingReader()
      : clock_(Instant() + absl::Hours(1)),
        sched_(OneProcessor()),
        driver_(&clock_, &sched_),
        node_("lidar_driver", &sched_, &bus_) {
    sched_.SetTimerSystem(&driver_);
  }
  ~SleepingReader() {
    node_.Shutdown();
    sched_.Shutdown();  // before the driver its routines sleep on goes away
  }

  // Creates the reader, writes one message, waits until the callback sleeps.
  void Start() {
    auto reader = node_.TryCreateReader<Scan>(
        "/scan", [this](const std::shared_ptr<const Scan>&) {
          ++entered;
          CRoutine::SleepFor(absl::Milliseconds(200));
          ++finished;
        });
    ASSERT_TRUE(reader.ok()) << reader.status();
    reader_ = *reader;
    auto writer = node_.TryCreateWriter<Scan>("/scan");
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Write(Scan{1}));
    ASSERT_TRUE(Eventually([this] { return entered.load() == 1; }));
  }

  // Once Shutdown() has begun (it marks the reader shut down before it
  // waits), lets the callback's sleep end.
  void EndTheSleepOnceShutdownBegan() {
    ASSERT_TRUE(Eventually([this] { return reader_->is_shut_down(); }));
    clock_.Advance(absl::Milliseconds(200));
  }

  Reader<Scan>* reader() { return reader_.get(); }
  Scheduler& sched() { return sched_; }

  std::atomic<int> entered{0};
  std::atomic<int> finished{0};

 private:
  SimulatedClock clock_;
  Scheduler sched_;
  timer::TimerSystem driver_;
  ChannelBus bus_;
  Node node_;
  std::shared_ptr<Reader<Scan>> reader_;
};

TEST(ReaderShutdown, FromARoutineReturnsOnceItsSleepingCallbackFinished) {
  SleepingReader r;
  ASSERT_NO_FATAL_FAILURE(r.Start());
  std::atomic<bool> started{false};
  std::atomic<bool> returned{false};
  std::atomic<int> finished_when_returned{-1};
  ASSERT_TRUE(r.sched()
                  .CreateTask("closer",
                              [&] {
                                started = true;
                                r.reader()->Shutdown();
                                finished_when_returned = r.finished.load();
                                returned = true;
                              })
                  .ok());
  ASSERT_TRUE(WaitFor(started));
  ASSERT_NO_FATAL_FAILURE(r.EndTheSleepOnceShutdownBegan());
  if (!WaitFor(returned)) Hang("a routine (1-processor scheduler)", r.finished.load());
  EXPECT_EQ(finished_when_returned.load(), 1)
      << "Shutdown() returned before the callback in progress finished";
  EXPECT_EQ(r.reader()->stats().delivered, 1u);
}

TEST(ReaderShutdown, FromAThreadReturnsOnceItsSleepingCallbackFinished) {
  SleepingReader r;
  ASSERT_NO_FATAL_FAILURE(r.Start());
  std::atomic<bool> returned{false};
  std::atomic<int> finished_when_returned{-1};
  std::thread closer([&] {
    r.reader()->Shutdown();
    finished_when_returned = r.finished.load();
    returned = true;
  });
  r.EndTheSleepOnceShutdownBegan();  // no early return: `closer` is joined below
  if (!WaitFor(returned)) Hang("a plain thread", r.finished.load());
  closer.join();
  EXPECT_EQ(finished_when_returned.load(), 1)
      << "Shutdown() returned before the callback in progress finished";
  EXPECT_EQ(r.reader()->stats().delivered, 1u);
}

}  // namespace
}  // namespace cyber
