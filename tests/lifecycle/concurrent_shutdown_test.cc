// Contract pinned (cyber/node/node.h, cyber/service/client.h): Shutdown()
// may be called from a callback of the node's own readers, services and
// clients; two such callbacks that shut the node down at the same moment
// both return (neither waits for the other), and every callback of the
// node then finishes. And the AsyncCall callbacks of one client run one at
// a time, so two of them can never be inside Shutdown() at once: the first
// one's Shutdown() returns and the second is dropped (counted).
//
// Real threads: a scheduler of two processors, so both callbacks run at
// the same time; a barrier (threads, not routines) holds each until the
// other has arrived, so both call Shutdown() while the other is running —
// the interleaving that deadlocks if each waits for the other. A deadlock
// cannot be recovered from, so the test arms a watchdog that ends the
// process (test::HangWatchdog); each test runs in its own process (BUILD).
// The barrier's own limit only bounds a failing test.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "cyber/common/test_waits.h"
#include "cyber/node/node.h"
#include "cyber/runtime/runtime.h"
#include "cyber/service/client.h"
#include "cyber/service/service.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"

namespace cyber {
namespace {

using test::Eventually;

struct Ping {
  int n = 0;
};
struct Pong {
  int n = 0;
};

Runtime::Options TwoProcessors() {
  Runtime::Options o;
  o.name = "concurrent_shutdown";
  o.config = scheduler::DefaultSchedulerConfig(2);
  return o;
}

// Lets `parties` threads through together; false if they did not all
// arrive within the test limit (the test then fails instead of hanging).
class Barrier {
 public:
  explicit Barrier(int parties) : left_(parties) {}
  bool ArriveAndWait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (--left_ == 0) cv_.notify_all();
    return cv_.wait_for(lock, test::kTestWaitLimit, [this] { return left_ <= 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int left_;
};

// What the two callbacks did.
struct Seen {
  std::atomic<int> met{0};        // passed the barrier together
  std::atomic<int> returned{0};   // came back from Node::Shutdown()
  std::atomic<int> finished{0};   // ended their callback
};

// The callback both endpoints run: meet the other, shut the node down.
void MeetAndShutDown(Barrier* barrier, Seen* seen, Node* node) {
  if (barrier->ArriveAndWait()) ++seen->met;
  node->Shutdown();
  ++seen->returned;
  ++seen->finished;
}

TEST(ConcurrentShutdown, TwoReaderCallbacksOfOneNodeShutItDownAtOnce) {
  Runtime runtime(TwoProcessors());
  Node node("fusion", runtime.scheduler(), runtime.bus());
  Node source("sensors", runtime.scheduler(), runtime.bus());
  Barrier barrier(2);
  Seen seen;
  auto on_message = [&](const std::shared_ptr<const Ping>&) {
    MeetAndShutDown(&barrier, &seen, &node);
  };
  ASSERT_TRUE(node.TryCreateReader<Ping>("/shutdown/a", on_message).ok());
  ASSERT_TRUE(node.TryCreateReader<Ping>("/shutdown/b", on_message).ok());
  auto a = source.TryCreateWriter<Ping>("/shutdown/a");
  auto b = source.TryCreateWriter<Ping>("/shutdown/b");
  ASSERT_TRUE(a.ok() && b.ok());
  {
    const test::HangWatchdog watchdog(
        "Node::Shutdown() from two reader callbacks of one node at once");
    ASSERT_TRUE((*a)->Write(Ping()));
    ASSERT_TRUE((*b)->Write(Ping()));
    ASSERT_TRUE(Eventually([&] { return seen.finished.load() == 2; }));
    // A third caller, a plain thread, waits for both callbacks to end.
    node.Shutdown();
  }
  EXPECT_EQ(seen.met.load(), 2) << "the two callbacks did not run at the same time";
  EXPECT_EQ(seen.returned.load(), 2);
  EXPECT_TRUE(node.is_shut_down());
  source.Shutdown();
  runtime.Shutdown();
}

TEST(ConcurrentShutdown, TwoClientsCallbacksOfOneNodeShutItDownAtOnce) {
  Runtime runtime(TwoProcessors());
  Node server("router", runtime.scheduler(), runtime.bus());
  Node node("planner", runtime.scheduler(), runtime.bus());
  auto answer = [](const std::shared_ptr<Ping>& req, std::shared_ptr<Pong>& resp) {
    resp->n = req->n;
  };
  ASSERT_TRUE((server.TryCreateService<Ping, Pong>("/shutdown/x", answer).ok()));
  ASSERT_TRUE((server.TryCreateService<Ping, Pong>("/shutdown/y", answer).ok()));
  auto x = node.TryCreateClient<Ping, Pong>("/shutdown/x");
  auto y = node.TryCreateClient<Ping, Pong>("/shutdown/y");
  ASSERT_TRUE(x.ok() && y.ok());
  Barrier barrier(2);
  Seen seen;
  auto on_answer = [&](Client<Ping, Pong>::Result) {
    MeetAndShutDown(&barrier, &seen, &node);
  };
  {
    const test::HangWatchdog watchdog(
        "Node::Shutdown() from two AsyncCall callbacks of one node at once");
    (*x)->AsyncCall(std::make_shared<const Ping>(), absl::Seconds(30), on_answer);
    (*y)->AsyncCall(std::make_shared<const Ping>(), absl::Seconds(30), on_answer);
    ASSERT_TRUE(Eventually([&] { return seen.finished.load() == 2; }));
    node.Shutdown();
  }
  EXPECT_EQ(seen.met.load(), 2) << "the two callbacks did not run at the same time";
  EXPECT_EQ(seen.returned.load(), 2);
  server.Shutdown();
  runtime.Shutdown();
}

TEST(ConcurrentShutdown, AReaderAndAServiceCallbackOfOneNodeShutItDownAtOnce) {
  Runtime runtime(TwoProcessors());
  Node node("planner", runtime.scheduler(), runtime.bus());
  Node other("sensors", runtime.scheduler(), runtime.bus());
  Barrier barrier(2);
  Seen seen;
  ASSERT_TRUE(node.TryCreateReader<Ping>("/shutdown/scan", [&](const std::shared_ptr<const Ping>&) {
                    MeetAndShutDown(&barrier, &seen, &node);
                  }).ok());
  auto service = node.TryCreateService<Ping, Pong>(
      "/shutdown/plan", [&](const std::shared_ptr<Ping>&, std::shared_ptr<Pong>&) {
        MeetAndShutDown(&barrier, &seen, &node);
      });
  ASSERT_TRUE(service.ok());
  auto writer = other.TryCreateWriter<Ping>("/shutdown/scan");
  auto client = other.TryCreateClient<Ping, Pong>("/shutdown/plan");
  ASSERT_TRUE(writer.ok() && client.ok());
  {
    const test::HangWatchdog watchdog(
        "Node::Shutdown() from a reader and a service callback of one node at once");
    (*client)->AsyncCall(std::make_shared<const Ping>(), absl::Seconds(30),
                         [](Client<Ping, Pong>::Result) {});
    ASSERT_TRUE((*writer)->Write(Ping()));
    ASSERT_TRUE(Eventually([&] { return seen.finished.load() == 2; }));
    node.Shutdown();
  }
  EXPECT_EQ(seen.met.load(), 2) << "the two callbacks did not run at the same time";
  EXPECT_EQ(seen.returned.load(), 2);
  other.Shutdown();
  runtime.Shutdown();
}

TEST(ConcurrentShutdown, TwoCallbacksOfOneClientNeverShutItDownAtOnce) {
  Runtime runtime(TwoProcessors());
  Node server("router", runtime.scheduler(), runtime.bus());
  Node node("planner", runtime.scheduler(), runtime.bus());
  auto service = server.TryCreateService<Ping, Pong>(
      "/shutdown/z",
      [](const std::shared_ptr<Ping>& req, std::shared_ptr<Pong>& resp) { resp->n = req->n; });
  ASSERT_TRUE(service.ok());
  auto created = node.TryCreateClient<Ping, Pong>("/shutdown/z");
  ASSERT_TRUE(created.ok());
  std::shared_ptr<Client<Ping, Pong>> client = *created;
  std::atomic<int> running{0};
  std::atomic<int> most_at_once{0};
  std::atomic<int> ran{0};
  std::atomic<int> returned{0};
  auto on_answer = [&](Client<Ping, Pong>::Result) {
    const int now = ++running;
    if (now > most_at_once) most_at_once = now;
    ++ran;
    // Both calls are decided (the other callback is queued, or would be
    // running beside this one if callbacks could overlap) before this one
    // shuts the client down.
    EXPECT_TRUE(Eventually([&] { return client->stats().responses == 2; }));
    client->Shutdown();
    ++returned;
    --running;
  };
  {
    const test::HangWatchdog watchdog("Client::Shutdown() from its AsyncCall callbacks");
    client->AsyncCall(std::make_shared<const Ping>(), absl::Seconds(30), on_answer);
    client->AsyncCall(std::make_shared<const Ping>(), absl::Seconds(30), on_answer);
    ASSERT_TRUE(Eventually([&] { return returned.load() >= 1; }));
    client->Shutdown();  // a plain thread: waits for the running callback
  }
  EXPECT_EQ(most_at_once.load(), 1);
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(returned.load(), 1);
  EXPECT_EQ(client->stats().callbacks_dropped, 1u);
  node.Shutdown();
  server.Shutdown();
  runtime.Shutdown();
}

}  // namespace
}  // namespace cyber
