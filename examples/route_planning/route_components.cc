#include "examples/route_planning/route_components.h"

#include <utility>
#include <vector>

#include "cyber/common/log.h"
#include "cyber/component/component_registry.h"
#include "cyber/time/current_clock.h"

namespace route_planning {

namespace {

// The graph's clock: the steady clock, or the simulated one of a graph on
// simulated time (cyber/time/current_clock.h).
cyber::Instant Now() { return cyber::CurrentClock()->Now(); }

int64_t Ns(absl::Duration d) { return absl::ToInt64Nanoseconds(d); }

}  // namespace

// --- Planner -----------------------------------------------------------------

bool Planner::Init() {
  auto client = node()->TryCreateClient<RouteRequest, RouteResponse>(kRouteService);
  if (!client.ok()) {
    AERROR << client.status().message();
    return false;
  }
  client_ = *std::move(client);
  return true;
}

bool Planner::Proc() {
  auto request = std::make_shared<RouteRequest>();
  request->set_seq(++seq_);
  request->set_sent_ns(Ns(Now().SinceEpoch()));
  request->set_goal_x(static_cast<double>(seq_));
  request->set_goal_y(-static_cast<double>(seq_));
  ++sent_;
  const uint64_t seq = seq_;
  client_->AsyncCall(
      std::move(request), kRouteTimeout,
      [this, seq](absl::StatusOr<std::shared_ptr<const RouteResponse>> result) {
        if (result.ok()) {
          ++routed_;
          return;
        }
        if (absl::IsDeadlineExceeded(result.status())) {
          // A robot module would replan or stop here; the example counts.
          if (timed_out_.fetch_add(1) == 0) {
            AWARN << "planner \"" << name() << "\": route " << seq << " not computed within "
                  << absl::FormatDuration(kRouteTimeout) << " (logged once)";
          }
          return;
        }
        ++failed_;
        AERROR << "planner \"" << name() << "\": route " << seq << ": " << result.status();
      });
  return true;
}

// --- RoutingServer -----------------------------------------------------------

bool RoutingServer::Init() {
  auto service = node()->TryCreateDeferredService<RouteRequest, RouteResponse>(
      kRouteService, [this](const std::shared_ptr<const RouteRequest>& request,
                            cyber::ServiceResponder<RouteResponse> responder) {
        const absl::Duration compute =
            request->seq() % kHardEvery == 0 ? kHardRouteCompute : kRouteCompute;
        cyber::MutexLock lock(&mu_);
        held_.push_back(Held{Now() + compute, request->seq(), compute, std::move(responder)});
      });
  if (!service.ok()) {
    AERROR << service.status().message();
    return false;
  }
  service_ = *std::move(service);
  return true;
}

bool RoutingServer::Proc() {
  const cyber::Instant now = Now();
  std::vector<Held> due;
  {
    cyber::MutexLock lock(&mu_);
    while (!held_.empty() && held_.front().due <= now) {
      due.push_back(std::move(held_.front()));
      held_.pop_front();
    }
  }
  // Answered outside the lock: Send() hands the response to the transport.
  for (Held& h : due) {
    auto route = std::make_shared<RouteResponse>();
    route->set_seq(h.seq);
    route->set_waypoints(static_cast<uint32_t>(10 + h.seq % 7));
    route->set_compute_ns(Ns(h.compute));
    if (absl::Status s = h.responder.Send(std::move(route)); !s.ok()) {
      AWARN << "routing \"" << name() << "\": route " << h.seq << ": " << s.message();
      continue;
    }
    ++answered_;
  }
  return true;
}

CYBER_REGISTER_COMPONENT(Planner)
CYBER_REGISTER_COMPONENT(RoutingServer)

}  // namespace route_planning
