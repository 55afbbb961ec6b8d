// Services under load, within one process, on simulated time: deferred
// answers (ServiceResponder), requests served side by side
// (ServiceOptions::concurrency), the client's deadline carried with the
// request and the requests past it skipped, bounded queues that refuse at
// once, and the counts on both sides adding up.
//
// Every test runs a runtime without threads on a simulated clock (the test
// moves time and runs the ready routines), so each instant below is exact
// and the same in every run; one test answers from a plain thread and
// waits for it with a generous deadline on a condition.

#include <algorithm>
#include <map>
#include <stdexcept>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/common/test_waits.h"
#include "cyber/node/node.h"
#include "cyber/runtime/runtime.h"
#include "cyber/service/client.h"
#include "cyber/service/service.h"
#include "cyber/testing/run_simulated_runtime.h"
#include "cyber/time/simulated_clock.h"
#include "gtest/gtest.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/croutine.h"
#include "timer/timer.h"

namespace cyber {
namespace {

using scheduler::CRoutine;

struct LookupRequest {
  int id = 0;
  absl::Duration work;  // how long the server takes (a routine sleep)
};
struct LookupResponse {
  int id = 0;
};

using LookupService = Service<LookupRequest, LookupResponse>;
using LookupClient = Client<LookupRequest, LookupResponse>;
using Responder = ServiceResponder<LookupResponse>;
constexpr char kLookup[] = "/map/lookup";

LookupRequest Request(int id, absl::Duration work = absl::ZeroDuration()) {
  LookupRequest r;
  r.id = id;
  r.work = work;
  return r;
}

LookupResponse Response(int id) {
  LookupResponse r;
  r.id = id;
  return r;
}

// Each request's outcome, by id; how many callbacks were inside at once.
struct Seen {
  std::map<int, absl::StatusOr<int>> outcomes;
  std::map<int, Instant> ended_at;
  std::vector<int> served;  // ids whose callback ran, in order
  int inside = 0;
  int most_inside = 0;
  void Enter(int id) {
    served.push_back(id);
    most_inside = std::max(most_inside, ++inside);
  }
  void Leave() { --inside; }
};

// Every request counted once, in one of the endings (idle service).
void ExpectBalanced(const ServiceStats& s) {
  EXPECT_EQ(s.in_progress, 0u);
  EXPECT_EQ(s.requests, s.responses + s.callback_errors + s.errors + s.abandoned +
                            s.skipped_past_deadline + s.refused_full + s.dropped_oldest +
                            s.dropped_shutdown + s.pending);
}
void ExpectBalanced(const ClientStats& s) {
  EXPECT_EQ(s.calls, s.responses + s.timeouts + s.server_gone + s.no_server + s.refused +
                         s.cancelled + s.failed + s.pending);
}

bool Contains(const absl::Status& s, absl::string_view part) {
  return absl::StrContains(s.message(), part);
}

class ServiceLoadTest : public ::testing::Test {
 protected:
  ServiceLoadTest()
      : clock_(Instant() + absl::Hours(1)),
        runtime_(Options(&clock_)),
        server_node_(std::make_unique<Node>("map_server", runtime_.scheduler(), runtime_.bus())),
        client_node_(std::make_unique<Node>("planner", runtime_.scheduler(), runtime_.bus())) {}

  ~ServiceLoadTest() override {
    RunFor(absl::Hours(1));  // whatever still sleeps finishes
    client_node_->Shutdown();
    server_node_->Shutdown();
    runtime_.Shutdown();
  }

  static Runtime::Options Options(SimulatedClock* clock) {
    Runtime::Options o;
    o.name = "services_under_load";
    o.clock = clock;
    o.run_threads = false;
    return o;
  }

  void RunFor(absl::Duration d) {
    test::RunSimulatedRuntimeUntil(&runtime_, &clock_, clock_.Now() + d);
  }

  // A Cyber RT-style server: sleeps the request's work, answers its id.
  std::shared_ptr<LookupService> Serve(const ServiceOptions& options = {}) {
    auto service = server_node_->TryCreateService<LookupRequest, LookupResponse>(
        kLookup,
        [this](const std::shared_ptr<LookupRequest>& req,
               std::shared_ptr<LookupResponse>& resp) {
          seen_.Enter(req->id);
          if (req->work > absl::ZeroDuration()) CRoutine::SleepFor(req->work);
          resp->id = req->id;
          seen_.Leave();
        },
        options);
    EXPECT_TRUE(service.ok()) << service.status();
    return service.ok() ? *service : nullptr;
  }

  std::shared_ptr<LookupService> ServeDeferred(LookupService::DeferredCallback callback,
                                               const ServiceOptions& options = {}) {
    auto service = server_node_->TryCreateDeferredService<LookupRequest, LookupResponse>(
        kLookup, std::move(callback), options);
    EXPECT_TRUE(service.ok()) << service.status();
    return service.ok() ? *service : nullptr;
  }

  std::shared_ptr<LookupClient> NewClient() {
    auto client = client_node_->TryCreateClient<LookupRequest, LookupResponse>(kLookup);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *client : nullptr;
  }

  // Sends request `id` now; its outcome lands in seen_.
  void Call(const std::shared_ptr<LookupClient>& client, int id, absl::Duration timeout,
            absl::Duration work = absl::ZeroDuration()) {
    client->AsyncCall(std::make_shared<const LookupRequest>(Request(id, work)), timeout,
                      [this, id](LookupClient::Result r) {
                        seen_.outcomes.emplace(id, r.ok() ? absl::StatusOr<int>((*r)->id)
                                                          : absl::StatusOr<int>(r.status()));
                        seen_.ended_at.emplace(id, clock_.Now());
                      });
  }

  absl::StatusOr<int> OutcomeOf(int id) {
    auto it = seen_.outcomes.find(id);
    if (it == seen_.outcomes.end()) return absl::UnknownError("no outcome yet");
    return it->second;
  }

  SimulatedClock clock_;
  Runtime runtime_;
  std::unique_ptr<Node> server_node_;
  std::unique_ptr<Node> client_node_;
  Seen seen_;
};

// --- deferred answers ----------------------------------------------------------

TEST_F(ServiceLoadTest, ADeferredServiceAnswersLaterFromATimer) {
  std::vector<std::unique_ptr<timer::Timer>> timers;
  auto service = ServeDeferred(
      [&](const std::shared_ptr<const LookupRequest>& req, Responder responder) {
        // The callback returns at once; a oneshot timer answers 30 ms later.
        const int id = req->id;
        // (Started in the service's routine: on its runtime's timer system.)
        auto t = std::make_unique<timer::Timer>(
            30, [responder, id] { EXPECT_TRUE(responder.Send(Response(id)).ok()); },
            /*oneshot=*/true);
        t->Start();
        timers.push_back(std::move(t));
      });
  auto client = NewClient();
  const Instant sent = clock_.Now();
  Call(client, 7, absl::Seconds(1));
  RunFor(absl::Milliseconds(29));
  EXPECT_FALSE(OutcomeOf(7).ok()) << "answered before the timer fired";
  RunFor(absl::Milliseconds(10));
  ASSERT_TRUE(OutcomeOf(7).ok()) << OutcomeOf(7).status();
  EXPECT_EQ(*OutcomeOf(7), 7);
  EXPECT_GE(seen_.ended_at[7] - sent, absl::Milliseconds(30));
  const ServiceStats s = service->stats();
  EXPECT_EQ(s.responses, 1u);
  EXPECT_GE(s.latency_p50, absl::Milliseconds(30));
  ExpectBalanced(s);
  EXPECT_GE(client->stats().latency_p99, absl::Milliseconds(30));
  ExpectBalanced(client->stats());
  for (auto& t : timers) t->Stop();
}

TEST_F(ServiceLoadTest, ADeferredServiceAnswersFromAPlainThread) {
  std::vector<std::thread> threads;
  auto service = ServeDeferred(
      [&](const std::shared_ptr<const LookupRequest>& req, Responder responder) {
        const int id = req->id;
        threads.emplace_back([responder, id] { (void)responder.Send(Response(id)); });
      });
  auto client = NewClient();
  Call(client, 1, absl::InfiniteDuration());
  RunFor(absl::Milliseconds(1));
  for (auto& t : threads) t.join();
  // The thread's answer queued the client's callback as a routine.
  ASSERT_TRUE(test::Eventually([&] {
    RunFor(absl::Milliseconds(1));
    return OutcomeOf(1).ok();
  }));
  EXPECT_EQ(*OutcomeOf(1), 1);
  ExpectBalanced(service->stats());
}

TEST_F(ServiceLoadTest, ASecondAnswerIsRefusedAndCountedTheClientKeepsTheFirst) {
  std::optional<Responder> kept;
  auto service = ServeDeferred(
      [&](const std::shared_ptr<const LookupRequest>& req, Responder responder) {
        EXPECT_TRUE(responder.Send(Response(req->id)).ok());
        kept = responder;
      });
  auto client = NewClient();
  Call(client, 3, absl::Seconds(1));
  RunFor(absl::Milliseconds(1));
  ASSERT_TRUE(kept.has_value());
  EXPECT_TRUE(kept->answered());
  const absl::Status again = kept->Send(Response(99));
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition) << again;
  EXPECT_TRUE(Contains(again, "service \"/map/lookup\"")) << again;
  EXPECT_TRUE(Contains(again, "answered already")) << again;
  EXPECT_EQ(kept->Fail(absl::AbortedError("late")).code(),
            absl::StatusCode::kFailedPrecondition);
  RunFor(absl::Milliseconds(1));
  EXPECT_EQ(*OutcomeOf(3), 3);
  const ServiceStats s = service->stats();
  EXPECT_EQ(s.double_answers, 2u);
  EXPECT_EQ(s.responses, 1u);
  kept.reset();
  ExpectBalanced(service->stats());
}

TEST_F(ServiceLoadTest, ADroppedResponderAnswersTheClientInternalNeverSilence) {
  auto service = ServeDeferred([](const std::shared_ptr<const LookupRequest>&, Responder) {
    // The responder is dropped without an answer.
  });
  auto client = NewClient();
  Call(client, 4, absl::InfiniteDuration());  // no timeout would ever end it
  RunFor(absl::Milliseconds(1));
  const absl::StatusOr<int> r = OutcomeOf(4);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal) << r.status();
  EXPECT_TRUE(Contains(r.status(), "without an answer")) << r.status();
  EXPECT_TRUE(Contains(r.status(), "node \"map_server\"")) << r.status();
  EXPECT_EQ(service->stats().abandoned, 1u);
  ExpectBalanced(service->stats());
  EXPECT_EQ(client->stats().failed, 1u);
}

TEST_F(ServiceLoadTest, AFailAnswerReachesTheClientAsItself) {
  auto service = ServeDeferred(
      [](const std::shared_ptr<const LookupRequest>& req, Responder responder) {
        EXPECT_TRUE(
            responder.Fail(absl::NotFoundError(absl::StrCat("no map tile ", req->id))).ok());
      });
  auto client = NewClient();
  Call(client, 12, absl::Seconds(1));
  RunFor(absl::Milliseconds(1));
  const absl::StatusOr<int> r = OutcomeOf(12);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_TRUE(Contains(r.status(), "no map tile 12")) << r.status();
  EXPECT_TRUE(Contains(r.status(), "node \"planner\"")) << r.status();  // the caller's
  EXPECT_EQ(service->stats().errors, 1u);
  ExpectBalanced(service->stats());
}

TEST_F(ServiceLoadTest, ANullResponseOrAnOkFailureAnswersInternalNamingTheServer) {
  auto service = ServeDeferred(
      [](const std::shared_ptr<const LookupRequest>& req, Responder responder) {
        if (req->id == 1) {
          EXPECT_TRUE(responder.Send(std::shared_ptr<const LookupResponse>()).ok());
        } else {
          EXPECT_TRUE(responder.Fail(absl::OkStatus()).ok());
        }
      });
  auto client = NewClient();
  Call(client, 1, absl::Seconds(1));
  Call(client, 2, absl::Seconds(1));
  RunFor(absl::Milliseconds(1));
  for (int id : {1, 2}) {
    const absl::StatusOr<int> r = OutcomeOf(id);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal) << r.status();
    EXPECT_TRUE(Contains(r.status(), "the server (node \"map_server\")")) << r.status();
  }
  EXPECT_TRUE(Contains(OutcomeOf(1).status(), "null response")) << OutcomeOf(1).status();
  EXPECT_TRUE(Contains(OutcomeOf(2).status(), "OK status")) << OutcomeOf(2).status();
  ExpectBalanced(service->stats());
}

TEST_F(ServiceLoadTest, ADeferredCallbackThatThrowsBeforeAnsweringAnswersInternal) {
  auto service = ServeDeferred([](const std::shared_ptr<const LookupRequest>&, Responder) {
    throw std::runtime_error("tile cache corrupt");
  });
  auto client = NewClient();
  Call(client, 5, absl::Seconds(1));
  RunFor(absl::Milliseconds(1));
  const absl::StatusOr<int> r = OutcomeOf(5);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal) << r.status();
  EXPECT_TRUE(Contains(r.status(), "tile cache corrupt")) << r.status();
  EXPECT_EQ(service->stats().callback_errors, 1u);
  ExpectBalanced(service->stats());
}

TEST_F(ServiceLoadTest, ShutdownTellsTheClientsOfUnansweredRequestsAndLaterAnswersAreRefused) {
  std::vector<Responder> kept;
  auto service = ServeDeferred(
      [&](const std::shared_ptr<const LookupRequest>&, Responder responder) {
        kept.push_back(responder);
      });
  auto client = NewClient();
  Call(client, 1, absl::InfiniteDuration());
  Call(client, 2, absl::InfiniteDuration());
  RunFor(absl::Milliseconds(1));
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(service->stats().in_progress, 2u);
  service->Shutdown();
  RunFor(absl::Milliseconds(1));
  for (int id : {1, 2}) {
    const absl::StatusOr<int> r = OutcomeOf(id);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
    EXPECT_TRUE(Contains(r.status(), "before it answered")) << r.status();
  }
  EXPECT_EQ(kept[0].Send(Response(1)).code(), absl::StatusCode::kFailedPrecondition);
  const ServiceStats s = service->stats();
  EXPECT_EQ(s.dropped_shutdown, 2u);
  kept.clear();
  ExpectBalanced(service->stats());
  ExpectBalanced(client->stats());
}

TEST_F(ServiceLoadTest, AnEmptyResponderAnswersNothing) {
  Responder empty;
  EXPECT_FALSE(empty.valid());
  EXPECT_EQ(empty.Send(Response(1)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(empty.deadline(), Instant::InfiniteFuture());
}

// --- side by side ----------------------------------------------------------------

TEST_F(ServiceLoadTest, ByDefaultOneRequestAtATimeInArrivalOrder) {
  auto service = Serve();
  auto client = NewClient();
  for (int id = 0; id < 4; ++id) Call(client, id, absl::Seconds(10), absl::Milliseconds(100));
  RunFor(absl::Milliseconds(399));
  EXPECT_EQ(seen_.outcomes.size(), 3u);  // the 4th ends at 400 ms
  RunFor(absl::Milliseconds(1));
  EXPECT_EQ(seen_.outcomes.size(), 4u);
  EXPECT_EQ(seen_.most_inside, 1);
  EXPECT_EQ(seen_.served, (std::vector<int>{0, 1, 2, 3}));
  ExpectBalanced(service->stats());
}

TEST_F(ServiceLoadTest, WithConcurrencyNUpToNRequestsAreServedSideBySide) {
  ServiceOptions options;
  options.concurrency = 4;
  auto service = Serve(options);
  auto client = NewClient();
  for (int id = 0; id < 6; ++id) Call(client, id, absl::Seconds(10), absl::Milliseconds(100));
  RunFor(absl::Milliseconds(100));
  EXPECT_EQ(seen_.outcomes.size(), 4u);  // four at once
  EXPECT_EQ(seen_.most_inside, 4);
  RunFor(absl::Milliseconds(100));
  EXPECT_EQ(seen_.outcomes.size(), 6u);
  EXPECT_EQ(seen_.served, (std::vector<int>{0, 1, 2, 3, 4, 5}));  // taken in order
  for (int id = 0; id < 6; ++id) EXPECT_EQ(*OutcomeOf(id), id);
  ExpectBalanced(service->stats());
}

TEST_F(ServiceLoadTest, ShutdownFromARoutineWaitsForEveryRunningCallback) {
  ServiceOptions options;
  options.concurrency = 3;
  auto service = Serve(options);
  auto client = NewClient();
  for (int id = 0; id < 3; ++id) Call(client, id, absl::Seconds(10), absl::Milliseconds(50));
  RunFor(absl::Milliseconds(10));
  ASSERT_EQ(seen_.inside, 3);
  Instant returned = Instant::InfiniteFuture();
  ASSERT_TRUE(runtime_.scheduler()->Dispatch([&] {
    service->Shutdown();
    returned = clock_.Now();
  }));
  RunFor(absl::Milliseconds(100));
  EXPECT_EQ(returned, Instant() + absl::Hours(1) + absl::Milliseconds(50));
  EXPECT_EQ(seen_.inside, 0);
  for (int id = 0; id < 3; ++id) EXPECT_EQ(*OutcomeOf(id), id);  // still sent
}

// --- the deadline travels ---------------------------------------------------------

TEST_F(ServiceLoadTest, TheResponderKnowsTheClientsDeadline) {
  std::optional<Instant> deadline;
  auto service = ServeDeferred(
      [&](const std::shared_ptr<const LookupRequest>& req, Responder responder) {
        deadline = responder.deadline();
        (void)responder.Send(Response(req->id));
      });
  auto client = NewClient();
  const Instant sent = clock_.Now();
  Call(client, 1, absl::Milliseconds(150));
  Call(client, 2, absl::InfiniteDuration());
  RunFor(absl::Milliseconds(1));
  ASSERT_TRUE(deadline.has_value());
  EXPECT_EQ(*deadline, Instant::InfiniteFuture());  // the last one: no timeout
  deadline.reset();
  Call(client, 3, absl::Milliseconds(150));
  RunFor(absl::Milliseconds(1));
  ASSERT_TRUE(deadline.has_value());
  EXPECT_EQ(*deadline, sent + absl::Milliseconds(1) + absl::Milliseconds(150));
}

// A serial server busy for 300 ms: the requests behind it whose clients
// stop waiting meanwhile are never served; one without a timeout is.
TEST_F(ServiceLoadTest, RequestsPastTheirDeadlineAreSkippedNotServed) {
  auto service = Serve();
  auto client = NewClient();
  Call(client, 0, absl::Seconds(1), absl::Milliseconds(300));
  Call(client, 1, absl::Milliseconds(150));   // gives up at 150 ms
  Call(client, 2, absl::Milliseconds(250));   // gives up at 250 ms
  Call(client, 3, absl::Milliseconds(400));   // its turn comes at 300 ms
  Call(client, 4, absl::InfiniteDuration());  // waits forever
  RunFor(absl::Seconds(1));
  EXPECT_EQ(seen_.served, (std::vector<int>{0, 3, 4}));
  EXPECT_EQ(*OutcomeOf(0), 0);
  EXPECT_EQ(*OutcomeOf(3), 3);
  EXPECT_EQ(*OutcomeOf(4), 4);
  for (int id : {1, 2}) {
    EXPECT_EQ(OutcomeOf(id).status().code(), absl::StatusCode::kDeadlineExceeded)
        << OutcomeOf(id).status();
  }
  // Each timed out at its own deadline, not earlier.
  const Instant start = Instant() + absl::Hours(1);
  EXPECT_GE(seen_.ended_at[1] - start, absl::Milliseconds(150));
  EXPECT_GE(seen_.ended_at[2] - start, absl::Milliseconds(250));
  const ServiceStats s = service->stats();
  EXPECT_EQ(s.skipped_past_deadline, 2u);
  EXPECT_EQ(s.responses, 3u);
  ExpectBalanced(s);
  const ClientStats c = client->stats();
  EXPECT_EQ(c.timeouts, 2u);
  EXPECT_EQ(c.late_responses, 0u);  // nothing was computed for nobody
  ExpectBalanced(c);
}

// --- bounded queues ------------------------------------------------------------------

TEST_F(ServiceLoadTest, AFullQueueRefusesTheNewestAtOnceNamingTheServiceAndDepth) {
  ServiceOptions options;
  options.queue_depth = 2;
  auto service = Serve(options);
  auto client = NewClient();
  // One being served, two waiting, two refused.
  Call(client, 0, absl::Seconds(10), absl::Milliseconds(100));
  RunFor(absl::Milliseconds(1));
  ASSERT_EQ(seen_.inside, 1);
  const Instant burst = clock_.Now();
  for (int id = 1; id < 5; ++id) Call(client, id, absl::Seconds(10), absl::Milliseconds(100));
  RunFor(absl::ZeroDuration());
  for (int id : {3, 4}) {
    const absl::StatusOr<int> r = OutcomeOf(id);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
    EXPECT_TRUE(Contains(r.status(), "service \"/map/lookup\"")) << r.status();
    EXPECT_TRUE(Contains(r.status(), "node \"map_server\"")) << r.status();
    EXPECT_TRUE(Contains(r.status(), "queue is full (2 waiting")) << r.status();
    EXPECT_EQ(seen_.ended_at[id], burst);  // at once
  }
  RunFor(absl::Seconds(1));
  EXPECT_EQ(seen_.served, (std::vector<int>{0, 1, 2}));
  const ServiceStats s = service->stats();
  EXPECT_EQ(s.refused_full, 2u);
  EXPECT_EQ(s.responses, 3u);
  ExpectBalanced(s);
  EXPECT_EQ(client->stats().refused, 2u);
  ExpectBalanced(client->stats());
}

TEST_F(ServiceLoadTest, AFullQueueThatDropsTheOldestServesTheNewest) {
  ServiceOptions options;
  options.queue_depth = 1;
  options.when_full = ServiceOptions::WhenFull::kDropOldest;
  auto service = Serve(options);
  auto client = NewClient();
  Call(client, 0, absl::Seconds(10), absl::Milliseconds(100));
  RunFor(absl::Milliseconds(1));  // 0 is being served
  for (int id = 1; id < 4; ++id) Call(client, id, absl::Seconds(10), absl::Milliseconds(100));
  RunFor(absl::Seconds(1));
  EXPECT_EQ(seen_.served, (std::vector<int>{0, 3}));
  for (int id : {1, 2}) {
    EXPECT_EQ(OutcomeOf(id).status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_TRUE(Contains(OutcomeOf(id).status(), "oldest")) << OutcomeOf(id).status();
  }
  const ServiceStats s = service->stats();
  EXPECT_EQ(s.dropped_oldest, 2u);
  ExpectBalanced(s);
}

TEST_F(ServiceLoadTest, OptionsOutOfRangeAreRefusedNamingTheFieldAndValue) {
  ServiceOptions zero;
  zero.concurrency = 0;
  auto a = server_node_->TryCreateService<LookupRequest, LookupResponse>(
      kLookup, [](const std::shared_ptr<LookupRequest>&, std::shared_ptr<LookupResponse>&) {},
      zero);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(a.status(), "ServiceOptions::concurrency is 0")) << a.status();
  EXPECT_TRUE(Contains(a.status(), "node \"map_server\"")) << a.status();
  EXPECT_TRUE(Contains(a.status(), "\"/map/lookup\"")) << a.status();
  ServiceOptions no_queue;
  no_queue.queue_depth = 0;
  auto b = server_node_->TryCreateDeferredService<LookupRequest, LookupResponse>(
      kLookup, [](const std::shared_ptr<const LookupRequest>&, Responder) {}, no_queue);
  EXPECT_TRUE(Contains(b.status(), "ServiceOptions::queue_depth is 0")) << b.status();
  // Nothing half-made: the name is still free.
  EXPECT_NE(Serve(), nullptr);
}

// --- real threads ----------------------------------------------------------------

// Lanes on two processor threads, answers from routines, timers' thread
// and plain threads, calls from threads and routines, a queue that
// overflows and a shutdown at the end: every call ends exactly once and
// both sides' counts add up. Asserts no duration (the sanitizers' configs
// run it too).
TEST(ServiceLoadThreadedTest, SideBySideDeferredAnswersFromEverywhereEachCallEndsOnce) {
  Runtime::Options o;
  o.name = "threaded_load";
  o.config = scheduler::DefaultSchedulerConfig(2);
  Runtime rt(o);
  Node server_node("map_server", rt.scheduler(), rt.bus());
  Node client_node("planner", rt.scheduler(), rt.bus());
  std::atomic<int> inside{0};
  std::atomic<int> most_inside{0};
  Mutex threads_mu;
  std::vector<std::thread> threads;
  ServiceOptions options;
  options.concurrency = 3;
  options.queue_depth = 8;
  auto service = server_node.TryCreateDeferredService<LookupRequest, LookupResponse>(
      kLookup,
      [&](const std::shared_ptr<const LookupRequest>& req, Responder responder) {
        const int now_inside = ++inside;
        int seen = most_inside.load();
        while (now_inside > seen && !most_inside.compare_exchange_weak(seen, now_inside)) {
        }
        CRoutine::Yield();
        --inside;
        switch (req->id % 4) {
          case 0:  // here
            (void)responder.Send(Response(req->id));
            break;
          case 1: {  // a plain thread
            MutexLock lock(&threads_mu);
            threads.emplace_back([responder, id = req->id] { (void)responder.Send(Response(id)); });
            break;
          }
          case 2:  // fails
            (void)responder.Fail(absl::NotFoundError("no tile"));
            break;
          default:  // dropped: INTERNAL
            break;
        }
      },
      options);
  ASSERT_TRUE(service.ok()) << service.status();
  auto client = client_node.TryCreateClient<LookupRequest, LookupResponse>(kLookup);
  ASSERT_TRUE(client.ok()) << client.status();
  std::shared_ptr<LookupClient> c = *client;
  constexpr int kThreads = 3;
  constexpr int kPerThread = 40;
  std::atomic<int> ended{0};
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) {
        const int id = t * kPerThread + k;
        if (k % 2 == 0) {
          const LookupClient::Result r = c->Call(Request(id), absl::Seconds(30));
          if (r.ok()) {
            EXPECT_EQ((*r)->id, id);
            ++ok;
          }
          ++ended;
        } else {
          c->AsyncCall(std::make_shared<const LookupRequest>(Request(id)), absl::Seconds(30),
                       [&, id](LookupClient::Result r) {
                         if (r.ok()) {
                           EXPECT_EQ((*r)->id, id);
                           ++ok;
                         }
                         ++ended;
                       });
        }
      }
    });
  }
  for (auto& t : callers) t.join();
  constexpr int kCalls = kThreads * kPerThread;
  ASSERT_TRUE(test::Eventually([&] { return ended.load() == kCalls; })) << ended.load();
  {
    MutexLock lock(&threads_mu);
    for (auto& t : threads) t.join();
    threads.clear();
  }
  EXPECT_LE(most_inside.load(), 3);
  const ClientStats cs = c->stats();
  EXPECT_EQ(cs.calls, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(cs.responses, static_cast<uint64_t>(ok.load()));
  EXPECT_EQ(cs.timeouts, 0u);
  ExpectBalanced(cs);
  ASSERT_TRUE(test::Eventually([&] { return (*service)->stats().in_progress == 0; }));
  const ServiceStats ss = (*service)->stats();
  EXPECT_EQ(ss.requests, static_cast<uint64_t>(kCalls));
  EXPECT_EQ(ss.responses, cs.responses);
  EXPECT_EQ(ss.refused_full, cs.refused);
  ExpectBalanced(ss);
  client_node.Shutdown();
  server_node.Shutdown();
  rt.Shutdown();
}

}  // namespace
}  // namespace cyber
