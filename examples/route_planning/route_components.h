// The planner-with-a-remote-service pattern (route_planning.dag in one
// process; planner.dag and routing.dag as two):
//
//   Planner       (timer, 100 ms)  calls /planning/route with a 50 ms
//                                  timeout, without blocking (AsyncCall),
//                                  and counts how each call ended
//   RoutingServer (timer, 10 ms)   serves /planning/route; a route takes
//                                  20 ms to compute, a hard one (every
//                                  fifth request) 80 ms, so every fifth
//                                  call times out and its route comes late
//
// The routing work is simulated time, not CPU: the server holds each
// request (a deferred service) and its 10 ms timer answers those whose
// compute time has passed. On simulated time, in one process or across
// processes in lockstep, the outcome of every call is the same in every
// run: a response at 20 ms (due 50 ms) or a timeout at 50 ms (the response,
// at 80 ms, counted late). On the real clock it depends on scheduling.
//
// Both components read the graph's clock (cyber::CurrentClock()).

#ifndef EXAMPLES_ROUTE_PLANNING_ROUTE_COMPONENTS_H_
#define EXAMPLES_ROUTE_PLANNING_ROUTE_COMPONENTS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>

#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/component/timer_component.h"
#include "cyber/service/client.h"
#include "cyber/service/service.h"
#include "cyber/time/instant.h"
#include "examples/route_planning/route_messages.pb.h"

namespace route_planning {

inline constexpr char kRouteService[] = "/planning/route";
inline constexpr absl::Duration kRouteTimeout = absl::Milliseconds(50);
inline constexpr absl::Duration kRouteCompute = absl::Milliseconds(20);
inline constexpr absl::Duration kHardRouteCompute = absl::Milliseconds(80);
inline constexpr uint64_t kHardEvery = 5;  // requests 5, 10, 15, ...

class Planner : public cyber::TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;

  // For the tests: how the calls ended.
  uint64_t sent() const { return sent_.load(); }
  uint64_t routed() const { return routed_.load(); }
  uint64_t timed_out() const { return timed_out_.load(); }
  uint64_t failed() const { return failed_.load(); }

 private:
  std::shared_ptr<cyber::Client<RouteRequest, RouteResponse>> client_;
  uint64_t seq_ = 0;  // Proc() only
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> routed_{0};
  std::atomic<uint64_t> timed_out_{0};
  std::atomic<uint64_t> failed_{0};
};

class RoutingServer : public cyber::TimerComponent {
 public:
  bool Init() override;
  bool Proc() override;

  // For the tests: routes answered.
  uint64_t answered() const { return answered_.load(); }

 private:
  struct Held {
    cyber::Instant due;
    uint64_t seq = 0;
    absl::Duration compute;
    cyber::ServiceResponder<RouteResponse> responder;
  };
  std::shared_ptr<cyber::Service<RouteRequest, RouteResponse>> service_;
  cyber::Mutex mu_;
  // In arrival order; every compute time is a multiple of the timer's
  // 10 ms, so the due ones are always at the front.
  std::deque<Held> held_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> answered_{0};
};

}  // namespace route_planning

#endif  // EXAMPLES_ROUTE_PLANNING_ROUTE_COMPONENTS_H_
