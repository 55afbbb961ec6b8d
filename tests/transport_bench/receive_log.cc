#include "tests/transport_bench/receive_log.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "tests/transport_bench/line_channel.h"

namespace cyber {
namespace transport_bench {
namespace {

// The q-quantile of sorted `v` by the nearest-rank rule.
int64_t Quantile(const std::vector<int64_t>& v, double q) {
  if (v.empty()) return 0;
  const double rank = std::ceil(q * static_cast<double>(v.size()));
  const size_t r = std::clamp<size_t>(static_cast<size_t>(rank), 1, v.size());
  return v[r - 1];
}

}  // namespace

std::string ReceiveSummary::ToFields() const {
  return absl::StrCat("received=", received, " out_of_order=", out_of_order,
                      " first_seq=", first_seq, " last_seq=", last_seq, " timed=", timed,
                      " p50_ns=", absl::ToInt64Nanoseconds(p50),
                      " p99_ns=", absl::ToInt64Nanoseconds(p99),
                      " max_ns=", absl::ToInt64Nanoseconds(max),
                      " span_ns=", absl::ToInt64Nanoseconds(span),
                      " first_arrival_ns=", first_arrival_ns);
}

ReceiveSummary ReceiveSummary::FromFields(const std::string& line) {
  const auto f = ParseFields(line);
  ReceiveSummary s;
  s.received = static_cast<uint64_t>(FieldInt(f, "received", 0));
  s.out_of_order = static_cast<uint64_t>(FieldInt(f, "out_of_order", 0));
  s.first_seq = static_cast<uint64_t>(FieldInt(f, "first_seq", 0));
  s.last_seq = static_cast<uint64_t>(FieldInt(f, "last_seq", 0));
  s.timed = static_cast<uint64_t>(FieldInt(f, "timed", 0));
  s.p50 = absl::Nanoseconds(FieldInt(f, "p50_ns", 0));
  s.p99 = absl::Nanoseconds(FieldInt(f, "p99_ns", 0));
  s.max = absl::Nanoseconds(FieldInt(f, "max_ns", 0));
  s.span = absl::Nanoseconds(FieldInt(f, "span_ns", 0));
  s.first_arrival_ns = FieldInt(f, "first_arrival_ns", 0);
  return s;
}

ReceiveLog::ReceiveLog(size_t max_samples) : max_samples_(max_samples) {
  MutexLock lock(&mu_);
  latencies_ns_.reserve(max_samples_);
}

void ReceiveLog::Record(uint64_t seq, int64_t sent_ns, int64_t arrived_ns) {
  MutexLock lock(&mu_);
  if (first_arrival_ns_ == 0) first_arrival_ns_ = arrived_ns;
  warm_.store(true, std::memory_order_release);
  if (seq == 0) {
    warm_ups_.store(warm_ups_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    return;
  }
  if (first_seq_ == 0) {
    first_seq_ = seq;
    first_measured_ns_ = arrived_ns;
  }
  if (seq <= last_seq_) ++out_of_order_;
  last_seq_ = std::max(last_seq_, seq);
  last_measured_ns_ = arrived_ns;
  if (latencies_ns_.size() < max_samples_) latencies_ns_.push_back(arrived_ns - sent_ns);
  received_.store(received_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

ReceiveSummary ReceiveLog::Summarize() const {
  std::vector<int64_t> sorted;
  ReceiveSummary s;
  {
    MutexLock lock(&mu_);
    sorted = latencies_ns_;
    s.out_of_order = out_of_order_;
    s.first_seq = first_seq_;
    s.last_seq = last_seq_;
    s.first_arrival_ns = first_arrival_ns_;
    s.span = absl::Nanoseconds(last_measured_ns_ - first_measured_ns_);
    s.received = received_.load(std::memory_order_relaxed);
  }
  std::sort(sorted.begin(), sorted.end());
  s.timed = sorted.size();
  s.p50 = absl::Nanoseconds(Quantile(sorted, 0.50));
  s.p99 = absl::Nanoseconds(Quantile(sorted, 0.99));
  s.max = absl::Nanoseconds(sorted.empty() ? 0 : sorted.back());
  return s;
}

}  // namespace transport_bench
}  // namespace cyber
