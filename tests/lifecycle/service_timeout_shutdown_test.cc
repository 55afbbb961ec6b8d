// A service call's timeout is an entry of its client node's timing wheel
// (cyber/service/client.h). These tests pin what happens to that entry
// when the call ends in a shutdown rather than by its response or its
// timeout:
//  * the client's runtime shuts down (its timer system closes) with calls
//    pending whose timeouts are armed: nothing expires any more, the calls
//    stay pending until the client shuts down, which ends them CANCELLED
//    and takes their entries out of the closed wheel; a call made
//    meanwhile fails at once, naming the shut-down timer system;
//  * a client shut down while its calls' timeouts expire and their
//    responses arrive: every call has exactly one outcome.
// A wheel entry freed while armed aborts the process (WheelEntry's
// destructor checks), and ASan sees a use after free: these run in every
// config, the sanitizers included.

#include <atomic>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "cyber/common/test_waits.h"
#include "cyber/runtime/runtime.h"
#include "cyber/service/client.h"
#include "cyber/node/node.h"
#include "cyber/service/service.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"

namespace cyber {
namespace {

using test::Eventually;

struct Request {
  absl::Duration work;  // the server sleeps this long (a routine sleep)
};
struct Response {};
using TestClient = Client<Request, Response>;

constexpr char kService[] = "/lifecycle/slow";

Runtime::Options Threaded(const char* name) {
  Runtime::Options o;
  o.name = name;
  o.config = scheduler::DefaultSchedulerConfig(1);
  return o;
}

Service<Request, Response>::Callback Sleeper() {
  return [](const std::shared_ptr<Request>& req, std::shared_ptr<Response>&) {
    if (req->work > absl::ZeroDuration()) scheduler::CRoutine::SleepFor(req->work);
  };
}

TEST(ServiceTimeoutShutdown, ArmedTimeoutsOutliveTheirRuntimeUntilTheClientShutsDown) {
  // The server on a runtime of its own, so that only the client's timer
  // system closes.
  Runtime server_rt(Threaded("server_rt"));
  auto client_rt = std::make_unique<Runtime>(Threaded("client_rt"));
  Node router("router", server_rt.scheduler(), server_rt.bus());
  auto planner = std::make_unique<Node>("planner", client_rt->scheduler(), server_rt.bus());
  ASSERT_NE((router.CreateService<Request, Response>(kService, Sleeper())), nullptr);
  auto client = planner->CreateClient<Request, Response>(kService);
  ASSERT_NE(client, nullptr);
  const auto slow = std::make_shared<const Request>(Request{absl::Hours(2)});
  std::shared_future<TestClient::Result> future = client->AsyncCall(slow, absl::Hours(1));
  std::atomic<int> callbacks{0};
  client->AsyncCall(slow, absl::Hours(1), [&callbacks](TestClient::Result) { ++callbacks; });
  ASSERT_TRUE(Eventually([&] { return client->stats().pending == 2; }));

  client_rt->Shutdown();  // its timer system closes with both timeouts armed
  EXPECT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  const TestClient::Result after = client->Call(slow, absl::Seconds(1));
  EXPECT_EQ(after.status().code(), absl::StatusCode::kFailedPrecondition) << after.status();
  EXPECT_TRUE(absl::StrContains(after.status().message(), "shut down")) << after.status();
  EXPECT_TRUE(absl::StrContains(after.status().message(), "could not be armed"))
      << after.status();

  planner->Shutdown();  // ends them, and takes their entries out of the wheel
  ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(future.get().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(callbacks.load(), 0);
  const ClientStats s = client->stats();
  EXPECT_EQ(s.cancelled, 2u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.pending, 0u);
  // The runtime (its TimerSystem) goes before the client handle: nothing
  // of the client points into it any more.
  planner.reset();
  client_rt.reset();
  client.reset();
  server_rt.Shutdown();  // cancels the sleeping server routines
  router.Shutdown();
}

TEST(ServiceTimeoutShutdown, TimeoutsResponsesAndAShutdownRacingLeaveOneOutcomeEach) {
  Runtime rt(Threaded("race_rt"));
  Node router("router", rt.scheduler(), rt.bus());
  Node planner("planner", rt.scheduler(), rt.bus());
  ASSERT_NE((router.CreateService<Request, Response>(kService, Sleeper())), nullptr);
  auto client = planner.CreateClient<Request, Response>(kService);
  ASSERT_NE(client, nullptr);
  constexpr int kCalls = 300;
  std::vector<std::atomic<int>> outcomes(kCalls);
  std::vector<std::shared_future<TestClient::Result>> futures;
  for (int i = 0; i < kCalls; ++i) {
    // Timeouts of 0 to 5 ms against requests served one at a time for 0
    // to 1 ms each: some are answered, some time out, the rest are pending
    // when the client shuts down.
    const auto request =
        std::make_shared<const Request>(Request{absl::Microseconds(250 * (i % 5))});
    const absl::Duration timeout = absl::Milliseconds(i % 6);
    if (i % 2 == 0) {
      client->AsyncCall(request, timeout,
                        [&outcomes, i](TestClient::Result) { ++outcomes[i]; });
    } else {
      futures.push_back(client->AsyncCall(request, timeout));
    }
  }
  std::thread stopper([&] {
    // Not a settle: the pause only lets some calls be decided by their
    // responses or timeouts first, so the shutdown races the rest. What is
    // asserted below (one outcome per call) holds for any interleaving.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    client->Shutdown();
  });
  stopper.join();
  // Each gets its outcome: CANCELLED from the shutdown, or the one a
  // response or a timeout decided (possibly still handing it over when
  // Shutdown() returned).
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  }
  const ClientStats s = client->stats();
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(s.calls, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(s.responses + s.timeouts + s.cancelled + s.failed + s.server_gone +
                s.no_server,
            static_cast<uint64_t>(kCalls));
  // A callback runs at most once, or is dropped and counted (one
  // dispatched before the shutdown is dropped when its routine starts).
  const auto ran = [&] {
    uint64_t n = 0;
    for (int i = 0; i < kCalls; i += 2) n += outcomes[i].load();
    return n;
  };
  EXPECT_TRUE(Eventually([&] {
    return ran() + client->stats().callbacks_dropped == kCalls / 2;
  })) << ran() << " ran, " << client->stats().callbacks_dropped << " dropped";
  for (int i = 0; i < kCalls; i += 2) EXPECT_LE(outcomes[i].load(), 1) << "call " << i;
  planner.Shutdown();
  router.Shutdown();
  rt.Shutdown();
}

}  // namespace
}  // namespace cyber
