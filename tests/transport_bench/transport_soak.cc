// transport_soak: one reliable channel of ours between two processes at
// 1 kHz for a long time (10 minutes by default): are messages lost, and how
// soon does the first one arrive after both processes start?
//
//   bazel run --config=opt //tests/transport_bench:transport_soak --
//       [--duration=10m] [--rate_hz=1000] [--markdown_out=soak.md]
//
// Targets (issue 22): 0 lost over 10 minutes; the first message received at
// most 500 ms after both processes were started.
//
// How: this process starts a reader process, then at once a writer process
// (this binary with --role; roles.h), on a random DDS domain nobody on this
// host uses (free_domain.h), both a
// cyber::Runtime on DdsTransport with a Node on "/transport_bench/ours"
// (reliable, volatile, keep last 16; reader queue 1024). The writer writes
// BenchMessage 1, 2, 3, ... at --rate_hz from its first moment, before any
// reader is matched (those writes are not sent: nobody wants them). The
// time to the first message is the reader's first arrival minus the moment
// the writer (the later of the two) was forked, both CLOCK_MONOTONIC:
// process start, runtime, participant, discovery and the first delivery.
//
// Lost: of the messages numbered from the first one the reader got up to
// the last one written, those that never arrived (a refused write among
// them counts as lost). Messages published before the reader's first
// arrival (matched on the writer's side only) are reported apart: with a
// volatile channel a reader gets what is written after it joined.
//
// Exit status: 0 when the run completed (whatever the figures), 1 if it
// could not; children are always stopped and reaped (child_process.h).

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "gflags/gflags.h"
#include "tests/transport_bench/bench_path.h"
#include "tests/transport_bench/child_process.h"
#include "tests/transport_bench/child_side.h"
#include "tests/transport_bench/free_domain.h"
#include "tests/transport_bench/line_channel.h"
#include "tests/transport_bench/number_text.h"
#include "tests/transport_bench/receive_log.h"
#include "tests/transport_bench/roles.h"
#include "tests/transport_bench/run_support.h"
#include "tests/transport_bench/wire_stamp.h"

DEFINE_string(duration, "10m", "how long the writer writes");
DEFINE_double(rate_hz, 1000, "messages per second");
DEFINE_string(progress, "60s", "how often the writer reports progress");
DEFINE_string(markdown_out, "", "also write the report to this file");
DEFINE_string(role, "", "internal: reader or writer");
DEFINE_uint32(domain, 0, "internal: DDS domain");

namespace cyber {
namespace transport_bench {
namespace {

constexpr absl::Duration kStartPatience = absl::Seconds(60);
constexpr absl::Duration kExitGrace = absl::Seconds(10);
constexpr absl::Duration kFirstMessageTarget = absl::Milliseconds(500);

struct SoakResult {
  absl::Duration duration;
  double rate_hz = 0;
  uint64_t written = 0;
  uint64_t published = 0;
  uint64_t refused = 0;
  uint64_t last_seq = 0;
  uint64_t late_slots = 0;
  ReceiveSummary rx;
  absl::Duration first_after_start;  // from the writer's fork
  absl::Duration reader_head_start;  // reader forked this much earlier
  std::string load_before;
  std::string load_after;

  int64_t lost() const {
    if (rx.first_seq == 0) return static_cast<int64_t>(last_seq);
    return static_cast<int64_t>(last_seq - rx.first_seq + 1) - static_cast<int64_t>(rx.received);
  }
  // Writes before the writer matched the reader: not sent.
  uint64_t unsent() const { return written - published - refused; }
  // Published, then not received, before the reader's first message.
  int64_t published_before_first() const {
    return static_cast<int64_t>(rx.first_seq) - 1 - static_cast<int64_t>(unsent());
  }
};

std::string Markdown(const SoakResult& r) {
  const bool lost_ok = r.lost() == 0;
  const bool first_ok = r.first_after_start <= kFirstMessageTarget;
  std::string out = absl::StrCat(
      "| duration | rate | written | published | refused | received | lost | out of order | "
      "first message after start | p50 us | p99 us | max us |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n| ",
      absl::FormatDuration(r.duration), " | ", absl::StrFormat("%g Hz", r.rate_hz), " | ",
      Grouped(static_cast<double>(r.written)), " | ", Grouped(static_cast<double>(r.published)),
      " | ", Grouped(static_cast<double>(r.refused)), " | ",
      Grouped(static_cast<double>(r.rx.received)), " | ", Grouped(static_cast<double>(r.lost())),
      " | ", Grouped(static_cast<double>(r.rx.out_of_order)), " | ",
      absl::StrFormat("%.0f ms", absl::ToDoubleMilliseconds(r.first_after_start)), " | ",
      absl::StrFormat("%.1f", absl::ToDoubleMicroseconds(r.rx.p50)), " | ",
      absl::StrFormat("%.1f", absl::ToDoubleMicroseconds(r.rx.p99)), " | ",
      absl::StrFormat("%.1f", absl::ToDoubleMicroseconds(r.rx.max)), " |\n\n");
  absl::StrAppend(
      &out, "Targets: 0 lost: ", lost_ok ? "met" : "MISSED", "; first message <= 500 ms after "
      "both processes started: ", first_ok ? "met" : "MISSED", ".\n\n",
      "Start-up: the writer wrote from its first moment; ", r.unsent(),
      " writes came before it matched the reader (not sent), ",
      std::max<int64_t>(r.published_before_first(), 0),
      " were published before the reader's first message (seq ", r.rx.first_seq,
      "), which lost counts from. The reader was started ",
      absl::StrFormat("%.1f ms", absl::ToDoubleMilliseconds(r.reader_head_start)),
      " before the writer; the first-message time counts from the writer's start. "
      "Pacing: absolute 1/rate deadlines, ", r.late_slots,
      " slots skipped (writer more than 10 periods late). Load average before: ",
      r.load_before, "; after: ", r.load_after, ".\n");
  return out;
}

int Orchestrate() {
  SoakResult result;
  result.duration = PositiveDurationFlag("transport_soak", "duration", FLAGS_duration);
  result.rate_hz = FLAGS_rate_hz;
  if (!(result.rate_hz > 0)) {
    std::fprintf(stderr, "transport_soak: --rate_hz must be positive\n");
    return 2;
  }
  result.load_before = LoadAverage();
  const uint32_t domain = PickFreeDomain();
  const std::string self = SelfPath();
  const int64_t reader_start = MonotonicNs();
  absl::StatusOr<std::unique_ptr<ChildProcess>> reader = ChildProcess::Start(
      {self, "--role=reader", absl::StrCat("--domain=", domain),
       absl::StrCat("--duration=", FLAGS_duration), absl::StrCat("--rate_hz=", FLAGS_rate_hz)});
  const int64_t writer_start = MonotonicNs();
  absl::StatusOr<std::unique_ptr<ChildProcess>> writer = ChildProcess::Start(
      {self, "--role=writer", absl::StrCat("--domain=", domain),
       absl::StrCat("--duration=", FLAGS_duration), absl::StrCat("--rate_hz=", FLAGS_rate_hz),
       absl::StrCat("--progress=", FLAGS_progress)});
  if (!reader.ok() || !writer.ok()) {
    std::fprintf(stderr, "transport_soak: cannot start the children: %s %s\n",
                 reader.status().ToString().c_str(), writer.status().ToString().c_str());
    return 1;
  }
  (*reader)->set_name(absl::StrCat("reader (pid ", (*reader)->pid(), ")"));
  (*writer)->set_name(absl::StrCat("writer (pid ", (*writer)->pid(), ")"));
  std::fprintf(stderr, "transport_soak: domain %u, %s at %g Hz ...\n", domain,
               absl::FormatDuration(result.duration).c_str(), result.rate_hz);

  absl::StatusOr<std::string> warm = (*reader)->ExpectLine("warm", kStartPatience);
  if (!warm.ok()) {
    std::fprintf(stderr, "transport_soak: %s\n", warm.status().ToString().c_str());
    return 1;
  }
  const auto wf = ParseFields(*warm);
  result.first_after_start = absl::Nanoseconds(FieldInt(wf, "first_arrival_ns", 0) - writer_start);
  result.reader_head_start = absl::Nanoseconds(writer_start - reader_start);
  std::fprintf(stderr, "transport_soak: first message (seq %s) %s after both started\n",
               wf.count("first_seq") ? wf.at("first_seq").c_str() : "?",
               absl::FormatDuration(result.first_after_start).c_str());

  absl::StatusOr<std::string> sent =
      (*writer)->ExpectLine("sent", result.duration + kStartPatience, [&](const std::string& l) {
        if (!absl::StartsWith(l, "progress")) return;
        const int64_t seconds = (MonotonicNs() - writer_start) / 1'000'000'000;
        std::fprintf(stderr, "transport_soak: %s: %s\n",
                     absl::FormatDuration(absl::Seconds(seconds)).c_str(), l.c_str());
      });
  if (!sent.ok()) {
    std::fprintf(stderr, "transport_soak: %s\n", sent.status().ToString().c_str());
    return 1;
  }
  const auto sf = ParseFields(*sent);
  result.written = static_cast<uint64_t>(FieldInt(sf, "attempted", 0));
  result.refused = static_cast<uint64_t>(FieldInt(sf, "refused", 0));
  result.published = static_cast<uint64_t>(FieldInt(sf, "published", 0));
  result.last_seq = static_cast<uint64_t>(FieldInt(sf, "last_seq", 0));
  result.late_slots = static_cast<uint64_t>(FieldInt(sf, "late_slots", 0));
  const uint64_t first_seq = static_cast<uint64_t>(FieldInt(wf, "first_seq", 1));
  const uint64_t expect = result.last_seq >= first_seq ? result.last_seq - first_seq + 1 : 0;
  (*reader)->WriteLine(absl::StrCat("report expect=", expect));
  absl::StatusOr<std::string> report = (*reader)->ExpectLine("result", kStartPatience);
  if (!report.ok()) {
    std::fprintf(stderr, "transport_soak: %s\n", report.status().ToString().c_str());
    return 1;
  }
  result.rx = ReceiveSummary::FromFields(*report);
  std::fprintf(stderr, "transport_soak: writer: %s\ntransport_soak: reader: %s\n", sent->c_str(),
               report->c_str());
  (*writer)->CloseStdin();
  (*reader)->CloseStdin();
  const bool writer_clean = (*writer)->Finish(kExitGrace).clean;  // both, whatever the first
  const bool reader_clean = (*reader)->Finish(kExitGrace).clean;
  const bool clean = writer_clean && reader_clean;
  result.load_after = LoadAverage();

  const std::string md = Markdown(result);
  std::fputs(md.c_str(), stdout);
  if (!FLAGS_markdown_out.empty()) {
    std::ofstream f(FLAGS_markdown_out);
    f << md;
    if (!f) {
      std::fprintf(stderr, "transport_soak: cannot write %s\n", FLAGS_markdown_out.c_str());
      return 1;
    }
  }
  if (!clean) std::fprintf(stderr, "transport_soak: a child did not exit cleanly\n");
  return clean ? 0 : 1;
}

PathConfig OursPath() {
  PathConfig config;
  config.kind = PathKind::kOurs;
  config.payload_bytes = 64;
  config.domain = FLAGS_domain;
  return config;
}

}  // namespace
}  // namespace transport_bench
}  // namespace cyber

int main(int argc, char** argv) {
  using namespace cyber::transport_bench;  // NOLINT
  gflags::SetUsageMessage("a reliable channel between two processes at 1 kHz: losses, start-up");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_role.empty()) return Orchestrate();
  PrepareChild();
  const absl::Duration duration = PositiveDurationFlag("transport_soak", "duration", FLAGS_duration);
  if (FLAGS_role == "reader") {
    SinkRole role;
    role.path = OursPath();
    // Every message of the run, and a margin.
    role.max_samples = static_cast<size_t>(FLAGS_rate_hz * absl::ToDoubleSeconds(duration)) + 1024;
    role.quiet = absl::Seconds(2);
    return RunSink(role);
  }
  if (FLAGS_role == "writer") {
    SourceRole role;
    role.path = OursPath();
    role.rate_hz = FLAGS_rate_hz;
    role.duration = duration;
    role.wait_for_go = false;
    role.progress_every = PositiveDurationFlag("transport_soak", "progress", FLAGS_progress);
    return RunSource(role);
  }
  std::fprintf(stderr, "transport_soak: unknown --role=%s\n", FLAGS_role.c_str());
  return 2;
}
