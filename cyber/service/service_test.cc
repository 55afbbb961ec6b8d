// Services within one process: a Client and a Service on the same
// ChannelBus, request and response handed over as shared pointers.
//
// Most tests run on a runtime without threads on a simulated clock: the
// test steps the timer system and runs the ready routines itself, so a
// timeout, a slow server and a late response happen at chosen instants,
// the same way every run. The tests with real threads (a blocked thread,
// processors parking, many calls at once, runtime shutdown) assert no
// duration: their waits are generous deadlines on conditions.

#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/common/test_waits.h"
#include "cyber/runtime/runtime.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/service/client.h"
#include "cyber/node/node.h"
#include "cyber/service/service.h"
#include "cyber/testing/run_simulated_runtime.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"

namespace cyber {
namespace {

using scheduler::CRoutine;
using test::Eventually;

// Plain C++ types: nothing is serialized within a process.
struct AddRequest {
  int a = 0;
  int b = 0;
  absl::Duration work;  // the server sleeps this long (a routine sleep)
};
struct AddResponse {
  int sum = 0;
};
struct OtherResponse {};

using AddClient = Client<AddRequest, AddResponse>;
using AddService = Service<AddRequest, AddResponse>;
constexpr char kService[] = "/test/add";

AddRequest Add(int a, int b, absl::Duration work = absl::ZeroDuration()) {
  AddRequest r;
  r.a = a;
  r.b = b;
  r.work = work;
  return r;
}

// What the server saw of its calls.
struct ServerSeen {
  std::atomic<int> calls{0};
  std::atomic<int> outside_routine{0};
  std::atomic<const AddRequest*> last_request{nullptr};
  std::atomic<int> priority{-1};
  std::atomic<int> group{-1};
};

AddService::Callback Adder(ServerSeen* seen) {
  return [seen](const std::shared_ptr<AddRequest>& req,
                std::shared_ptr<AddResponse>& resp) {
    const CRoutine* self = CRoutine::Current();
    if (seen != nullptr) {
      ++seen->calls;
      if (self == nullptr) ++seen->outside_routine;
      seen->last_request = req.get();
      if (self != nullptr) {
        seen->priority = self->priority();
        seen->group = self->group();
      }
    }
    if (req->work > absl::ZeroDuration()) CRoutine::SleepFor(req->work);
    resp->sum = req->a + req->b;
  };
}

// Outcomes by call index: each call must have exactly one.
class Outcomes {
 public:
  void Add(int index, const AddClient::Result& r) {
    MutexLock lock(&mu_);
    by_call_[index].push_back(r.ok() ? absl::StatusOr<int>((*r)->sum)
                                     : absl::StatusOr<int>(r.status()));
  }
  size_t total() const {
    MutexLock lock(&mu_);
    size_t n = 0;
    for (const auto& e : by_call_) n += e.second.size();
    return n;
  }
  size_t count(int index) const {
    MutexLock lock(&mu_);
    auto it = by_call_.find(index);
    return it == by_call_.end() ? 0 : it->second.size();
  }
  // The first outcome of `index`; UNKNOWN if none.
  absl::StatusOr<int> first(int index) const {
    MutexLock lock(&mu_);
    auto it = by_call_.find(index);
    if (it == by_call_.end() || it->second.empty()) {
      return absl::UnknownError("no outcome");
    }
    return it->second.front();
  }

 private:
  mutable Mutex mu_;
  std::map<int, std::vector<absl::StatusOr<int>>> by_call_ ABSL_GUARDED_BY(mu_);
};

bool Contains(const absl::Status& s, absl::string_view part) {
  return absl::StrContains(s.message(), part);
}

// --- on a simulated clock -----------------------------------------------------

class SimulatedServiceTest : public ::testing::Test {
 protected:
  SimulatedServiceTest()
      : clock_(Instant() + absl::Hours(1)),
        runtime_(Options(&clock_)),
        server_node_(std::make_unique<Node>("router", runtime_.scheduler(), runtime_.bus())),
        client_node_(std::make_unique<Node>("planner", runtime_.scheduler(), runtime_.bus())) {}

  ~SimulatedServiceTest() override {
    RunFor(absl::Hours(2));  // whatever still sleeps finishes
    client_node_->Shutdown();
    server_node_->Shutdown();
    runtime_.Shutdown();
  }

  static Runtime::Options Options(SimulatedClock* clock) {
    Runtime::Options o;
    o.name = "sim_services";
    o.clock = clock;
    o.run_threads = false;
    return o;
  }

  // Until the clock reads `t` and nothing is left to run at it.
  void RunUntil(Instant t) {
    test::RunSimulatedRuntimeUntil(&runtime_, &clock_, t);
  }
  void RunFor(absl::Duration d) { RunUntil(clock_.Now() + d); }

  std::shared_ptr<AddService> Serve(ServerSeen* seen = nullptr) {
    auto service = server_node_->TryCreateService<AddRequest, AddResponse>(kService, Adder(seen));
    EXPECT_TRUE(service.ok()) << service.status();
    return service.ok() ? *service : nullptr;
  }
  std::shared_ptr<AddClient> NewClient(const std::string& service = kService) {
    auto client = client_node_->TryCreateClient<AddRequest, AddResponse>(service);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *client : nullptr;
  }

  // A routine that calls `client` and records the outcome as `index`.
  void CallFromRoutine(std::shared_ptr<AddClient> client, AddRequest request,
                       absl::Duration timeout, Outcomes* into, int index) {
    ASSERT_TRUE(runtime_.scheduler()->Dispatch([=] {
      into->Add(index, client->Call(request, timeout));
    }));
  }

  SimulatedClock clock_;
  Runtime runtime_;
  std::unique_ptr<Node> server_node_;
  std::unique_ptr<Node> client_node_;
};

TEST_F(SimulatedServiceTest, ARoutineCallerGetsTheResponseAndTheRequestIsNotCopied) {
  ServerSeen seen;
  auto service = Serve(&seen);
  auto client = NewClient();
  auto request = std::make_shared<const AddRequest>(Add(2, 3));
  auto result = std::make_shared<AddClient::Result>(absl::UnknownError("not yet"));
  ASSERT_TRUE(runtime_.scheduler()->Dispatch(
      [client, request, result] { *result = client->Call(request, absl::Seconds(1)); }));
  RunFor(absl::Milliseconds(10));
  ASSERT_TRUE(result->ok()) << result->status();
  EXPECT_EQ((*result)->get()->sum, 5);
  // In-process: the server got the caller's very object, in a routine.
  EXPECT_EQ(seen.last_request.load(), request.get());
  EXPECT_EQ(seen.outside_routine.load(), 0);
  const ClientStats s = client->stats();
  EXPECT_EQ(s.calls, 1u);
  EXPECT_EQ(s.requests_sent, 1u);
  EXPECT_EQ(s.responses, 1u);
  EXPECT_EQ(s.timeouts + s.late_responses + s.failed + s.pending, 0u);
  EXPECT_EQ(service->stats().responses, 1u);
  EXPECT_EQ(client->ServiceName(), kService);
  EXPECT_EQ(client->node_name(), "planner");
  EXPECT_EQ(service->node_name(), "router");
}

TEST_F(SimulatedServiceTest, ATimeoutIsTheOnlyOutcomeAndTheLateResponseIsDroppedAndCounted) {
  auto service = Serve();
  auto client = NewClient();
  Outcomes outcomes;
  const Instant start = clock_.Now();
  auto decided_at = std::make_shared<Instant>();
  ASSERT_TRUE(runtime_.scheduler()->Dispatch([&, client, decided_at] {
    outcomes.Add(0, client->Call(Add(2, 3, absl::Milliseconds(300)), absl::Milliseconds(100)));
    *decided_at = clock_.Now();
  }));
  RunUntil(start + absl::Milliseconds(99));
  EXPECT_EQ(outcomes.total(), 0u) << "decided before the timeout and before the response";
  RunUntil(start + absl::Milliseconds(110));
  ASSERT_EQ(outcomes.count(0), 1u);
  const absl::Status timeout = outcomes.first(0).status();
  EXPECT_EQ(timeout.code(), absl::StatusCode::kDeadlineExceeded) << timeout;
  EXPECT_TRUE(Contains(timeout, "node \"planner\"")) << timeout;
  EXPECT_TRUE(Contains(timeout, "service \"/test/add\"")) << timeout;
  EXPECT_TRUE(Contains(timeout, "100ms")) << timeout;
  EXPECT_GE(*decided_at, start + absl::Milliseconds(100));  // never early
  // The server answers at 300 ms: too late, dropped and counted.
  RunUntil(start + absl::Milliseconds(400));
  EXPECT_EQ(outcomes.count(0), 1u);
  const ClientStats s = client->stats();
  EXPECT_EQ(s.calls, 1u);
  EXPECT_EQ(s.timeouts, 1u);
  EXPECT_EQ(s.responses, 0u);
  EXPECT_EQ(s.late_responses, 1u);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(service->stats().responses, 1u);
}

TEST_F(SimulatedServiceTest, AThreadCallersTimeoutFollowsTheNodesRuntimeClock) {
  // The caller is a plain thread, outside any runtime: its timeout still
  // runs on the client node's runtime (here simulated: an hour passes at
  // once; on the process's real clock it would never come in this test).
  auto service = Serve();
  auto client = NewClient();
  AddClient::Result result = absl::UnknownError("not returned");
  std::atomic<bool> returned{false};
  std::thread caller([&] {
    result = client->Call(Add(1, 1, absl::Hours(2)), absl::Hours(1));
    returned = true;
  });
  // Sent, so its timeout is armed (before the hand-over) at the start.
  const bool sent = Eventually([&] { return client->stats().requests_sent == 1; });
  RunFor(absl::Minutes(59));
  EXPECT_FALSE(returned.load());
  RunFor(absl::Minutes(2));
  const bool ended = Eventually([&] { return returned.load(); });
  if (!ended) RunFor(absl::Hours(3));  // whatever went wrong, let the thread go
  caller.join();
  ASSERT_TRUE(sent);
  ASSERT_TRUE(ended);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_TRUE(Contains(result.status(), "1h")) << result.status();
}

TEST_F(SimulatedServiceTest, AResponseBeforeTheTimeoutIsTheOnlyOutcome) {
  auto service = Serve();
  auto client = NewClient();
  Outcomes outcomes;
  CallFromRoutine(client, Add(1, 1, absl::Milliseconds(50)), absl::Milliseconds(100),
                  &outcomes, 0);
  RunFor(absl::Seconds(1));  // well past the timeout: it was cancelled
  ASSERT_EQ(outcomes.count(0), 1u);
  ASSERT_TRUE(outcomes.first(0).ok()) << outcomes.first(0).status();
  EXPECT_EQ(*outcomes.first(0), 2);
  const ClientStats s = client->stats();
  EXPECT_EQ(s.responses, 1u);
  EXPECT_EQ(s.timeouts, 0u);
  EXPECT_EQ(s.late_responses, 0u);
}

TEST_F(SimulatedServiceTest, NoServerFailsAtOnceWithUnavailableNamingTheService) {
  auto client = NewClient();
  // From this thread (the one driving the clock): decided without waiting.
  const AddClient::Result r = client->Call(Add(1, 2), absl::Seconds(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_TRUE(Contains(r.status(), "node \"planner\"")) << r.status();
  EXPECT_TRUE(Contains(r.status(), "service \"/test/add\"")) << r.status();
  EXPECT_TRUE(Contains(r.status(), "no server")) << r.status();
  EXPECT_EQ(client->SendRequest(Add(1, 2)), nullptr);  // Cyber RT's spelling
  EXPECT_FALSE(client->ServiceIsReady());
  const ClientStats s = client->stats();
  EXPECT_EQ(s.calls, 2u);
  EXPECT_EQ(s.no_server, 2u);
  EXPECT_EQ(s.requests_sent, 0u);
}

TEST_F(SimulatedServiceTest, NoServerSuggestsTheNearestServedName) {
  auto service = Serve();  // kService, "/test/add"
  auto typo = NewClient("/test/ad");
  const AddClient::Result r = typo->Call(Add(1, 2), absl::Seconds(1));
  ASSERT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_TRUE(Contains(r.status(), "no server")) << r.status();
  EXPECT_TRUE(Contains(r.status(), "did you mean \"/test/add\"?")) << r.status();
  // A name that is no typo of a served one gets no suggestion.
  auto other = NewClient("/completely/elsewhere");
  const AddClient::Result far = other->Call(Add(1, 2), absl::Seconds(1));
  ASSERT_EQ(far.status().code(), absl::StatusCode::kUnavailable) << far.status();
  EXPECT_FALSE(Contains(far.status(), "did you mean")) << far.status();
  // Nor does a name whose server shut down (nothing is served).
  service->Shutdown();
  const AddClient::Result gone = typo->Call(Add(1, 2), absl::Seconds(1));
  EXPECT_FALSE(Contains(gone.status(), "did you mean")) << gone.status();
}

TEST_F(SimulatedServiceTest, WaitForServiceReturnsOnceAServerAppearsOrAtItsTimeout) {
  auto client = NewClient();
  auto absent = NewClient("/test/absent");
  auto ready = std::make_shared<std::atomic<int>>(-1);
  auto never = std::make_shared<std::atomic<int>>(-1);
  ASSERT_TRUE(runtime_.scheduler()->Dispatch(
      [client, ready] { *ready = client->WaitForService(absl::Seconds(1)) ? 1 : 0; }));
  ASSERT_TRUE(runtime_.scheduler()->Dispatch(
      [absent, never] { *never = absent->WaitForService(absl::Milliseconds(100)) ? 1 : 0; }));
  RunFor(absl::Milliseconds(50));
  EXPECT_EQ(ready->load(), -1);
  auto service = Serve();
  RunFor(absl::Milliseconds(50));
  EXPECT_EQ(ready->load(), 1);
  RunFor(absl::Milliseconds(100));
  EXPECT_EQ(never->load(), 0);
  EXPECT_TRUE(client->ServiceIsReady());
}

TEST_F(SimulatedServiceTest, AServerShutDownWithRequestsPendingFailsThemAsServerGone) {
  auto service = Serve();
  auto client = NewClient();
  Outcomes outcomes;
  CallFromRoutine(client, Add(1, 1, absl::Seconds(1)), absl::Seconds(10), &outcomes, 0);
  CallFromRoutine(client, Add(2, 2), absl::Seconds(10), &outcomes, 1);  // queued behind
  RunFor(absl::Milliseconds(10));
  EXPECT_EQ(service->stats().pending, 1u);
  // Shut down from a routine: it waits for the running request's callback.
  auto shut = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE(runtime_.scheduler()->Dispatch([this, shut] {
    server_node_->Shutdown();
    *shut = true;
  }));
  RunFor(absl::Milliseconds(10));
  ASSERT_EQ(outcomes.count(1), 1u);
  const absl::Status gone = outcomes.first(1).status();
  EXPECT_EQ(gone.code(), absl::StatusCode::kUnavailable) << gone;
  EXPECT_TRUE(Contains(gone, "node \"planner\"")) << gone;
  EXPECT_TRUE(Contains(gone, "service \"/test/add\"")) << gone;
  EXPECT_TRUE(Contains(gone, "server (node \"router\") is gone")) << gone;
  EXPECT_FALSE(shut->load()) << "returned while the callback was still running";
  EXPECT_EQ(outcomes.count(0), 0u);
  // The running request finishes and is answered; then Shutdown() returns.
  RunFor(absl::Seconds(1));
  ASSERT_EQ(outcomes.count(0), 1u);
  EXPECT_TRUE(outcomes.first(0).ok()) << outcomes.first(0).status();
  EXPECT_TRUE(shut->load());
  // Gone for good: a new call finds no server.
  const AddClient::Result after = client->Call(Add(3, 3), absl::Seconds(1));
  EXPECT_TRUE(Contains(after.status(), "no server")) << after.status();
  const ClientStats s = client->stats();
  EXPECT_EQ(s.server_gone, 1u);
  EXPECT_EQ(s.responses, 1u);
  EXPECT_EQ(s.no_server, 1u);
  EXPECT_EQ(s.timeouts, 0u);
  EXPECT_EQ(service->stats().dropped_shutdown, 1u);
}

TEST_F(SimulatedServiceTest, AClientShutDownCancelsItsPendingCallsAndRunsNoMoreCallbacks) {
  auto service = Serve();
  auto client = NewClient();
  Outcomes outcomes;
  auto request = std::make_shared<const AddRequest>(Add(1, 2, absl::Milliseconds(500)));
  std::shared_future<AddClient::Result> future = client->AsyncCall(request, absl::Seconds(10));
  std::shared_future<std::shared_ptr<AddResponse>> cyber_future =
      client->AsyncSendRequest(std::make_shared<AddRequest>(*request), absl::Seconds(10));
  std::atomic<int> callbacks{0};
  client->AsyncCall(request, absl::Seconds(10),
                    [&callbacks](AddClient::Result) { ++callbacks; });
  CallFromRoutine(client, *request, absl::Seconds(10), &outcomes, 0);
  RunFor(absl::Milliseconds(10));
  EXPECT_EQ(client->stats().pending, 4u);
  client_node_->Shutdown();  // no callback runs: returns at once
  ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  const absl::Status cancelled = future.get().status();
  EXPECT_EQ(cancelled.code(), absl::StatusCode::kCancelled) << cancelled;
  EXPECT_TRUE(Contains(cancelled, "node \"planner\"")) << cancelled;
  EXPECT_TRUE(Contains(cancelled, "service \"/test/add\"")) << cancelled;
  EXPECT_TRUE(Contains(cancelled, "shut down")) << cancelled;
  ASSERT_EQ(cyber_future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(cyber_future.get(), nullptr);
  // The server finishes the request it was serving (too late) and skips
  // the three whose client stopped waiting.
  RunFor(absl::Seconds(5));
  ASSERT_EQ(outcomes.count(0), 1u);
  EXPECT_EQ(outcomes.first(0).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(callbacks.load(), 0);
  const AddClient::Result after = client->Call(Add(1, 1), absl::Seconds(1));
  EXPECT_EQ(after.status().code(), absl::StatusCode::kFailedPrecondition) << after.status();
  const ClientStats s = client->stats();
  EXPECT_EQ(s.cancelled, 4u);
  EXPECT_EQ(s.callbacks_dropped, 1u);
  EXPECT_EQ(s.late_responses, 1u);
  EXPECT_EQ(service->stats().skipped_past_deadline, 3u);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_TRUE(client->is_shut_down());
}

TEST_F(SimulatedServiceTest, AnAsyncCallbackRunsOnceAsARoutineOnTheClientNodesRoute) {
  auto service = Serve();
  auto client = NewClient();
  Outcomes outcomes;
  std::atomic<int> outside_routine{0};
  for (int i = 0; i < 3; ++i) {
    client->AsyncCall(std::make_shared<const AddRequest>(Add(i, i)), absl::Seconds(1),
                      [&, i](AddClient::Result r) {
                        if (CRoutine::Current() == nullptr) ++outside_routine;
                        outcomes.Add(i, r);
                      });
  }
  RunFor(absl::Milliseconds(10));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(outcomes.count(i), 1u) << i;
    EXPECT_EQ(*outcomes.first(i), 2 * i);
  }
  EXPECT_EQ(outside_routine.load(), 0);
}

TEST_F(SimulatedServiceTest, ManyConcurrentCallsEachHaveExactlyOneOutcome) {
  auto service = Serve();
  auto client = NewClient();
  Outcomes outcomes;
  constexpr int kCalls = 120;
  for (int i = 0; i < kCalls; ++i) {
    // One request after another at the server; timeouts from 1 to 61 ms:
    // the early ones are answered, the later ones time out and their
    // responses come late.
    const AddRequest request = Add(i, i, absl::Microseconds(300 + 100 * (i % 7)));
    const absl::Duration timeout = absl::Milliseconds(1 + (i % 13) * 5);
    if (i % 3 == 0) {
      client->AsyncCall(std::make_shared<const AddRequest>(request), timeout,
                        [&outcomes, i](AddClient::Result r) { outcomes.Add(i, r); });
    } else {
      CallFromRoutine(client, request, timeout, &outcomes, i);
    }
  }
  RunFor(absl::Seconds(10));
  int answered = 0;
  int timed_out = 0;
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_EQ(outcomes.count(i), 1u) << "call " << i;
    const absl::StatusOr<int> r = outcomes.first(i);
    if (r.ok()) {
      EXPECT_EQ(*r, 2 * i);
      ++answered;
    } else {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
      ++timed_out;
    }
  }
  EXPECT_GT(answered, 0);
  EXPECT_GT(timed_out, 0);
  const ClientStats s = client->stats();
  EXPECT_EQ(s.calls, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(s.responses, static_cast<uint64_t>(answered));
  EXPECT_EQ(s.timeouts, static_cast<uint64_t>(timed_out));
  // Every request was served, or skipped because its deadline had passed
  // when its turn came; a timed-out call that was served got its response
  // late.
  const ServiceStats ss = service->stats();
  EXPECT_EQ(ss.responses + ss.skipped_past_deadline, static_cast<uint64_t>(kCalls));
  EXPECT_GT(ss.skipped_past_deadline, 0u);
  EXPECT_EQ(s.late_responses + ss.skipped_past_deadline, static_cast<uint64_t>(timed_out));
  EXPECT_EQ(s.pending, 0u);
}

TEST_F(SimulatedServiceTest, ANonPositiveTimeoutSendsNothing) {
  ServerSeen seen;
  auto service = Serve(&seen);
  auto client = NewClient();
  const AddClient::Result r = client->Call(Add(1, 1), absl::ZeroDuration());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_TRUE(Contains(r.status(), "not sent")) << r.status();
  RunFor(absl::Milliseconds(10));
  EXPECT_EQ(seen.calls.load(), 0);
  EXPECT_EQ(client->stats().timeouts, 1u);
  EXPECT_EQ(client->stats().requests_sent, 0u);
}

TEST_F(SimulatedServiceTest, AFailingServerCallbackIsReportedToTheCallerAsInternal) {
  auto throws = server_node_->TryCreateService<AddRequest, AddResponse>(
      "/test/throws", [](const std::shared_ptr<AddRequest>&, std::shared_ptr<AddResponse>&) {
        throw std::runtime_error("no route to the moon");
      });
  ASSERT_TRUE(throws.ok()) << throws.status();
  auto nulls = server_node_->TryCreateService<AddRequest, AddResponse>(
      "/test/null", [](const std::shared_ptr<AddRequest>&, std::shared_ptr<AddResponse>& resp) {
        resp.reset();
      });
  ASSERT_TRUE(nulls.ok()) << nulls.status();
  auto c1 = NewClient("/test/throws");
  auto c2 = NewClient("/test/null");
  Outcomes outcomes;
  CallFromRoutine(c1, Add(1, 1), absl::Seconds(1), &outcomes, 0);
  CallFromRoutine(c2, Add(1, 1), absl::Seconds(1), &outcomes, 1);
  RunFor(absl::Milliseconds(10));
  const absl::Status threw = outcomes.first(0).status();
  EXPECT_EQ(threw.code(), absl::StatusCode::kInternal) << threw;
  EXPECT_TRUE(Contains(threw, "node \"planner\"")) << threw;
  EXPECT_TRUE(Contains(threw, "no route to the moon")) << threw;
  EXPECT_TRUE(Contains(threw, "node \"router\"")) << threw;
  const absl::Status null = outcomes.first(1).status();
  EXPECT_EQ(null.code(), absl::StatusCode::kInternal) << null;
  EXPECT_TRUE(Contains(null, "null")) << null;
  EXPECT_EQ((*throws)->stats().callback_errors, 1u);
  EXPECT_EQ(c1->stats().failed, 1u);
}

// --- errors of creation ----------------------------------------------------------

TEST(ServiceCreationTest, ErrorsNameTheNodeTheServiceAndTheValue) {
  Runtime::Options o;
  o.name = "errors";
  o.run_threads = false;
  Runtime rt(o);
  Node router("router", rt.scheduler(), rt.bus());
  Node other("other", rt.scheduler(), rt.bus());
  auto empty = router.TryCreateService<AddRequest, AddResponse>("", Adder(nullptr));
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(empty.status(), "node \"router\"")) << empty.status();
  auto no_callback = router.TryCreateService<AddRequest, AddResponse>(kService, nullptr);
  EXPECT_EQ(no_callback.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(no_callback.status(), kService)) << no_callback.status();
  ASSERT_TRUE((router.TryCreateService<AddRequest, AddResponse>(kService, Adder(nullptr)).ok()));
  auto second = other.TryCreateService<AddRequest, AddResponse>(kService, Adder(nullptr));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(Contains(second.status(), "node \"other\"")) << second.status();
  EXPECT_TRUE(Contains(second.status(), "node \"router\"")) << second.status();
  auto mistyped = other.TryCreateClient<AddRequest, OtherResponse>(kService);
  EXPECT_EQ(mistyped.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(mistyped.status(), "OtherResponse")) << mistyped.status();
  EXPECT_TRUE(Contains(mistyped.status(), "AddResponse")) << mistyped.status();
  EXPECT_TRUE(Contains(mistyped.status(), "first used by node \"router\"")) << mistyped.status();
  // Cyber RT's spellings: nullptr.
  EXPECT_EQ((other.CreateClient<AddRequest, OtherResponse>(kService)), nullptr);
  EXPECT_EQ((other.CreateService<AddRequest, AddResponse>(kService, Adder(nullptr))), nullptr);
  EXPECT_NE((other.CreateClient<AddRequest, AddResponse>(kService)), nullptr);
  other.Shutdown();
  auto late = other.TryCreateClient<AddRequest, AddResponse>(kService);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(late.status(), "shut down")) << late.status();
  router.Shutdown();
  // Its server gone, the service can be served again.
  Node again("again", rt.scheduler(), rt.bus());
  EXPECT_TRUE((again.TryCreateService<AddRequest, AddResponse>(kService, Adder(nullptr)).ok()));
  again.Shutdown();
  rt.Shutdown();
}

TEST(ServiceCreationTest, BusesDoNotShareServices) {
  Runtime::Options o;
  o.run_threads = false;
  Runtime a(o);
  Runtime b(o);
  Node server("router", a.scheduler(), a.bus());
  Node client("planner", b.scheduler(), b.bus());
  ASSERT_TRUE((server.TryCreateService<AddRequest, AddResponse>(kService, Adder(nullptr)).ok()));
  auto c = client.TryCreateClient<AddRequest, AddResponse>(kService);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE((*c)->ServiceIsReady());
  server.Shutdown();
  client.Shutdown();
}

// --- with threads, on the real clock ---------------------------------------------

Runtime::Options Threaded(const std::string& name, int processors) {
  Runtime::Options o;
  o.name = name;
  o.config = scheduler::DefaultSchedulerConfig(processors);
  return o;
}

constexpr absl::Duration kGenerous = absl::Seconds(30);

TEST(ThreadedServiceTest, AThreadCallerBlocksUntilTheResponse) {
  Runtime rt(Threaded("threads", 2));
  Node router("router", rt.scheduler(), rt.bus());
  Node planner("planner", rt.scheduler(), rt.bus());
  ServerSeen seen;
  auto service = router.CreateService<AddRequest, AddResponse>(kService, Adder(&seen));
  ASSERT_NE(service, nullptr);
  auto client = planner.CreateClient<AddRequest, AddResponse>(kService);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->WaitForService(kGenerous));
  const AddClient::Result r = client->Call(Add(20, 22, absl::Milliseconds(5)), kGenerous);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->sum, 42);
  std::shared_ptr<AddResponse> cyber = client->SendRequest(Add(1, 2), kGenerous);
  ASSERT_NE(cyber, nullptr);
  EXPECT_EQ(cyber->sum, 3);
  EXPECT_EQ(seen.outside_routine.load(), 0);
  planner.Shutdown();
  router.Shutdown();
  rt.Shutdown();
}

TEST(ThreadedServiceTest, ARoutineCallerParksSoItsOnlyProcessorRunsTheServer) {
  // One processor: if the calling routine blocked it, the server's routine
  // could never run and the call would time out.
  Runtime rt(Threaded("one_processor", 1));
  Node router("router", rt.scheduler(), rt.bus());
  Node planner("planner", rt.scheduler(), rt.bus());
  auto service = router.TryCreateService<AddRequest, AddResponse>(kService, Adder(nullptr));
  ASSERT_TRUE(service.ok());
  auto client = planner.TryCreateClient<AddRequest, AddResponse>(kService);
  ASSERT_TRUE(client.ok());
  std::shared_ptr<AddClient> c = *client;
  std::future<AddClient::Result> f = rt.scheduler()->Async(
      [c] { return c->Call(Add(4, 5, absl::Milliseconds(2)), kGenerous); });
  const AddClient::Result r = f.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->sum, 9);
  EXPECT_EQ(c->stats().timeouts, 0u);
  planner.Shutdown();
  router.Shutdown();
  rt.Shutdown();
}

TEST(ThreadedServiceTest, TheServerCallbackRunsOnTheServerNodesRoute) {
  Runtime::Options o;
  o.name = "routes";
  auto conf = scheduler::ParseSchedulerConfig(R"(
classic_conf {
  groups { name: "main" processor_num: 1 }
  groups { name: "rt" processor_num: 1 tasks { name: "router" prio: 3 } }
}
)", "routes.conf");
  ASSERT_TRUE(conf.ok()) << conf.status();
  o.config = *conf;
  Runtime rt(o);
  Node router("router", rt.scheduler(), rt.bus());
  Node planner("planner", rt.scheduler(), rt.bus());
  ASSERT_EQ(router.route(), (timer::Route{3, 1}));
  ServerSeen seen;
  auto service = router.TryCreateService<AddRequest, AddResponse>(kService, Adder(&seen));
  ASSERT_TRUE(service.ok());
  auto client = planner.TryCreateClient<AddRequest, AddResponse>(kService);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Call(Add(1, 1), kGenerous).ok());
  EXPECT_EQ(seen.priority.load(), 3);
  EXPECT_EQ(seen.group.load(), 1);
  planner.Shutdown();
  router.Shutdown();
  rt.Shutdown();
}

TEST(ThreadedServiceTest, ManyCallsFromThreadsAndRoutinesEachHaveExactlyOneOutcome) {
  Runtime rt(Threaded("many", 2));
  Node router("router", rt.scheduler(), rt.bus());
  Node planner("planner", rt.scheduler(), rt.bus());
  auto service = router.TryCreateService<AddRequest, AddResponse>(kService, Adder(nullptr));
  ASSERT_TRUE(service.ok());
  auto client = planner.TryCreateClient<AddRequest, AddResponse>(kService);
  ASSERT_TRUE(client.ok());
  std::shared_ptr<AddClient> c = *client;
  Outcomes outcomes;
  constexpr int kThreads = 3;
  constexpr int kPerThread = 30;
  constexpr int kAsync = 90;
  constexpr int kCalls = kThreads * kPerThread + kAsync;
  // Timeouts of 1 to 10 ms against requests of 0 to 2 ms served one at a
  // time: some are answered, some time out; which ones depends on the load,
  // and nothing below depends on it.
  auto timeout_of = [](int i) { return absl::Milliseconds(1 + i % 10); };
  auto request_of = [](int i) { return Add(i, i, absl::Microseconds(500 * (i % 5))); };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) {
        const int i = t * kPerThread + k;
        outcomes.Add(i, c->Call(request_of(i), timeout_of(i)));
      }
    });
  }
  for (int k = 0; k < kAsync; ++k) {
    const int i = kThreads * kPerThread + k;
    c->AsyncCall(std::make_shared<const AddRequest>(request_of(i)), timeout_of(i),
                 [&outcomes, i](AddClient::Result r) { outcomes.Add(i, r); });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(Eventually([&] { return outcomes.total() >= kCalls; })) << outcomes.total();
  // Every request is served in the end, or skipped because its deadline
  // had passed when its turn came; a timed-out call that was served gets
  // its response late.
  ASSERT_TRUE(Eventually([&] {
    const ServiceStats ss = (*service)->stats();
    return ss.responses + ss.skipped_past_deadline == static_cast<uint64_t>(kCalls);
  }));
  const uint64_t skipped = (*service)->stats().skipped_past_deadline;
  ASSERT_TRUE(Eventually([&] {
    const ClientStats s = c->stats();
    return s.late_responses + skipped == s.timeouts;
  })) << c->stats().late_responses << " late, " << skipped << " skipped, "
      << c->stats().timeouts << " timeouts";
  uint64_t ok = 0;
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_EQ(outcomes.count(i), 1u) << "call " << i;
    const absl::StatusOr<int> r = outcomes.first(i);
    if (r.ok()) {
      EXPECT_EQ(*r, 2 * i);
      ++ok;
    } else {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
    }
  }
  const ClientStats s = c->stats();
  EXPECT_EQ(s.calls, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(s.responses, ok);
  EXPECT_EQ(s.responses + s.timeouts, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(s.pending, 0u);
  planner.Shutdown();
  router.Shutdown();
  rt.Shutdown();
}

// --- lifetimes and shutdown orders --------------------------------------------------

TEST(ServiceLifetimeTest, HandlesOutliveTheirNodesAndTheRuntime) {
  std::shared_ptr<AddClient> client;
  std::shared_ptr<AddService> service;
  {
    Runtime rt(Threaded("short", 1));
    {
      Node router("router", rt.scheduler(), rt.bus());
      Node planner("planner", rt.scheduler(), rt.bus());
      service = router.CreateService<AddRequest, AddResponse>(kService, Adder(nullptr));
      client = planner.CreateClient<AddRequest, AddResponse>(kService);
      ASSERT_NE(client, nullptr);
      ASSERT_TRUE(client->Call(Add(1, 1), kGenerous).ok());
      // The client's node goes first here, the server's after it.
    }
    rt.Shutdown();
  }
  EXPECT_TRUE(client->is_shut_down());
  EXPECT_TRUE(service->is_shut_down());
  EXPECT_EQ(client->Call(Add(1, 1), kGenerous).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(client->WaitForService(absl::Milliseconds(1)));
}

TEST(ServiceLifetimeTest, TheServerNodeDestroyedBeforeTheClientNode) {
  Runtime rt(Threaded("order", 1));
  auto planner = std::make_unique<Node>("planner", rt.scheduler(), rt.bus());
  auto client = planner->CreateClient<AddRequest, AddResponse>(kService);
  {
    Node router("router", rt.scheduler(), rt.bus());
    ASSERT_NE((router.CreateService<AddRequest, AddResponse>(kService, Adder(nullptr))), nullptr);
    ASSERT_TRUE(client->Call(Add(1, 1), kGenerous).ok());
  }
  EXPECT_EQ(client->Call(Add(1, 1), kGenerous).status().code(), absl::StatusCode::kUnavailable);
  planner.reset();
  rt.Shutdown();
}

TEST(ServiceLifetimeTest, TheClientsRuntimeShutDownUnblocksAThreadAndCancelsARoutine) {
  // The server runs on a runtime of its own and never answers in time.
  Runtime server_rt(Threaded("server_rt", 1));
  Runtime client_rt(Threaded("client_rt", 1));
  ChannelBus* bus = server_rt.bus();
  Node router("router", server_rt.scheduler(), bus);
  Node planner("planner", client_rt.scheduler(), bus);
  ServerSeen seen;
  ASSERT_NE((router.CreateService<AddRequest, AddResponse>(kService, Adder(&seen))), nullptr);
  auto client = planner.CreateClient<AddRequest, AddResponse>(kService);
  ASSERT_NE(client, nullptr);
  const AddRequest forever = Add(1, 1, absl::Hours(1));
  AddClient::Result from_thread = absl::UnknownError("not returned");
  std::atomic<bool> thread_returned{false};
  std::thread caller([&] {
    from_thread = client->Call(forever, absl::InfiniteDuration());
    thread_returned = true;
  });
  std::future<AddClient::Result> from_routine = client_rt.scheduler()->Async(
      [client, forever] { return client->Call(forever, absl::InfiniteDuration()); });
  std::shared_future<AddClient::Result> async = client->AsyncCall(
      std::make_shared<const AddRequest>(forever), absl::InfiniteDuration());
  ASSERT_TRUE(Eventually([&] { return client->stats().pending == 3; }));
  client_rt.Shutdown();
  caller.join();
  ASSERT_TRUE(thread_returned.load());
  EXPECT_EQ(from_thread.status().code(), absl::StatusCode::kCancelled) << from_thread.status();
  EXPECT_TRUE(Contains(from_thread.status(), "client_rt")) << from_thread.status();
  // The routine was cancelled by its scheduler: its Async never completes.
  EXPECT_THROW((void)from_routine.get(), std::future_error);
  // Nobody waits for the asynchronous call: it ends with the client.
  EXPECT_EQ(async.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  planner.Shutdown();
  ASSERT_EQ(async.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(async.get().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(client->stats().cancelled, 3u);
  server_rt.Shutdown();  // cancels the sleeping server routine
  router.Shutdown();
}

}  // namespace
}  // namespace cyber
