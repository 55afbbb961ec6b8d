// Launches timeout_watchdog.dag for a bounded time on the real clock and
// checks the oneshot-timer contracts: every lost request timed out exactly
// once, no answered request timed out, thousands of timeouts were armed and
// cancelled per second, and the watchdog fired once per sensor outage and
// re-armed when the heartbeats came back.
//
// Real time, 3.5 s. A slow machine cannot break the checks: an answer that
// arrives after its 200 ms timeout (possible under sanitizers on a loaded
// machine) is a *late answer*, which the timeout was right to report; the
// contract checked is that no timeout ever runs after its Stop() returned or
// runs twice, and that the lost requests all time out. An outage lasts
// 300 ms against a 50 ms watchdog; a stall of the heartbeats as long as the
// watchdog's timeout (a loaded machine) is counted, and its alarm allowed.

#include <vector>

#include "cyber/init/init.h"
#include "cyber/mainboard/launcher.h"
#include "cyber/time/steady_clock.h"
#include "examples/timeout_watchdog/watchdog_components.h"
#include "gtest/gtest.h"

namespace timeout_watchdog {
namespace {

TEST(TimeoutWatchdogTest, TimeoutsFireOnlyForLostRequestsAndTheWatchdogForOutages) {
  ASSERT_TRUE(cyber::Init("timeout_watchdog_test"));
  cyber::Launcher launcher;
  ASSERT_TRUE(launcher.Load({"examples/timeout_watchdog/timeout_watchdog.dag"}).ok());
  ASSERT_TRUE(launcher.Start().ok());
  cyber::SteadyClock::Get()->SleepFor(absl::Milliseconds(3500));
  const std::vector<cyber::ComponentStats> stats = launcher.Stats();
  launcher.Stop();  // outstanding timeouts are cancelled with the client
  cyber::Shutdown();
  std::printf("%s", cyber::Launcher::SummaryTable(stats).c_str());
  std::printf("sent %llu answered %llu lost timed out %llu late answers %llu "
              "raced %llu violations %llu; watchdog fired %llu rearmed %llu "
              "outages %llu stalls %llu\n",
              (unsigned long long)RequestClient::sent.load(),
              (unsigned long long)RequestClient::answered.load(),
              (unsigned long long)RequestClient::lost_timed_out.load(),
              (unsigned long long)RequestClient::late_answers.load(),
              (unsigned long long)RequestClient::raced.load(),
              (unsigned long long)RequestClient::violations.load(),
              (unsigned long long)Watchdog::fired.load(),
              (unsigned long long)Watchdog::rearmed.load(),
              (unsigned long long)HeartbeatSource::outages.load(),
              (unsigned long long)Watchdog::stalls.load());

  const uint64_t sent = RequestClient::sent.load();
  EXPECT_GT(sent, 5000u) << "thousands of timeouts armed per second";
  // The contract: no timeout ran after its Stop() returned, none twice.
  EXPECT_EQ(RequestClient::violations.load(), 0u);
  EXPECT_GT(RequestClient::answered.load(), sent / 2);
  // Every lost request (each 10th) timed out once, except those lost in the
  // last 200 ms before the stop (at most 2,000/s * 0.2 s / 10 = 40; the bound
  // leaves room for a backlog on a loaded machine).
  const uint64_t lost = sent / kLostEvery;
  EXPECT_LE(RequestClient::lost_timed_out.load(), lost);
  EXPECT_GE(RequestClient::lost_timed_out.load() + 150, lost);
  // Outages start at 0, 1, 2, 3 s: the watchdog fired once for each that had
  // lasted 50 ms by the end, and re-armed after each that ended; besides,
  // once for each stall of the heartbeats a loaded machine caused (two
  // consecutive beats received 50 ms or more apart), where it was right to.
  const uint64_t outages = HeartbeatSource::outages.load();
  EXPECT_GE(outages, 3u);
  EXPECT_GE(Watchdog::fired.load() + 1, outages);
  EXPECT_LE(Watchdog::fired.load(), outages + Watchdog::stalls.load());
  EXPECT_GE(Watchdog::rearmed.load() + 1, Watchdog::fired.load());
  for (const auto& s : stats) EXPECT_EQ(s.early_fires, 0u) << s.name;
}

}  // namespace
}  // namespace timeout_watchdog
