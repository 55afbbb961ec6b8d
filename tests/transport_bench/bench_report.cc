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
  return absl::StrCat(Grouped(static_cast<double>(b)), " B");
}

std::string Rate(double hz) { return hz > 0 ? absl::StrFormat("%g Hz", hz) : "flat out"; }

std::string Micros(absl::Duration d) {
  return absl::StrFormat("%.1f", absl::ToDoubleMicroseconds(d));
}

std::string Ratio(double ours, double bare) {
  if (bare <= 0) return "-";
  return absl::StrFormat("%.2fx", ours / bare);
}

// The median of the case `spec` measured on path `kind` instead; null if
// it was not measured.
const CaseResult* SameCaseOn(const std::vector<CaseRow>& rows, CaseSpec spec, PathKind kind) {
  spec.path = kind;
  auto it = std::find_if(rows.begin(), rows.end(),
                         [&](const CaseRow& r) { return r.median.spec == spec && r.runs > 0; });
  return it == rows.end() ? nullptr : &it->median;
}

// `mine` over `theirs` at p50 or p99; "-" if either was not measured.
std::string LatencyRatio(const CaseResult* mine, const CaseResult* theirs, bool p99) {
  if (mine == nullptr || theirs == nullptr) return "-";
  return Ratio(absl::ToDoubleNanoseconds(p99 ? mine->rx.p99 : mine->rx.p50),
               absl::ToDoubleNanoseconds(p99 ? theirs->rx.p99 : theirs->rx.p50));
}

// The row's key figure: p50 (us) when paced, received msg/s flat out.
double KeyFigure(const CaseResult& r) {
  return r.spec.rate_hz > 0 ? absl::ToDoubleMicroseconds(r.rx.p50) : r.received_per_second();
}

}  // namespace

double CaseResult::received_per_second() const {
  const double s = absl::ToDoubleSeconds(send_elapsed);
  return s > 0 ? static_cast<double>(rx.received) / s : 0;
}

double CaseResult::offered_per_second() const {
  const double s = absl::ToDoubleSeconds(send_elapsed);
  return s > 0 ? static_cast<double>(attempted) / s : 0;
}

std::vector<CaseRow> MedianRows(const std::vector<CaseResult>& runs) {
  std::vector<CaseSpec> specs;
  for (const CaseResult& r : runs) {
    if (std::find(specs.begin(), specs.end(), r.spec) == specs.end()) specs.push_back(r.spec);
  }
  std::vector<CaseRow> rows;
  for (const CaseSpec& spec : specs) {
    CaseRow row;
    std::vector<const CaseResult*> measured;
    for (const CaseResult& r : runs) {
      if (!(r.spec == spec)) continue;
      if (r.error.empty()) {
        measured.push_back(&r);
      } else {
        ++row.failures;
        row.median = r;  // shown if no run was measured
      }
    }
    row.runs = static_cast<int>(measured.size());
    if (!measured.empty()) {
      std::sort(measured.begin(), measured.end(), [](const CaseResult* a, const CaseResult* b) {
        return KeyFigure(*a) < KeyFigure(*b);
      });
      row.median = *measured[(measured.size() - 1) / 2];  // the lower median
      const double lo = KeyFigure(*measured.front());
      const double hi = KeyFigure(*measured.back());
      row.key_low = lo;
      row.key_high = hi;
      row.spread = spec.rate_hz > 0 ? absl::StrFormat("%.1f-%.1f us", lo, hi)
                                    : absl::StrCat(Grouped(lo), "-", Grouped(hi), " msg/s");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string MarkdownReport(const std::vector<CaseRow>& rows, const ReportContext& context) {
  std::string out;
  absl::StrAppend(&out,
                  "| path | message | rate | sent | received | lost | refused | p50 us | "
                  "p99 us | max us | offered msg/s | received msg/s | MB/s | CPU s source / "
                  "sink | spread over runs |\n"
                  "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (const CaseRow& row : rows) {
    const CaseResult& r = row.median;
    const size_t bytes = PayloadBytes(r.spec.path, r.spec.message_bytes);
    absl::StrAppend(&out, "| ", PathName(r.spec.path), " | ", Bytes(bytes), " | ",
                    Rate(r.spec.rate_hz), " | ");
    if (row.runs == 0) {
      absl::StrAppend(&out, "error: ", r.error, " |||||||||||\n");
      continue;
    }
    const double rps = r.received_per_second();
    std::string spread = absl::StrCat(row.spread, " (", row.runs, " runs");
    if (row.failures > 0) absl::StrAppend(&spread, ", ", row.failures, " failed");
    absl::StrAppend(&spread, ")");
    absl::StrAppend(
        &out, Grouped(static_cast<double>(r.sent)), " | ",
        Grouped(static_cast<double>(r.rx.received)), " | ",
        Grouped(static_cast<double>(r.lost())), " | ", Grouped(static_cast<double>(r.refused)),
        " | ", Micros(r.rx.p50), " | ", Micros(r.rx.p99), " | ", Micros(r.rx.max), " | ",
        Grouped(r.offered_per_second()), " | ", Grouped(rps), " | ",
        absl::StrFormat("%.1f", rps * static_cast<double>(bytes) / 1e6), " | ",
        absl::StrFormat("%.2f / %.2f", absl::ToDoubleSeconds(r.source_cpu),
                        absl::ToDoubleSeconds(r.sink_cpu)),
        " | ", spread, " |\n");
  }

  // ours / bare DDS, per message size and rate, in the order measured.
  absl::StrAppend(&out,
                  "\n| message | rate | p50 ours/dds | p99 ours/dds | received msg/s ours/dds | "
                  "targets (p50 <= 1.2x, p99 <= 1.5x) |\n|---:|---|---:|---:|---:|---|\n");
  for (const CaseRow& ours_row : rows) {
    const CaseResult& ours = ours_row.median;
    if (ours.spec.path != PathKind::kOurs || ours_row.runs == 0) continue;
    CaseSpec bare_spec = ours.spec;
    bare_spec.path = PathKind::kBareDds;
    auto bare_row = std::find_if(rows.begin(), rows.end(), [&](const CaseRow& r) {
      return r.median.spec == bare_spec && r.runs > 0;
    });
    if (bare_row == rows.end()) continue;
    const CaseResult& bare = bare_row->median;
    const double p50 = absl::ToDoubleNanoseconds(ours.rx.p50);
    const double p99 = absl::ToDoubleNanoseconds(ours.rx.p99);
    const double b50 = absl::ToDoubleNanoseconds(bare.rx.p50);
    const double b99 = absl::ToDoubleNanoseconds(bare.rx.p99);
    std::string verdict = absl::StrCat(
        "n/a (flat out: latency is queueing; received msg/s max/min over runs: ours ",
        Ratio(ours_row.key_high, ours_row.key_low), ", dds ",
        Ratio(bare_row->key_high, bare_row->key_low), ")");
    if (ours.spec.rate_hz > 0 && b50 > 0 && b99 > 0) {
      verdict = absl::StrCat("p50 ", p50 / b50 <= kP50Target ? "met" : "MISSED", ", p99 ",
                             p99 / b99 <= kP99Target ? "met" : "MISSED");
    }
    absl::StrAppend(&out, "| ", Bytes(ours.spec.message_bytes), " | ", Rate(ours.spec.rate_hz),
                    " | ", Ratio(p50, b50), " | ", Ratio(p99, b99), " | ",
                    Ratio(ours.received_per_second(), bare.received_per_second()), " | ",
                    verdict, " |\n");
  }

  // The loan path against bare DDS and ours, where it was measured.
  bool loan_header = false;
  for (const CaseRow& loan_row : rows) {
    const CaseResult& loan = loan_row.median;
    if (loan.spec.path != PathKind::kLoan || loan_row.runs == 0) continue;
    if (!loan_header) {
      absl::StrAppend(&out,
                      "\n| message | rate | p50 loan/dds | p99 loan/dds | p50 loan/ours | "
                      "p99 loan/ours | sink CPU loan/dds |\n|---:|---|---:|---:|---:|---:|---:|\n");
      loan_header = true;
    }
    const CaseResult* bare = SameCaseOn(rows, loan.spec, PathKind::kBareDds);
    const CaseResult* ours = SameCaseOn(rows, loan.spec, PathKind::kOurs);
    const std::string cpu =
        bare == nullptr ? std::string("-")
                        : Ratio(absl::ToDoubleSeconds(loan.sink_cpu),
                                absl::ToDoubleSeconds(bare->sink_cpu));
    absl::StrAppend(&out, "| ", Bytes(loan.spec.message_bytes), " | ", Rate(loan.spec.rate_hz),
                    " | ", LatencyRatio(&loan, bare, false), " | ", LatencyRatio(&loan, bare, true),
                    " | ", LatencyRatio(&loan, ours, false), " | ", LatencyRatio(&loan, ours, true),
                    " | ", cpu, " |\n");
  }

  // Ours and the loan path against bare DDS with data sharing (dds_ds), the
  // fastest Fast-DDS path between two processes of one host.
  bool shared_header = false;
  for (const CaseRow& shared_row : rows) {
    const CaseResult& shared = shared_row.median;
    if (shared.spec.path != PathKind::kBareDdsShared || shared_row.runs == 0) continue;
    if (!shared_header) {
      absl::StrAppend(&out,
                      "\n| message | rate | p50 dds_ds/dds | p50 ours/dds_ds | p50 ours_ds/dds_ds | "
                      "p99 ours_ds/dds_ds | sink CPU ours_ds/dds_ds | p50 loan/dds_ds | "
                      "p99 loan/dds_ds | target (protobuf p50 <= 1.1x dds_ds) |\n"
                      "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
      shared_header = true;
    }
    const CaseResult* bare = SameCaseOn(rows, shared.spec, PathKind::kBareDds);
    const CaseResult* ours = SameCaseOn(rows, shared.spec, PathKind::kOurs);
    const CaseResult* ours_ds = SameCaseOn(rows, shared.spec, PathKind::kOursShared);
    const CaseResult* loan = SameCaseOn(rows, shared.spec, PathKind::kLoan);
    const std::string cpu = ours_ds == nullptr
                                ? std::string("-")
                                : Ratio(absl::ToDoubleSeconds(ours_ds->sink_cpu),
                                        absl::ToDoubleSeconds(shared.sink_cpu));
    // The protobuf path to judge: ours with data sharing where measured.
    const CaseResult* judged = ours_ds != nullptr ? ours_ds : ours;
    std::string verdict = "-";
    if (judged != nullptr && shared.spec.rate_hz > 0) {
      const double b50 = absl::ToDoubleNanoseconds(shared.rx.p50);
      verdict = b50 > 0 && absl::ToDoubleNanoseconds(judged->rx.p50) / b50 <= 1.1 ? "met"
                                                                                 : "MISSED";
      absl::StrAppend(&verdict, " (", PathName(judged->spec.path), ")");
    }
    absl::StrAppend(&out, "| ", Bytes(shared.spec.message_bytes), " | ", Rate(shared.spec.rate_hz),
                    " | ", LatencyRatio(&shared, bare, false), " | ",
                    LatencyRatio(ours, &shared, false), " | ", LatencyRatio(ours_ds, &shared, false),
                    " | ", LatencyRatio(ours_ds, &shared, true), " | ", cpu, " | ",
                    LatencyRatio(loan, &shared, false), " | ", LatencyRatio(loan, &shared, true),
                    " | ", verdict, " |\n");
  }

  absl::StrAppend(
      &out, "\nEach case ran ", context.repetitions,
      " time(s), in rounds; a row is its median run (by p50 at 100 Hz, by received msg/s flat "
      "out), the spread the range of that figure over the runs. A run: two fresh processes (a "
      "sink, then a source) on a random DDS domain nobody else on the host uses; after a "
      "warm-up (a message every 10 ms until the sink has 20), the source sends for ",
      absl::FormatDuration(context.paced_duration), " at 100 Hz or for ",
      absl::FormatDuration(context.flat_out_duration),
      " flat out. Latency = arrival - send stamp (CLOCK_MONOTONIC, same host), exact "
      "percentiles over every measured message; received msg/s = received / sending time; "
      "MB = 10^6 bytes of payload; CPU includes each process's start and shutdown. ours: "
      "Writer -> Reader of two cyber::Runtimes on DdsTransport, the callback a scheduler "
      "routine (reader queue 1024), a fresh message per write (its body copied before the "
      "stamp); dds: bare Fast-DDS configured like DdsTransport (shared memory + loopback UDP, "
      "reliable, keep last 16), raw bytes, DataWriter::write -> on_data_available; dds_ds: the same with "
      "Fast-DDS data sharing on (a bounded type sized for the message, the writer's history "
      "in a shared pool the reader reads); ours_ds: ours with the channel's data sharing on "
      "(ChannelQos::data_sharing_max_bytes sized for the message); loan: LoanWriter -> "
      "Reader<SharedBytes> on the same runtimes, the payload written into a loaned slot "
      "before the stamp and read in place (16 slots); udp: one "
      "datagram per message on 127.0.0.1 (60,000 B for the 64 KiB case), default socket "
      "buffers. Flat out, a reliable keep-last-16 writer does not wait for its reader (it "
      "blocks only when its history is full of samples it must keep, which keep-last never "
      "is): it overwrites samples the reader has not taken yet, and lost counts them. Load "
      "average before: ",
      context.load_before, "; after: ", context.load_after, ".\n");
  return out;
}

}  // namespace transport_bench
}  // namespace cyber
