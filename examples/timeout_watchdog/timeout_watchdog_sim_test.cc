// timeout_watchdog.dag on simulated time (a cyber_graph_test): exact counts
// of requests, answers and timeouts, and the watchdog's alarms at the exact
// instants its 50 ms timeout predicts, including when the heartbeat source
// is stopped for good (fault injection at a chosen instant).

#include <vector>

#include "cyber/testing/graph_test.h"
#include "examples/timeout_watchdog/watchdog_components.h"
#include "gtest/gtest.h"

namespace timeout_watchdog {
namespace {

using cyber::GraphTest;

std::vector<absl::Duration> Instants(
    const std::shared_ptr<cyber::ChannelTap<WatchdogAlarm>>& tap) {
  std::vector<absl::Duration> out;
  for (const auto& r : tap->received()) out.push_back(r.at);
  return out;
}

TEST_F(GraphTest, TimeoutsAndAlarmsHappenExactlyWhenDue) {
  // Process-wide counters: this run's only.
  for (auto* c : {&RequestClient::sent, &RequestClient::answered,
                  &RequestClient::lost_timed_out, &RequestClient::late_answers,
                  &RequestClient::raced, &RequestClient::violations}) {
    *c = 0;
  }
  ASSERT_TRUE(Launch().ok());
  auto alarms = graph().Tap<WatchdogAlarm>("/watchdog/timeout");
  ASSERT_TRUE(alarms.ok()) << alarms.status();
  graph().RunFor(absl::Milliseconds(3500));

  // The client runs every 2 ms (1,750 calls) with 4 requests each.
  EXPECT_EQ(RequestClient::sent.load(), 7000u);
  // Every answered request's timeout was cancelled before it fired; each
  // 10th request is lost, and times out exactly 200 ms after it was sent:
  // those sent by 3.3 s (ids up to 6,600) have timed out by 3.5 s.
  EXPECT_EQ(RequestClient::answered.load(), 6300u);
  EXPECT_EQ(RequestClient::lost_timed_out.load(), 660u);
  EXPECT_EQ(RequestClient::late_answers.load(), 0u);
  EXPECT_EQ(RequestClient::raced.load(), 0u);
  EXPECT_EQ(RequestClient::violations.load(), 0u);
  // Heartbeats every 10 ms, quiet for the first 300 ms of each second: the
  // watchdog (armed at start) fires 50 ms after the last heartbeat before
  // each outage, and once at 50 ms, before the first heartbeat.
  EXPECT_EQ(Instants(*alarms),
            (std::vector<absl::Duration>{absl::Milliseconds(50), absl::Milliseconds(1050),
                                         absl::Milliseconds(2050),
                                         absl::Milliseconds(3050)}));
  EXPECT_EQ((*alarms)->received()[1].message->last_seq, 100u);
}

TEST_F(GraphTest, TheWatchdogFiresFiftyMsAfterTheSensorStops) {
  ASSERT_TRUE(Launch().ok());
  auto alarms = graph().Tap<WatchdogAlarm>("/watchdog/timeout");
  ASSERT_TRUE(alarms.ok()) << alarms.status();
  // The heartbeat source dies at 2.505 s; its last heartbeat was at 2.5 s.
  absl::Status stopped = absl::UnknownError("not run");
  ASSERT_TRUE(graph()
                  .At(graph().Now() + absl::Milliseconds(2505),
                      [&] { stopped = graph().launcher().StopComponent("heartbeat"); })
                  .ok());
  graph().RunFor(absl::Seconds(5));
  EXPECT_TRUE(stopped.ok()) << stopped;
  EXPECT_EQ(graph().StatsOf("heartbeat")->procs, 250u);
  // One alarm for the outage at 2 s, one 50 ms after the last heartbeat,
  // and none after (the oneshot is re-armed only by a heartbeat).
  EXPECT_EQ(Instants(*alarms),
            (std::vector<absl::Duration>{absl::Milliseconds(50), absl::Milliseconds(1050),
                                         absl::Milliseconds(2050),
                                         absl::Milliseconds(2550)}));
}

}  // namespace
}  // namespace timeout_watchdog
