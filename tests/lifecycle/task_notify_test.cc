// Contract pinned (scheduler/croutine.h, scheduler/scheduler.h): a task's
// notifications (Scheduler::NotifyTask, CRoutine::Notify) are for its own
// CRoutine::WaitForData, and nothing else a task does while it waits
// consumes one or is ended by one. The loop robot code writes,
//
//   while (...) { CRoutine::WaitForData(); client->Call(req, 200ms); }
//
// must see a notification that arrives while it is parked inside the call
// at its next WaitForData, and the call must end by its own outcome only.
// The same holds for every other wait a routine can park in on the way:
// WaitForService, SleepFor, a Timer's synchronous Stop() and a Reader's
// Shutdown() (both wait for a running callback).
//
// Each test: a task loops { WaitForData(); <the wait>; }; the test
// notifies it at 0 ms (the wait begins at 10 ms or at once) and again at
// 50 ms, while it waits; the wait itself ends at about 100 ms. Then the
// task must come round to its wait a second time by itself. Simulated
// time: the instants are exact, the result the same every run.

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/node/node.h"
#include "cyber/runtime/runtime.h"
#include "cyber/service/client.h"
#include "cyber/service/service.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/testing/run_simulated_runtime.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"
#include "timer/timer.h"

namespace cyber {
namespace {

using scheduler::CRoutine;

constexpr char kTask[] = "notified_loop";

struct Request {
  absl::Duration work;  // the server sleeps this long (a routine sleep)
};
struct Response {
  int answer = 0;
};

class TaskNotifyTest : public ::testing::Test {
 protected:
  TaskNotifyTest()
      : clock_(Instant() + absl::Hours(1)),
        runtime_(Options(&clock_)),
        start_(clock_.Now()),
        node_(std::make_unique<Node>("task_node", runtime_.scheduler(), runtime_.bus())),
        server_node_(std::make_unique<Node>("server_node", runtime_.scheduler(),
                                            runtime_.bus())) {}

  ~TaskNotifyTest() override {
    runtime_.scheduler()->RemoveTask(kTask).IgnoreError();
    RunUntil(clock_.Now() + absl::Seconds(10));  // whatever still sleeps finishes
    node_->Shutdown();
    server_node_->Shutdown();
    runtime_.Shutdown();
  }

  static Runtime::Options Options(SimulatedClock* clock) {
    Runtime::Options o;
    o.name = "task_notify";
    o.clock = clock;
    o.run_threads = false;
    return o;
  }

  // Until the clock reads `t` and nothing is left to run at it.
  void RunUntil(Instant t) {
    test::RunSimulatedRuntimeUntil(&runtime_, &clock_, t);
  }
  void RunAt(absl::Duration since_start) { RunUntil(start_ + since_start); }

  absl::Duration Elapsed() const { return clock_.Now() - start_; }

  // The task: for ever { WaitForData(); wait(); }, counting its wake-ups
  // and the waits that ended (with the instant of the first).
  void StartLoop(std::function<void()> wait) {
    ASSERT_TRUE(runtime_.scheduler()
                    ->CreateTask(kTask,
                                 [this, wait = std::move(wait)] {
                                   for (;;) {
                                     CRoutine::WaitForData();
                                     ++wakeups_;
                                     wait();
                                     if (waits_ended_++ == 0) first_end_ = Elapsed();
                                   }
                                 })
                    .ok());
    RunAt(absl::ZeroDuration());
  }
  void Notify() { ASSERT_TRUE(runtime_.scheduler()->NotifyTask(kTask).ok()); }

  // The common script: notified at `first` (the wait begins), again at
  // 50 ms (during the wait); the wait ends at `ends` on its own. Then the
  // second notification wakes the task at once, and it waits again.
  void ExpectTheNotificationDuringTheWaitIsKept(absl::Duration first,
                                                absl::Duration ends) {
    RunAt(first);
    Notify();
    RunAt(absl::Milliseconds(50));
    EXPECT_EQ(wakeups_.load(), 1);
    EXPECT_EQ(waits_ended_.load(), 0);
    Notify();  // while the task waits
    RunAt(ends - absl::Milliseconds(1));
    EXPECT_EQ(waits_ended_.load(), 0) << "a notification ended the wait early";
    RunAt(ends + absl::Milliseconds(10));
    EXPECT_GE(waits_ended_.load(), 1);
    EXPECT_EQ(first_end_, ends);
    EXPECT_EQ(wakeups_.load(), 2)
        << "the notification that came during the wait was lost: the task "
           "parked in WaitForData although a notification was pending";
  }

  SimulatedClock clock_;
  Runtime runtime_;
  const Instant start_;
  std::unique_ptr<Node> node_;
  std::unique_ptr<Node> server_node_;
  std::atomic<int> wakeups_{0};
  std::atomic<int> waits_ended_{0};
  absl::Duration first_end_ = absl::ZeroDuration();
};

TEST_F(TaskNotifyTest, ANotificationDuringAServiceCallIsKeptForTheNextWaitForData) {
  auto service = server_node_->TryCreateService<Request, Response>(
      "/notify/slow", [](const std::shared_ptr<Request>& req, std::shared_ptr<Response>& resp) {
        CRoutine::SleepFor(req->work);
        resp->answer = 42;
      });
  ASSERT_TRUE(service.ok()) << service.status();
  auto client = node_->TryCreateClient<Request, Response>("/notify/slow");
  ASSERT_TRUE(client.ok()) << client.status();
  std::atomic<int> answered{0};
  StartLoop([client = *client, &answered] {
    Request r;
    r.work = absl::Milliseconds(100);
    auto result = client->Call(r, absl::Seconds(1));
    if (result.ok() && (*result)->answer == 42) ++answered;
  });
  ExpectTheNotificationDuringTheWaitIsKept(absl::ZeroDuration(), absl::Milliseconds(100));
  EXPECT_EQ(answered.load(), 1);  // ended by its response, not by a notification
  EXPECT_EQ((*client)->stats().calls, 2u);  // the second call is under way
}

TEST_F(TaskNotifyTest, ANotificationDuringWaitForServiceIsKeptForTheNextWaitForData) {
  auto client = node_->TryCreateClient<Request, Response>("/notify/absent");
  ASSERT_TRUE(client.ok()) << client.status();
  StartLoop([client = *client] { EXPECT_FALSE(client->WaitForService(absl::Milliseconds(100))); });
  ExpectTheNotificationDuringTheWaitIsKept(absl::ZeroDuration(), absl::Milliseconds(100));
}

TEST_F(TaskNotifyTest, ANotificationDuringSleepForIsKeptForTheNextWaitForData) {
  StartLoop([] { CRoutine::SleepFor(absl::Milliseconds(100)); });
  ExpectTheNotificationDuringTheWaitIsKept(absl::ZeroDuration(), absl::Milliseconds(100));
}

TEST_F(TaskNotifyTest, ANotificationDuringATimerStopIsKeptForTheNextWaitForData) {
  // The timer's one call begins at 2 ms and sleeps until 102 ms; the task's
  // Stop() (at 10 ms) waits for it.
  timer::TimerOptions o;
  o.name = "slow_callback";
  o.period = absl::Milliseconds(2);
  o.oneshot = true;
  o.callback = [] { CRoutine::SleepFor(absl::Milliseconds(100)); };
  auto slow = std::make_shared<Timer>(std::move(o), runtime_.timers());
  ASSERT_TRUE(slow->Schedule().ok());
  StartLoop([slow] { slow->Stop(); });
  ExpectTheNotificationDuringTheWaitIsKept(absl::Milliseconds(10), absl::Milliseconds(102));
}

TEST_F(TaskNotifyTest, ANotificationDuringAReaderShutdownIsKeptForTheNextWaitForData) {
  // The reader's callback sleeps from 0 to 100 ms; the task's Shutdown() (at
  // 10 ms) waits for it.
  auto reader = server_node_->TryCreateReader<Request>(
      "/notify/scan",
      [](const std::shared_ptr<const Request>& m) { CRoutine::SleepFor(m->work); });
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer = server_node_->TryCreateWriter<Request>("/notify/scan");
  ASSERT_TRUE(writer.ok()) << writer.status();
  Request m;
  m.work = absl::Milliseconds(100);
  ASSERT_TRUE((*writer)->Write(m));
  StartLoop([reader = *reader] { reader->Shutdown(); });
  ExpectTheNotificationDuringTheWaitIsKept(absl::Milliseconds(10), absl::Milliseconds(100));
}

}  // namespace
}  // namespace cyber
