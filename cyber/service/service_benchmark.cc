// The in-process service round trip: what one Client::Call costs, from the
// request to the caller holding the response, with a Service and a Client
// of one Runtime that has real processor threads (and its tick thread, on
// the steady clock: every call arms and cancels a real timeout).
//
//   bazel run --config=opt //cyber/service:service_benchmark
//
// Two callers, because they wait differently (client.h, "Where callers
// wait"):
//   BM_Call_FromRoutine  a routine calls in a loop on a one-processor
//                        runtime: the caller parks, the server's routine
//                        runs on the same processor and wakes it; no
//                        thread sleeps, so the figure is the transport's
//                        own work (request, timeout, queue, response);
//   BM_Call_FromThread   the benchmark's thread calls and blocks; the
//                        server runs on a processor thread: two thread
//                        wake-ups per call, which dominate.
// Counters: calls_per_s, and allocs_per_call, every operator new of the
// process (cyber/testing/allocation_counter.h) in the measured calls
// divided by their number: the client, the service, the scheduler and the
// response the server's callback fills (one make_shared<Resp> per call,
// which Cyber RT's callback signature makes). The request is made once and
// passed as std::shared_ptr<const Req> (Call(const Req&) copies it into
// one more allocation per call).

#include <cstdint>
#include <future>
#include <memory>

#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "cyber/runtime/runtime.h"
#include "cyber/testing/allocation_counter.h"
#include "cyber/service/client.h"
#include "cyber/node/node.h"
#include "cyber/service/service.h"
#include "scheduler/config/scheduler_config.h"

namespace cyber {
namespace {

struct AddRequest {
  int a = 0;
  int b = 0;
};
struct AddResponse {
  int sum = 0;
};

using AddClient = Client<AddRequest, AddResponse>;
using AddService = Service<AddRequest, AddResponse>;

// Long enough never to fire: each call arms and cancels it.
constexpr absl::Duration kTimeout = absl::Seconds(5);
// Calls before the measurement: queues, pools and maps grow to their size.
constexpr int kWarmUpCalls = 2000;
// Calls per routine in BM_Call_FromRoutine (one Async each).
constexpr int kCallsPerBatch = 1000;

// A runtime with a server and a client of "/bench/add".
class Bench {
 public:
  explicit Bench(int processors)
      : runtime_([processors] {
          Runtime::Options o;
          o.name = "svc_bench";
          o.config = scheduler::DefaultSchedulerConfig(processors);
          return o;
        }()),
        server_node_("router", runtime_.scheduler(), runtime_.bus()),
        client_node_("planner", runtime_.scheduler(), runtime_.bus()),
        service_(server_node_.CreateService<AddRequest, AddResponse>(
            "/bench/add",
            [](const std::shared_ptr<AddRequest>& req,
               std::shared_ptr<AddResponse>& resp) {
              resp->sum = req->a + req->b;
            })),
        client_(client_node_.CreateClient<AddRequest, AddResponse>("/bench/add")),
        request_(std::make_shared<const AddRequest>(AddRequest{20, 22})) {}

  ~Bench() {
    client_node_.Shutdown();
    server_node_.Shutdown();
    runtime_.Shutdown();
  }

  // `n` calls on this thread (a routine or not); false if one failed.
  bool Calls(int n) {
    for (int i = 0; i < n; ++i) {
      AddClient::Result r = client_->Call(request_, kTimeout);
      if (!r.ok() || (*r)->sum != 42) return false;
    }
    return true;
  }

  // `n` calls in one routine; the allocations they made (only the calls:
  // the routine's own dispatch is outside the window).
  bool CallsInRoutine(int n, uint64_t* allocations) {
    std::future<bool> done = runtime_.scheduler()->Async([this, n, allocations] {
      const testing::AllocationWindow window;
      const bool ok = Calls(n);
      *allocations = window.Count();
      return ok;
    });
    return done.get();
  }

  bool ready() const { return service_ != nullptr && client_ != nullptr; }

 private:
  Runtime runtime_;
  Node server_node_;
  Node client_node_;
  std::shared_ptr<AddService> service_;
  std::shared_ptr<AddClient> client_;
  const std::shared_ptr<const AddRequest> request_;
};

void Report(benchmark::State& state, int64_t calls, uint64_t allocations) {
  state.SetItemsProcessed(calls);
  state.counters["calls_per_s"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
  state.counters["allocs_per_call"] =
      static_cast<double>(allocations) / static_cast<double>(calls);
}

void BM_Call_FromRoutine(benchmark::State& state) {
  Bench bench(/*processors=*/1);
  uint64_t allocations = 0;
  if (!bench.ready() || !bench.CallsInRoutine(kWarmUpCalls, &allocations)) {
    state.SkipWithError("warm-up calls failed");
    return;
  }
  uint64_t total_allocations = 0;
  int64_t calls = 0;
  for (auto _ : state) {
    if (!bench.CallsInRoutine(kCallsPerBatch, &allocations)) {
      state.SkipWithError("a call failed");
      return;
    }
    total_allocations += allocations;
    calls += kCallsPerBatch;
  }
  Report(state, calls, total_allocations);
}
BENCHMARK(BM_Call_FromRoutine)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Call_FromThread(benchmark::State& state) {
  Bench bench(/*processors=*/1);
  if (!bench.ready() || !bench.Calls(kWarmUpCalls)) {
    state.SkipWithError("warm-up calls failed");
    return;
  }
  int64_t calls = 0;
  const testing::AllocationWindow window;
  for (auto _ : state) {
    if (!bench.Calls(1)) {
      state.SkipWithError("a call failed");
      return;
    }
    ++calls;
  }
  Report(state, calls, window.Count());
}
BENCHMARK(BM_Call_FromThread)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace cyber

BENCHMARK_MAIN();
