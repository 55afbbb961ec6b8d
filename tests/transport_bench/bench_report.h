// The transport benchmark's results and their markdown: one row per case
// (path x message size x rate), then ours / bare DDS ratios with the
// targets of issue 22 (p50 <= 1.2x, p99 <= 1.5x at 100 Hz).
//
// Repetitions: every case runs `repetitions` times (in rounds, so a burst
// of load elsewhere hits one round, not one path). A row is one real run,
// the median one by the row's key figure — p50 at 100 Hz, received msg/s
// flat out — so that its columns belong together; the spread column gives
// the key figure's range over all runs.
//
// Figures: sent = messages the path accepted (ours: Write calls whose
// publish did not fail), lost = sent - received (every path counts its
// losses; on the reliable paths a loss is a sample overwritten in a
// keep-last-16 history before the reader took it), latencies from
// ReceiveLog, received msg/s = received / the source's sending time (the
// fixed window), MB/s = that x payload bytes / 10^6, CPU = each process's
// user + system time over its whole life (start and shutdown included).
//
// Threads: plain values and pure functions.

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

  bool operator==(const CaseSpec& o) const {
    return path == o.path && message_bytes == o.message_bytes && rate_hz == o.rate_hz;
  }
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
  std::string source_counters;  // the children's report lines
  std::string sink_counters;
  absl::Duration source_cpu;
  absl::Duration sink_cpu;

  int64_t lost() const { return static_cast<int64_t>(sent) - static_cast<int64_t>(rx.received); }
  double received_per_second() const;  // received / send_elapsed
  double offered_per_second() const;   // attempted / send_elapsed
};

// One row: the median run of a case, and the range of its key figure.
struct CaseRow {
  CaseResult median;
  int runs = 0;         // measured runs
  int failures = 0;     // runs that failed (their errors in `median` if none measured)
  std::string spread;   // "118.2-125.0 us" or "4,100-6,300 msg/s"
  double key_low = 0;   // the key figure's range over the measured runs
  double key_high = 0;
};

// Rows in the order the cases first appear in `runs`.
std::vector<CaseRow> MedianRows(const std::vector<CaseResult>& runs);

struct ReportContext {
  std::string load_before;  // /proc/loadavg
  std::string load_after;
  absl::Duration paced_duration;
  absl::Duration flat_out_duration;
  int repetitions = 1;
};

std::string MarkdownReport(const std::vector<CaseRow>& rows, const ReportContext& context);

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_BENCH_REPORT_H_
