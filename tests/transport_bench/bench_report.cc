#include "tests/transport_bench/bench_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/transport_bench/number_text.h"

namespace cyber {
namespace transport_bench {
namespace {

constexpr double kP50Target = 1.2;
constexpr double kP99Target = 1.5;

std::string Bytes(size_t b) {
  if (b >= 1024 && b % 1024 == 0) return absl::StrCat(b / 1024, " KiB");
  if (b >= 10'000) return absl::StrFormat("%d,%03d B", b / 1000, b % 1000);
  return absl::StrCat(b, " B");
}

std::string Rate(double hz) { return hz > 0 ? absl::StrFormat("%g Hz", hz) : "flat out"; }

std::string Micros(absl::Duration d) {
  return absl::StrFormat("%.1f", absl::ToDoubleMicroseconds(d));
}

std::string Ratio(double ours, double bare) {
  if (bare <= 0) return "-";
  return absl::StrFormat("%.2fx", ours / bare);
}

}  // namespace

double CaseResult::received_per_second() const {
  const double span = absl::ToDoubleSeconds(rx.span);
  return span > 0 && rx.received > 1 ? static_cast<double>(rx.received - 1) / span : 0;
}

double CaseResult::offered_per_second() const {
  const double s = absl::ToDoubleSeconds(send_elapsed);
  return s > 0 ? static_cast<double>(attempted) / s : 0;
}

std::string MarkdownReport(const std::vector<CaseResult>& results, const ReportContext& context) {
  std::string out;
  absl::StrAppend(&out,
                  "| path | message | rate | sent | received | lost | refused | p50 us | "
                  "p99 us | max us | offered msg/s | received msg/s | MB/s | CPU s source / sink |\n"
                  "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const CaseResult& r : results) {
    const size_t bytes = PayloadBytes(r.spec.path, r.spec.message_bytes);
    absl::StrAppend(&out, "| ", PathName(r.spec.path), " | ", Bytes(bytes), " | ",
                    Rate(r.spec.rate_hz), " | ");
    if (!r.error.empty()) {
      absl::StrAppend(&out, "error: ", r.error, " ||||||||||\n");
      continue;
    }
    const double rps = r.received_per_second();
    absl::StrAppend(&out, Grouped(static_cast<double>(r.sent)), " | ",
                    Grouped(static_cast<double>(r.rx.received)), " | ",
                    Grouped(static_cast<double>(r.lost())), " | ", Grouped(static_cast<double>(r.refused)), " | ", Micros(r.rx.p50), " | ", Micros(r.rx.p99), " | ",
                    Micros(r.rx.max), " | ", Grouped(r.offered_per_second()), " | ", Grouped(rps),
                    " | ", absl::StrFormat("%.1f", rps * static_cast<double>(bytes) / 1e6),
                    " | ",
                    absl::StrFormat("%.2f / %.2f", absl::ToDoubleSeconds(r.source_cpu),
                                    absl::ToDoubleSeconds(r.sink_cpu)),
                    " |\n");
  }

  // ours / bare DDS, per message size and rate, in the order measured.
  struct Pair {
    size_t bytes;
    double rate_hz;
    const CaseResult* ours = nullptr;
    const CaseResult* bare = nullptr;
  };
  std::vector<Pair> pairs;
  for (const CaseResult& r : results) {
    if (!r.error.empty() || r.spec.path == PathKind::kUdp) continue;
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const Pair& p) {
      return p.bytes == r.spec.message_bytes && p.rate_hz == r.spec.rate_hz;
    });
    if (it == pairs.end()) it = pairs.insert(pairs.end(), Pair{r.spec.message_bytes, r.spec.rate_hz});
    (r.spec.path == PathKind::kOurs ? it->ours : it->bare) = &r;
  }
  absl::StrAppend(&out,
                  "\n| message | rate | p50 ours/dds | p99 ours/dds | received msg/s ours/dds | "
                  "targets (p50 <= 1.2x, p99 <= 1.5x) |\n|---:|---|---:|---:|---:|---|\n");
  for (const Pair& p : pairs) {
    if (p.ours == nullptr || p.bare == nullptr) continue;
    const double p50 = absl::ToDoubleNanoseconds(p.ours->rx.p50);
    const double p99 = absl::ToDoubleNanoseconds(p.ours->rx.p99);
    const double b50 = absl::ToDoubleNanoseconds(p.bare->rx.p50);
    const double b99 = absl::ToDoubleNanoseconds(p.bare->rx.p99);
    std::string verdict = "n/a (flat out: latency is queueing)";
    if (p.rate_hz > 0 && b50 > 0 && b99 > 0) {
      verdict = absl::StrCat("p50 ", p50 / b50 <= kP50Target ? "met" : "MISSED", ", p99 ",
                             p99 / b99 <= kP99Target ? "met" : "MISSED");
    }
    absl::StrAppend(&out, "| ", Bytes(p.bytes), " | ", Rate(p.rate_hz), " | ", Ratio(p50, b50),
                    " | ", Ratio(p99, b99), " | ",
                    Ratio(p.ours->received_per_second(), p.bare->received_per_second()), " | ",
                    verdict, " |\n");
  }

  absl::StrAppend(
      &out, "\nEach row: two fresh processes (a sink started first, then a source) on a fresh "
      "random DDS domain; after a warm-up that ends once the sink has a message, the source sends "
      "for ", absl::FormatDuration(context.paced_duration), " at 100 Hz or for ",
      absl::FormatDuration(context.flat_out_duration),
      " flat out. Latency = arrival - send stamp (CLOCK_MONOTONIC, same host), exact "
      "percentiles over every measured message; received msg/s over the span between the first "
      "and the last arrival; MB = 10^6 bytes of payload. ours: Writer -> Reader of two "
      "cyber::Runtimes on DdsTransport, the callback a scheduler routine (reader queue 1024); dds: "
      "bare Fast-DDS configured like DdsTransport (shared memory + loopback UDP, reliable, keep "
      "last 16), raw bytes, DataWriter::write -> on_data_available; udp: one datagram per "
      "message on 127.0.0.1 (60,000 B for the 64 KiB case). Load average before: ",
      context.load_before, "; after: ", context.load_after, ".\n");
  return out;
}

}  // namespace transport_bench
}  // namespace cyber
