// What a service's server and its clients count (Service::stats(),
// Client::stats(), mainboard's service table): defined beside the registry
// so that the process's registry can report every server and client it
// knows without knowing their types (ServiceRegistry::Report).
//
// Threads: plain data.

#ifndef CYBER_TRANSPORT_SERVICE_STATS_H_
#define CYBER_TRANSPORT_SERVICE_STATS_H_

#include <cstddef>
#include <cstdint>

#include "absl/time/time.h"

namespace cyber {

struct ServiceStats {
  uint64_t requests = 0;         // received, from this process and others
  uint64_t remote_requests = 0;  // of those, from other processes
  // How each request ended (or where it is now):
  uint64_t responses = 0;        // answered with a response
  uint64_t callback_errors = 0;  // the callback threw or left the response null
  uint64_t errors = 0;           // answered with the callback's error (Fail)
  uint64_t abandoned = 0;        // a responder dropped unanswered (INTERNAL)
  uint64_t skipped_past_deadline = 0;  // not served: its client stopped waiting
  uint64_t refused_full = 0;     // refused: the queue was full (the newest)
  uint64_t dropped_oldest = 0;   // refused: the queue was full (the oldest)
  uint64_t dropped_shutdown = 0;   // queued or unanswered at Shutdown
  size_t pending = 0;            // queued now
  size_t in_progress = 0;        // being served, or deferred and unanswered
  // Once idle (in_progress 0):
  //   requests == responses + callback_errors + errors + abandoned +
  //               skipped_past_deadline + refused_full + dropped_oldest +
  //               dropped_shutdown + pending.
  // Besides:
  uint64_t send_failures = 0;    // answers the transport did not send
  uint64_t double_answers = 0;   // Send/Fail on a responder already answered
  uint64_t dispatch_refusals = 0;  // routines the scheduler refused
  uint64_t ignored = 0;  // samples on the request channel that are no requests
  // From arrival to answer, of the requests answered with a response, on
  // the service's runtime clock (bucket upper bounds; zero: none yet).
  absl::Duration latency_p50;
  absl::Duration latency_p99;
};

struct ClientStats {
  uint64_t calls = 0;          // calls made (every form)
  uint64_t requests_sent = 0;  // handed to a server, here or in another process
  uint64_t responses = 0;      // calls ended by their response
  uint64_t timeouts = 0;       // ended DEADLINE_EXCEEDED
  uint64_t server_gone = 0;    // ended UNAVAILABLE: the server went away
  uint64_t no_server = 0;      // refused UNAVAILABLE at once: no server
  uint64_t refused = 0;        // RESOURCE_EXHAUSTED: the server's queue was full
  uint64_t cancelled = 0;      // ended CANCELLED (shutdown)
  uint64_t failed = 0;         // any other error (see the header comment)
  uint64_t late_responses = 0;  // responses after their call ended: dropped
  uint64_t callbacks_dropped = 0;    // AsyncCall callbacks never run
  uint64_t callback_exceptions = 0;  // AsyncCall callbacks that threw
  size_t pending = 0;                // calls in flight now
  // calls == responses + timeouts + server_gone + no_server + refused +
  //          cancelled + failed + pending.
  // From sending to the response, of the calls ended by their response, on
  // the node's runtime clock (bucket upper bounds; zero: none yet).
  absl::Duration latency_p50;
  absl::Duration latency_p99;
};

}  // namespace cyber

#endif  // CYBER_TRANSPORT_SERVICE_STATS_H_
