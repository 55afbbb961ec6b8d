// A planner calls /map/lookup once per lidar scan, at 10 Hz with a 150 ms
// timeout; the map server's lookup takes 50-250 ms (a routine sleep, a
// fixed pseudo-random sequence). Three servers, each with its own planner,
// in one graph on simulated time (the same events in every run):
//
//   cyber_style   Cyber RT's form: one request at a time, the response
//                 filled before the callback returns;
//   serial        deferred, one at a time, the lookup given up when the
//                 client's deadline (ServiceResponder::deadline) comes;
//   side_by_side  the same with ServiceOptions::concurrency = 4.
//
// The requests whose deadline passes while they wait are skipped by every
// server (the deadline travels with the request). What each planner got is
// printed (the figures of docs/services.md) and checked against the
// targets: side by side, every scan whose lookup takes less than 150 ms is
// answered in time; no server works on a request whose client has stopped
// waiting (no late responses at the deadline-aware servers).

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/component/component.h"
#include "cyber/component/component_registry.h"
#include "cyber/component/timer_component.h"
#include "cyber/service/client.h"
#include "cyber/service/service.h"
#include "cyber/testing/graph_test.h"
#include "cyber/time/current_clock.h"
#include "gtest/gtest.h"
#include "scheduler/croutine.h"

namespace cyber {
namespace {

struct LookupRequest {
  int scan = 0;
};
struct LookupResponse {
  int scan = 0;
};
using LookupService = Service<LookupRequest, LookupResponse>;
using LookupClient = Client<LookupRequest, LookupResponse>;

constexpr int kScans = 99;
constexpr absl::Duration kTimeout = absl::Milliseconds(150);

// How long the lookup for `scan` takes: 50-250 ms, spread evenly.
absl::Duration LookupTime(int scan) {
  return absl::Milliseconds(50 + (scan * 7919) % 201);
}

int ScansFasterThanTheTimeout() {
  int n = 0;
  for (int scan = 0; scan < kScans; ++scan) n += LookupTime(scan) < kTimeout ? 1 : 0;
  return n;
}

// --- servers --------------------------------------------------------------------

class CyberStyleMapServer : public Component<> {
 public:
  bool Init() override {
    service_ = node_->CreateService<LookupRequest, LookupResponse>(
        "/map/lookup/cyber_style",
        [](const std::shared_ptr<LookupRequest>& req, std::shared_ptr<LookupResponse>& resp) {
          scheduler::CRoutine::SleepFor(LookupTime(req->scan));
          resp->scan = req->scan;
        });
    return service_ != nullptr;
  }
  ServiceStats stats() const { return service_->stats(); }

 private:
  std::shared_ptr<LookupService> service_;
};
CYBER_REGISTER_COMPONENT(CyberStyleMapServer)

// Looks up in a routine of the service, giving up at the client's deadline.
class DeadlineAwareMapServer : public Component<> {
 public:
  DeadlineAwareMapServer(std::string service, int concurrency)
      : service_name_(std::move(service)), concurrency_(concurrency) {}
  bool Init() override {
    ServiceOptions options;
    options.concurrency = concurrency_;
    service_ = node_->CreateDeferredService<LookupRequest, LookupResponse>(
        service_name_,
        [this](const std::shared_ptr<const LookupRequest>& req,
               ServiceResponder<LookupResponse> responder) {
          const absl::Duration left = responder.deadline() - CurrentClock()->Now();
          const absl::Duration need = LookupTime(req->scan);
          if (need >= left) {
            // An answer at the deadline is too late: work until the
            // client stops waiting, then say so.
            scheduler::CRoutine::SleepFor(left);
            ++gave_up_;
            (void)responder.Fail(absl::DeadlineExceededError("the lookup ran out of time"));
            return;
          }
          scheduler::CRoutine::SleepFor(need);
          LookupResponse r;
          r.scan = req->scan;
          (void)responder.Send(r);
        },
        options);
    return service_ != nullptr;
  }
  ServiceStats stats() const { return service_->stats(); }
  int gave_up() const { return gave_up_; }

 private:
  const std::string service_name_;
  const int concurrency_;
  std::shared_ptr<LookupService> service_;
  int gave_up_ = 0;  // its callbacks run one lane at a time per routine
};

class SerialMapServer : public DeadlineAwareMapServer {
 public:
  SerialMapServer() : DeadlineAwareMapServer("/map/lookup/serial", 1) {}
};
CYBER_REGISTER_COMPONENT(SerialMapServer)

class SideBySideMapServer : public DeadlineAwareMapServer {
 public:
  SideBySideMapServer() : DeadlineAwareMapServer("/map/lookup/side_by_side", 4) {}
};
CYBER_REGISTER_COMPONENT(SideBySideMapServer)

// --- planners -------------------------------------------------------------------

class Planner : public TimerComponent {
 public:
  explicit Planner(std::string service) : service_name_(std::move(service)) {}
  bool Init() override {
    client_ = node_->CreateClient<LookupRequest, LookupResponse>(service_name_);
    return client_ != nullptr;
  }
  bool Proc() override {
    if (next_scan_ == kScans) return true;
    auto request = std::make_shared<LookupRequest>();
    request->scan = next_scan_++;
    client_->AsyncCall(request, kTimeout, [this](LookupClient::Result r) {
      if (r.ok()) {
        ++in_time_;
        answered_fast_ += LookupTime((*r)->scan) < kTimeout ? 1 : 0;
      }
    });
    return true;
  }
  int in_time() const { return in_time_; }
  int answered_fast() const { return answered_fast_; }
  int sent() const { return next_scan_; }
  ClientStats stats() const { return client_->stats(); }

 private:
  const std::string service_name_;
  std::shared_ptr<LookupClient> client_;
  int next_scan_ = 0;
  // Its callbacks run one at a time (a client's callbacks never overlap).
  int in_time_ = 0;
  int answered_fast_ = 0;
};

class CyberStylePlanner : public Planner {
 public:
  CyberStylePlanner() : Planner("/map/lookup/cyber_style") {}
};
CYBER_REGISTER_COMPONENT(CyberStylePlanner)

class SerialPlanner : public Planner {
 public:
  SerialPlanner() : Planner("/map/lookup/serial") {}
};
CYBER_REGISTER_COMPONENT(SerialPlanner)

class SideBySidePlanner : public Planner {
 public:
  SideBySidePlanner() : Planner("/map/lookup/side_by_side") {}
};
CYBER_REGISTER_COMPONENT(SideBySidePlanner)

// --- the run --------------------------------------------------------------------

void Print(const char* name, const Planner& planner, const ServiceStats& server) {
  const ClientStats c = planner.stats();
  std::printf(
      "%-13s in time %2d of %d | client: timeouts %2llu, late %2llu | server: responses %2llu, "
      "skipped past deadline %2llu, errors %2llu, p50 %s, p99 %s\n",
      name, planner.in_time(), planner.sent(), static_cast<unsigned long long>(c.timeouts),
      static_cast<unsigned long long>(c.late_responses),
      static_cast<unsigned long long>(server.responses),
      static_cast<unsigned long long>(server.skipped_past_deadline),
      static_cast<unsigned long long>(server.errors),
      absl::FormatDuration(server.latency_p50).c_str(),
      absl::FormatDuration(server.latency_p99).c_str());
}

TEST_F(GraphTest, ThePlannerGetsEveryLookupThatCanBeInTime) {
  ASSERT_TRUE(Launch().ok());
  graph().RunFor(absl::Seconds(11));  // 99 scans, and the last answers
  auto* cyber_style = component<CyberStylePlanner>("planner_cyber_style");
  auto* serial = component<SerialPlanner>("planner_serial");
  auto* side_by_side = component<SideBySidePlanner>("planner_side_by_side");
  auto* cyber_server = component<CyberStyleMapServer>("map_cyber_style");
  auto* serial_server = component<SerialMapServer>("map_serial");
  auto* wide_server = component<SideBySideMapServer>("map_side_by_side");
  ASSERT_TRUE(cyber_style && serial && side_by_side && cyber_server && serial_server &&
              wide_server);
  const int fast = ScansFasterThanTheTimeout();
  std::printf("scans: %d, lookups faster than %s: %d\n", kScans,
              absl::FormatDuration(kTimeout).c_str(), fast);
  Print("cyber_style", *cyber_style, cyber_server->stats());
  Print("serial", *serial, serial_server->stats());
  Print("side_by_side", *side_by_side, wide_server->stats());

  for (const Planner* p : {static_cast<const Planner*>(cyber_style),
                           static_cast<const Planner*>(serial),
                           static_cast<const Planner*>(side_by_side)}) {
    EXPECT_EQ(p->sent(), kScans);
    const ClientStats c = p->stats();
    EXPECT_EQ(c.calls, static_cast<uint64_t>(kScans));
    EXPECT_EQ(c.pending, 0u);
    EXPECT_EQ(c.responses, static_cast<uint64_t>(p->in_time()));
    EXPECT_EQ(c.responses + c.timeouts, c.calls);  // nothing else went wrong
  }
  // Side by side: every lookup that can be in time is.
  EXPECT_EQ(side_by_side->in_time(), fast);
  EXPECT_EQ(side_by_side->answered_fast(), fast);
  EXPECT_GE(side_by_side->in_time(), 48);
  // The deadline-aware servers never work for a client that stopped
  // waiting: no response comes late, every doomed lookup ends at its
  // deadline.
  for (const DeadlineAwareMapServer* s :
       {static_cast<const DeadlineAwareMapServer*>(serial_server),
        static_cast<const DeadlineAwareMapServer*>(wide_server)}) {
    const ServiceStats st = s->stats();
    EXPECT_EQ(st.requests, static_cast<uint64_t>(kScans));
    EXPECT_EQ(st.errors, static_cast<uint64_t>(s->gave_up()));
    EXPECT_EQ(st.responses + st.errors + st.skipped_past_deadline, st.requests);
  }
  EXPECT_EQ(serial->stats().late_responses, 0u);
  EXPECT_EQ(side_by_side->stats().late_responses, 0u);
  EXPECT_EQ(wide_server->stats().skipped_past_deadline, 0u);  // nobody waits 4 deep
  // Cyber RT's form, too, skips the requests nobody waits for.
  EXPECT_GT(cyber_server->stats().skipped_past_deadline, 0u);
  // The serial deadline-aware server beats the Cyber RT form.
  EXPECT_GT(serial->in_time(), cyber_style->in_time());
}

}  // namespace
}  // namespace cyber
