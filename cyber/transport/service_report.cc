#include "cyber/transport/service_report.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace cyber {

std::string ServiceTable(const std::vector<transport_internal::ServiceEndpointReport>& rows) {
  if (rows.empty()) return "";
  constexpr char kRow[] = "%-24s %-20s %-6s %8s %8s %8s %8s %8s %8s %6s %9s %9s\n";
  std::string out = absl::StrFormat(kRow, "service", "node", "role", "calls", "ok", "timeouts",
                                    "skipped", "refused", "errors", "late", "p50 ms", "p99 ms");
  auto n = [](uint64_t v) { return absl::StrCat(v); };
  auto ms = [](absl::Duration d) { return absl::StrFormat("%.2f", absl::ToDoubleMilliseconds(d)); };
  for (const transport_internal::ServiceEndpointReport& r : rows) {
    if (r.server) {
      const ServiceStats& s = r.server_stats;
      absl::StrAppend(
          &out, absl::StrFormat(kRow, r.service, r.node, "server", n(s.requests), n(s.responses),
                                "-", n(s.skipped_past_deadline),
                                n(s.refused_full + s.dropped_oldest),
                                n(s.callback_errors + s.errors + s.abandoned), "-",
                                ms(s.latency_p50), ms(s.latency_p99)));
    } else {
      const ClientStats& c = r.client_stats;
      absl::StrAppend(
          &out, absl::StrFormat(kRow, r.service, r.node, "client", n(c.calls), n(c.responses),
                                n(c.timeouts), "-", n(c.refused),
                                n(c.server_gone + c.no_server + c.cancelled + c.failed),
                                n(c.late_responses), ms(c.latency_p50), ms(c.latency_p99)));
    }
  }
  return out;
}

}  // namespace cyber
