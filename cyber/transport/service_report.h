// What a process's services did, for mainboard's summary: a row per server
// and per client (ServiceRegistry::Report), with the counts that say
// whether the service kept up — answered, timed out, skipped past their
// deadline, refused by a full queue, failed — and its latency.
//
// Why here and not in the launcher: the data is the registry's; the
// launcher only prints it.
//
// Threads: a pure function of its argument.

#ifndef CYBER_TRANSPORT_SERVICE_REPORT_H_
#define CYBER_TRANSPORT_SERVICE_REPORT_H_

#include <string>
#include <vector>

#include "cyber/transport/service_registry.h"

namespace cyber {

// A table with a header and a row per server and client, e.g.
//   service       node        role    calls  ok  timeouts  skipped  refused  errors  late  p50 ms  p99 ms
//   /map/lookup   map_server  server     99  50         -        0        0      49     -  100.66  149.00
//   /map/lookup   planner     client     99  50        49        -        0       0     0  100.66  149.00
// A server's calls are its requests, ok its responses, errors what its
// callbacks failed (threw, null, Fail, abandoned), refused its full-queue
// refusals, skipped the requests past their deadline; a client's errors
// are every other ending (server gone, no server, cancelled, failed).
// `-` where a column does not apply. Empty string when there are no rows.
std::string ServiceTable(const std::vector<transport_internal::ServiceEndpointReport>& rows);

}  // namespace cyber

#endif  // CYBER_TRANSPORT_SERVICE_REPORT_H_
