// Launches timeout_watchdog.dag for a bounded time on the real clock and
// checks the oneshot-timer contracts: every lost request timed out exactly
// once, no answered request timed out, thousands of timeouts were armed and
// cancelled per second, and the watchdog fired once per sensor outage and
// re-armed when the heartbeats came back.
//
// Real time, 3.5 s. The counts cannot be disturbed by a slow machine: a
// request is answered within microseconds to milliseconds against a 200 ms
// timeout, an outage lasts 300 ms against a 50 ms watchdog, and the checks
// are about which timers fired, not when.

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
  std::printf("sent %llu answered %llu timed out %llu wrong %llu; watchdog "
              "fired %llu rearmed %llu outages %llu\n",
              (unsigned long long)RequestClient::sent.load(),
              (unsigned long long)RequestClient::answered.load(),
              (unsigned long long)RequestClient::timed_out.load(),
              (unsigned long long)RequestClient::wrong.load(),
              (unsigned long long)Watchdog::fired.load(),
              (unsigned long long)Watchdog::rearmed.load(),
              (unsigned long long)HeartbeatSource::outages.load());

  const uint64_t sent = RequestClient::sent.load();
  EXPECT_GT(sent, 5000u) << "thousands of timeouts armed per second";
  EXPECT_EQ(RequestClient::wrong.load(), 0u);
  // Every request is answered (and its timeout cancelled), timed out, or was
  // still pending at shutdown (at most the last 200 ms worth).
  const uint64_t resolved = RequestClient::answered.load() + RequestClient::timed_out.load();
  EXPECT_LE(resolved, sent);
  EXPECT_LE(sent - resolved, 2u * 4 * 100 + 8) << "too many unresolved requests";
  // The lost ones (each 10th) timed out; allow those lost in the last 200 ms.
  const uint64_t lost = sent / kLostEvery;
  EXPECT_LE(RequestClient::timed_out.load(), lost);
  EXPECT_GE(RequestClient::timed_out.load() + 100, lost);
  // Outages start at 0, 1, 2, 3 s: the watchdog fired once for each that had
  // lasted 50 ms by the end, and re-armed after each that ended.
  const uint64_t outages = HeartbeatSource::outages.load();
  EXPECT_GE(outages, 3u);
  EXPECT_GE(Watchdog::fired.load() + 1, outages);
  EXPECT_LE(Watchdog::fired.load(), outages);
  EXPECT_GE(Watchdog::rearmed.load() + 1, Watchdog::fired.load());
  for (const auto& s : stats) EXPECT_EQ(s.early_fires, 0u) << s.name;
}

}  // namespace
}  // namespace timeout_watchdog
