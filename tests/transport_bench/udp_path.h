// The benchmark's "udp" path: one datagram per message over a bare UDP
// socket on 127.0.0.1 — the floor under any transport that crosses the
// kernel, with no reliability (a datagram that does not fit the receive
// buffer is lost, and counted as lost).
//
// The sink binds an ephemeral port (its address() is "port=N") and reads on
// a thread of its own (blocking recv, woken every 50 ms to notice the end);
// the source connect()s and send()s. Socket buffers are the kernel's
// defaults (net.core.rmem_default), as Fast-DDS leaves them; payloads are
// capped at kMaxUdpPayload.
//
// Threads: see bench_path.h.

#ifndef TESTS_TRANSPORT_BENCH_UDP_PATH_H_
#define TESTS_TRANSPORT_BENCH_UDP_PATH_H_

#include <memory>

#include "absl/status/statusor.h"
#include "tests/transport_bench/bench_path.h"

namespace cyber {
namespace transport_bench {

absl::StatusOr<std::unique_ptr<MessageSink>> StartUdpSink(const PathConfig& config,
                                                          ReceiveLog* log);
absl::StatusOr<std::unique_ptr<MessageSource>> StartUdpSource(const PathConfig& config);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_UDP_PATH_H_
