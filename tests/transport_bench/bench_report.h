// The transport benchmark's results and their markdown: one row per case
// (path x message size x rate), then ours / bare DDS ratios with the
// targets of issue 22 (p50 <= 1.2x, p99 <= 1.5x at 100 Hz).
//
// Figures: sent = messages the path accepted (ours: published by the
// transport), lost = sent - received (every path counts its losses; on the
// reliable paths a loss is a sample overwritten in a keep-last-16 history
// before the reader had it, or dropped from the reader's queue), latencies
// from ReceiveLog, msg/s = received / (last arrival - first arrival),
// MB/s = msg/s x payload bytes / 10^6, CPU = each process's user + system
// time over its whole life.
//
// Threads: plain values and a pure function.

#ifndef TESTS_TRANSPORT_BENCH_BENCH_REPORT_H_
#define TESTS_TRANSPORT_BENCH_BENCH_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tests/transport_bench/bench_path.h"
#include "tests/transport_bench/receive_log.h"

namespace cyber {
namespace transport_bench {

struct CaseSpec {
  PathKind path = PathKind::kOurs;
  size_t message_bytes = 64;  // as asked; PayloadBytes() caps udp
  double rate_hz = 0;         // 0: flat out
  absl::Duration duration;    // how long the source sends
};

struct CaseResult {
  CaseSpec spec;
  uint32_t domain = 0;
  std::string error;  // empty: measured
  uint64_t attempted = 0;
  uint64_t sent = 0;
  uint64_t refused = 0;
  absl::Duration send_elapsed;
  ReceiveSummary rx;
  std::string source_counters;  // "k=v ..." from the path
  std::string sink_counters;
  // CPU time (user + system) of each process over its whole life: start,
  // warm-up, the run, shutdown.
  absl::Duration source_cpu;
  absl::Duration sink_cpu;

  int64_t lost() const { return static_cast<int64_t>(sent) - static_cast<int64_t>(rx.received); }
  double received_per_second() const;
  double offered_per_second() const;  // attempted / send time
};

struct ReportContext {
  std::string load_before;  // /proc/loadavg
  std::string load_after;
  absl::Duration paced_duration;
  absl::Duration flat_out_duration;
};

std::string MarkdownReport(const std::vector<CaseResult>& results, const ReportContext& context);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_BENCH_REPORT_H_
