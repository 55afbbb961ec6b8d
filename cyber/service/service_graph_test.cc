// Services in a graph on simulated time (cyber_graph_test).
//
// A component's Init() runs on the thread that moves the simulated clock
// (SimulatedGraph::Launch). A blocking Call() there could never end: the
// server's routine and the timeout both need that thread. It is refused
// at once with an error that says what to do instead (as a blocking sleep
// and WaitForService are), never a hang; from Proc() (a routine) the same
// client works.
//
// A hang here would not be caught by the graph's own watch (Launch() is
// not watched: an Init() may take long), so the test arms a watchdog of
// its own around Launch() (test::HangWatchdog): if it has not returned
// within 30 s of wall time, the test binary prints why and exits. The
// limit only bounds a failing test; a passing one returns at once.

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "cyber/common/test_waits.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/service/client.h"
#include "cyber/service/service.h"
#include "cyber/testing/graph_test.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

struct RouteRequest {
  int from = 0;
};
struct RouteResponse {
  int hops = 0;
};

constexpr char kRoute[] = "/graph/route";

// Serves kRoute: one hop per unit of distance.
class RouteServer : public TimerComponent {
 public:
  bool Init() override {
    service_ = node_->CreateService<RouteRequest, RouteResponse>(
        kRoute, [](const std::shared_ptr<RouteRequest>& req,
                   std::shared_ptr<RouteResponse>& resp) { resp->hops = req->from; });
    return service_ != nullptr;
  }
  bool Proc() override { return true; }

 private:
  std::shared_ptr<Service<RouteRequest, RouteResponse>> service_;
};
CYBER_REGISTER_COMPONENT(RouteServer)

// Calls kRoute from its Init() (refused) and from every Proc() (answered).
class CallsInInit : public TimerComponent {
 public:
  bool Init() override {
    client_ = node_->CreateClient<RouteRequest, RouteResponse>(kRoute);
    if (client_ == nullptr) return false;
    RouteRequest r;
    r.from = 3;
    init_call_ = client_->Call(r, absl::Milliseconds(200)).status();
    return true;  // the component goes on without its Init() answer
  }
  bool Proc() override {
    RouteRequest r;
    r.from = 5;
    auto answer = client_->Call(r, absl::Milliseconds(200));
    if (answer.ok() && (*answer)->hops == 5) ++answered_;
    return answer.ok();
  }
  const absl::Status& init_call() const { return init_call_; }
  int answered() const { return answered_; }

 private:
  std::shared_ptr<Client<RouteRequest, RouteResponse>> client_;
  absl::Status init_call_ = absl::UnknownError("Init() did not call");
  int answered_ = 0;
};
CYBER_REGISTER_COMPONENT(CallsInInit)

TEST_F(GraphTest, ABlockingCallInInitIsRefusedWithAClearErrorInsteadOfHanging) {
  absl::Status launched;
  {
    const test::HangWatchdog watchdog("Launch() of a graph whose Init() calls a service");
    launched = Launch();
  }
  ASSERT_TRUE(launched.ok()) << launched;
  CallsInInit* planner = component<CallsInInit>("planner");
  ASSERT_NE(planner, nullptr);
  const absl::Status& refused = planner->init_call();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  // Names the caller, the service, why, and what to do instead.
  EXPECT_TRUE(absl::StrContains(refused.message(), "node \"planner\"")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "service \"/graph/route\"")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "moves the simulated clock")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "AsyncCall")) << refused;
  EXPECT_EQ(graph().Elapsed(), absl::ZeroDuration());  // no time passed for it
  // From Proc(), a routine, the same client is answered.
  graph().RunFor(absl::Milliseconds(100));
  EXPECT_EQ(planner->answered(), 10);
  EXPECT_EQ(graph().StatsOf("planner")->procs, 10u);
}

}  // namespace
}  // namespace cyber
