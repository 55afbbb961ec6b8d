// ReceiveLog: what a receiving process of the benchmark saw — how many
// measured messages arrived, in which order, and the one-way latency of
// each (receive time - the sender's stamp, both CLOCK_MONOTONIC).
//
// Why every sample is kept (up to a cap) instead of a histogram: the
// benchmark compares our transport with bare Fast-DDS by ratios of p50 and
// p99 with targets of 1.2x and 1.5x, and timer/latency_histogram.h reports
// a percentile up to 12.5% above the true value. At most `max_samples`
// latencies are kept (8 bytes each, reserved up front so that recording
// never reallocates); later messages are counted, not timed.
//
// Sequence numbers: 0 is a warm-up message (it marks the log warm and is
// otherwise ignored); measured messages count from 1, and one arriving
// with a number not above the highest seen is counted out of order.
//
// Threads: Record() from any thread (the transports' receive threads);
// the accessors from any other.

#ifndef TESTS_TRANSPORT_BENCH_RECEIVE_LOG_H_
#define TESTS_TRANSPORT_BENCH_RECEIVE_LOG_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"

namespace cyber {
namespace transport_bench {

struct ReceiveSummary {
  uint64_t received = 0;      // measured messages (seq >= 1)
  uint64_t out_of_order = 0;  // measured messages not above the highest seq seen
  uint64_t first_seq = 0;     // of the first measured message; 0: none
  uint64_t last_seq = 0;      // the highest seen
  uint64_t timed = 0;         // latencies kept (<= max_samples)
  absl::Duration p50;
  absl::Duration p99;
  absl::Duration max;
  // Between the first and the last measured message's arrival.
  absl::Duration span;
  // CLOCK_MONOTONIC ns of the first message of any kind; 0: none yet.
  int64_t first_arrival_ns = 0;

  // "received=... p50_ns=...", the line the receiving process reports.
  std::string ToFields() const;
  static ReceiveSummary FromFields(const std::string& line);
};

class ReceiveLog {
 public:
  explicit ReceiveLog(size_t max_samples);

  // A message numbered `seq`, stamped `sent_ns` by its sender, arrived at
  // `arrived_ns`.
  void Record(uint64_t seq, int64_t sent_ns, int64_t arrived_ns);

  // Whether any message (warm-up or measured) arrived.
  bool warm() const { return warm_.load(std::memory_order_acquire); }
  // Warm-up messages so far.
  uint64_t warm_ups() const { return warm_ups_.load(std::memory_order_acquire); }
  // Measured messages so far.
  uint64_t received() const { return received_.load(std::memory_order_acquire); }

  ReceiveSummary Summarize() const;

 private:
  const size_t max_samples_;
  std::atomic<bool> warm_{false};
  std::atomic<uint64_t> received_{0};
  std::atomic<uint64_t> warm_ups_{0};

  // mu_ protects the following state.
  mutable Mutex mu_;
  std::vector<int64_t> latencies_ns_ ABSL_GUARDED_BY(mu_);
  uint64_t out_of_order_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t first_seq_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t first_arrival_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t first_measured_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t last_measured_ns_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_RECEIVE_LOG_H_
