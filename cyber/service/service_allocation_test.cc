// What one in-process Client::Call allocates, counted exactly: a call whose
// timeout is armed and cancelled and whose response comes back, from a
// routine, once queues, pools and tables have grown to their size.
//
// Counted with cyber/testing/allocation_counter.h (operator new replaced in
// this binary), on a runtime without threads on a simulated clock: the
// test thread runs every routine, nothing else runs meanwhile, so the count
// is the same in every run and every config.
//
// What a call allocates, three times:
//   the pending-call record   one make_shared: the call's outcome, its lock,
//                             its timing-wheel entry (the timeout);
//   the response              the server callback's fresh Resp (Cyber RT's
//                             signature hands it one to fill);
//   the serving routine's     its SerialDelivery's drain ticket, which
//   ticket                    notices a drain the scheduler drops unrun
//                             (one per drain: a burst of requests shares
//                             it; here every call finds the queue empty).
// Arming and cancelling the timeout, the pending calls' table, the
// request queue and the routines (recycled by the scheduler) allocate
// nothing in the steady state.

#include <cstdint>
#include <memory>

#include "absl/time/time.h"
#include "cyber/runtime/runtime.h"
#include "cyber/testing/allocation_counter.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/service/client.h"
#include "cyber/node/node.h"
#include "cyber/service/service.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

struct AddRequest {
  int a = 0;
  int b = 0;
};
struct AddResponse {
  int sum = 0;
};

// Where the counter's probe allocation is kept (so it is not elided).
int* volatile probe_sink = nullptr;

// Calls before counting: the tables, queues and routine pools grow.
constexpr int kWarmUpCalls = 200;
constexpr int kCalls = 1000;

class ServiceAllocationTest : public ::testing::Test {
 protected:
  ServiceAllocationTest()
      : clock_(Instant() + absl::Hours(1)),
        runtime_([this] {
          Runtime::Options o;
          o.name = "svc_alloc";
          o.clock = &clock_;
          o.run_threads = false;
          return o;
        }()),
        server_node_("router", runtime_.scheduler(), runtime_.bus()),
        client_node_("planner", runtime_.scheduler(), runtime_.bus()) {}

  ~ServiceAllocationTest() override {
    client_node_.Shutdown();
    server_node_.Shutdown();
    runtime_.Shutdown();
  }

  // `n` calls from one routine, each with a timeout that is armed and then
  // cancelled by the response; the allocations made by the calls alone.
  uint64_t CallsFromRoutine(Client<AddRequest, AddResponse>* client, int n) {
    const auto request = std::make_shared<const AddRequest>(AddRequest{20, 22});
    uint64_t allocations = 0;
    int answered = 0;
    EXPECT_TRUE(runtime_.scheduler()->Dispatch([&] {
      const testing::AllocationWindow window;
      for (int i = 0; i < n; ++i) {
        auto r = client->Call(request, absl::Seconds(1));
        if (r.ok() && (*r)->sum == 42) ++answered;
      }
      allocations = window.Count();
    }));
    runtime_.scheduler()->RunReady();
    EXPECT_EQ(answered, n);
    return allocations;
  }

  SimulatedClock clock_;
  Runtime runtime_;
  Node server_node_;
  Node client_node_;
};

TEST_F(ServiceAllocationTest, AnInProcessCallAllocatesThreeTimes) {
  {
    // The counter counts in this binary (a zero below means something).
    const testing::AllocationWindow probe;
    auto kept = std::make_unique<int>(1);
    probe_sink = kept.get();  // not elided
    ASSERT_EQ(probe.Count(), 1u);
  }
  auto service = server_node_.CreateService<AddRequest, AddResponse>(
      "/alloc/add", [](const std::shared_ptr<AddRequest>& req,
                       std::shared_ptr<AddResponse>& resp) {
        resp->sum = req->a + req->b;
      });
  ASSERT_NE(service, nullptr);
  auto client = client_node_.CreateClient<AddRequest, AddResponse>("/alloc/add");
  ASSERT_NE(client, nullptr);
  CallsFromRoutine(client.get(), kWarmUpCalls);
  const uint64_t allocations = CallsFromRoutine(client.get(), kCalls);
  EXPECT_EQ(allocations, 3u * kCalls)
      << static_cast<double>(allocations) / kCalls << " allocations per call";
  const ClientStats s = client->stats();
  EXPECT_EQ(s.responses, static_cast<uint64_t>(kWarmUpCalls + kCalls));
  EXPECT_EQ(s.timeouts, 0u);
  EXPECT_EQ(s.pending, 0u);
}

}  // namespace
}  // namespace cyber
