// ServiceTable: a row per server and client, the counts that say whether a
// service kept up, `-` where a column does not apply.

#include "cyber/transport/service_report.h"

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace cyber {
namespace {

using transport_internal::ServiceEndpointReport;

TEST(ServiceTableTest, NoServicesNoTable) { EXPECT_EQ(ServiceTable({}), ""); }

TEST(ServiceTableTest, AServerAndAClientRowWithTheirOwnCounts) {
  ServiceEndpointReport server;
  server.service = "/map/lookup";
  server.node = "map_server";
  server.server = true;
  server.server_stats.requests = 99;
  server.server_stats.responses = 50;
  server.server_stats.errors = 40;
  server.server_stats.callback_errors = 1;
  server.server_stats.abandoned = 2;
  server.server_stats.skipped_past_deadline = 3;
  server.server_stats.refused_full = 2;
  server.server_stats.dropped_oldest = 1;
  server.server_stats.latency_p50 = absl::Microseconds(100660);
  server.server_stats.latency_p99 = absl::Milliseconds(149);
  ServiceEndpointReport client;
  client.service = "/map/lookup";
  client.node = "planner";
  client.client_stats.calls = 99;
  client.client_stats.responses = 50;
  client.client_stats.timeouts = 46;
  client.client_stats.refused = 3;
  client.client_stats.late_responses = 7;
  const std::string table = ServiceTable({server, client});
  const std::vector<std::string> lines = absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << table;
  const std::vector<std::string> s = absl::StrSplit(lines[1], ' ', absl::SkipEmpty());
  EXPECT_EQ(s, (std::vector<std::string>{"/map/lookup", "map_server", "server", "99", "50", "-",
                                         "3", "3", "43", "-", "100.66", "149.00"}))
      << table;
  const std::vector<std::string> c = absl::StrSplit(lines[2], ' ', absl::SkipEmpty());
  EXPECT_EQ(c, (std::vector<std::string>{"/map/lookup", "planner", "client", "99", "50", "46",
                                         "-", "3", "0", "7", "0.00", "0.00"}))
      << table;
}

}  // namespace
}  // namespace cyber
