// The two child roles of the benchmark and the soak, and the line protocol
// each speaks with its orchestrator (stdin: commands; stdout: reports; see
// line_channel.h). Every line a child prints starts with a word the
// orchestrator waits for; "error <text>" ends the role.
//
// sink (receives into a ReceiveLog):
//   out  ready [port=N]          the path's receiving end exists
//   out  warm first_arrival_ns=T first_seq=S
//                                `warm_up_messages` warm-up messages, or a
//                                measured one, arrived; the first of all
//                                at T (CLOCK_MONOTONIC)
//   in   report expect=N         wait until N measured messages arrived, or
//                                none arrived for `quiet`, then:
//   out  result <ReceiveSummary fields> <path counters>
//   in   EOF                     exit cleanly
//
// source (sends; seq 0 is warm-up, measured messages count from 1):
//   out  ready
//   with `wait_for_go`: sends a warm-up message every 10 ms until
//   in   go
//   then sends for `duration`, paced at `rate_hz` (0: flat out);
//   out  progress attempted=N    every `progress_every`, if set
//   out  sent attempted=N sent=N refused=N last_seq=N elapsed_ns=T
//        late_slots=N <path counters>
//   in   EOF                     exit cleanly (also while sending: a source
//                                looks at stdin every 100 ms)
//
// Pacing: message k is due at start + k/rate_hz (absolute deadlines,
// clock_nanosleep on CLOCK_MONOTONIC); a source more than 10 periods behind
// skips the missed slots (counted in late_slots) instead of bursting.
//
// Threads: each role runs on the calling (main) thread and returns the
// process's exit code.

#ifndef TESTS_TRANSPORT_BENCH_ROLES_H_
#define TESTS_TRANSPORT_BENCH_ROLES_H_

#include <cstddef>

#include "absl/time/time.h"
#include "tests/transport_bench/bench_path.h"

namespace cyber {
namespace transport_bench {

struct SinkRole {
  PathConfig path;
  size_t max_samples = 1 << 20;  // ReceiveLog's cap
  // Warm-up messages before "warm": the first samples after discovery grow
  // Fast-DDS's pools and fault in the shared memory; they are not measured.
  uint64_t warm_up_messages = 20;
  absl::Duration quiet = absl::Seconds(1);
};

struct SourceRole {
  PathConfig path;
  double rate_hz = 0;  // 0: flat out
  absl::Duration duration = absl::Seconds(5);
  bool wait_for_go = true;
  absl::Duration progress_every = absl::ZeroDuration();  // zero: no progress lines
};

int RunSink(const SinkRole& role);
int RunSource(const SourceRole& role);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_ROLES_H_
