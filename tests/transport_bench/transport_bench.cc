// transport_bench: one-way latency (p50, p99) and throughput between two
// processes on this host, for three paths in one run — our Writer/Reader on
// DdsTransport, bare Fast-DDS configured the same way, and a bare UDP
// socket — with 64 B and 64 KiB messages, at 100 Hz and flat out; then the
// ratios ours / bare DDS against the targets of issue 22.
//
//   bazel run --config=opt //tests/transport_bench:transport_bench --
//       [--markdown_out=transport_bench.md] [--paths=ours,dds,udp]
//       [--sizes=64,65536] [--rates=100,0] [--paced_duration=10s]
//       [--flat_out_duration=5s] [--repetitions=3]
//
// Why separate processes per case: every case (path x size x rate) gets a
// sink process and a source process of its own (this binary again, with
// --role; roles.h) on a fresh random DDS domain that nobody on this host
// uses (free_domain.h), so no case inherits
// another's participants, discovery traffic, pools or threads, and the
// orchestrator (this process) only waits. Paths run in turn for each size
// and rate, and every case runs --repetitions times in rounds, a row being
// its median run (bench_report.h), so a burst of load elsewhere on the
// machine hits one run of one path, not a row; the load average is printed
// with the table (rerun when it is high: the measurement uses the real
// clock on a shared machine).
//
// Nothing is left behind: children exit cleanly when told (their DDS
// participants remove their shared memory); one that does not within 10 s
// is killed and reaped (child_process.h). Exit status: 0 when every case
// was measured, 1 otherwise.

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gflags/gflags.h"
#include "tests/transport_bench/bench_path.h"
#include "tests/transport_bench/bench_report.h"
#include "tests/transport_bench/child_process.h"
#include "tests/transport_bench/child_side.h"
#include "tests/transport_bench/free_domain.h"
#include "tests/transport_bench/line_channel.h"
#include "tests/transport_bench/roles.h"
#include "tests/transport_bench/run_support.h"

DEFINE_string(paths, "ours,dds,udp", "paths to measure: ours, dds, dds_ds, ours_ds, udp, loan");
DEFINE_string(sizes, "64,65536", "message sizes in bytes (udp caps them at 60000)");
DEFINE_string(rates, "100,0", "send rates in Hz; 0 is flat out");
DEFINE_string(paced_duration, "10s", "how long a paced source sends");
DEFINE_string(flat_out_duration, "5s", "how long a flat-out source sends");
DEFINE_string(markdown_out, "", "also write the report to this file");
DEFINE_int32(repetitions, 3, "runs of every case; a row is the median run");
// Across hosts (tools/hosts/bench.sh): each child starts behind a command
// prefix that puts it on its host, and uses that host's address.
DEFINE_string(sink_prefix, "", "words run before the sink's command (e.g. nsenter ...)");
DEFINE_string(source_prefix, "", "words run before the source's command");
DEFINE_string(sink_address, "", "the sink host's IPv4 address; empty: loopback");
DEFINE_string(source_address, "", "the source host's IPv4 address; empty: loopback");
DEFINE_string(sink_security, "", "DDS Security directory of the sink (ours, dds)");
DEFINE_string(source_security, "", "DDS Security directory of the source (ours, dds)");
DEFINE_string(address, "", "internal: the child's own address");
DEFINE_string(peer_address, "", "internal: the udp sink's address");
DEFINE_string(security_dir, "", "internal: the child's DDS Security directory");
// A child's role (set by the orchestrator, not by hand).
DEFINE_string(role, "", "internal: sink or source");
DEFINE_string(path, "ours", "internal: the child's path");
DEFINE_uint64(bytes, 64, "internal: message size");
DEFINE_uint32(domain, 0, "internal: DDS domain");
DEFINE_uint32(port, 0, "internal: the udp sink's port");
DEFINE_double(rate_hz, 0, "internal: send rate, 0 flat out");
DEFINE_string(duration, "5s", "internal: how long the source sends");

namespace cyber {
namespace transport_bench {
namespace {

constexpr absl::Duration kStartPatience = absl::Seconds(30);
constexpr absl::Duration kExitGrace = absl::Seconds(10);

std::vector<std::string> ChildArgs(const std::string& role, const CaseSpec& spec,
                                   uint32_t domain, uint32_t port) {
  const bool sink = role == "sink";
  std::vector<std::string> args = absl::StrSplit(
      sink ? FLAGS_sink_prefix : FLAGS_source_prefix, ' ', absl::SkipEmpty());
  const std::vector<std::string> own = {
          SelfPath(),
          absl::StrCat("--address=", sink ? FLAGS_sink_address : FLAGS_source_address),
          absl::StrCat("--peer_address=", FLAGS_sink_address),
          absl::StrCat("--security_dir=", sink ? FLAGS_sink_security : FLAGS_source_security),
          absl::StrCat("--role=", role),
          absl::StrCat("--path=", PathName(spec.path)),
          absl::StrCat("--bytes=", spec.message_bytes),
          absl::StrCat("--domain=", domain),
          absl::StrCat("--port=", port),
          absl::StrCat("--rate_hz=", spec.rate_hz),
          absl::StrCat("--duration=", absl::FormatDuration(spec.duration))};
  args.insert(args.end(), own.begin(), own.end());
  return args;
}

// REQUIRES: result->domain is set.
absl::Status Measure(const CaseSpec& spec, CaseResult* result) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> sink =
      ChildProcess::Start(ChildArgs("sink", spec, result->domain, 0));
  if (!sink.ok()) return sink.status();
  (*sink)->set_name(absl::StrCat("sink (", PathName(spec.path), ", pid ", (*sink)->pid(), ")"));
  absl::StatusOr<std::string> ready = (*sink)->ExpectLine("ready", kStartPatience);
  if (!ready.ok()) return ready.status();
  const uint32_t port = static_cast<uint32_t>(FieldInt(ParseFields(*ready), "port", 0));

  absl::StatusOr<std::unique_ptr<ChildProcess>> source =
      ChildProcess::Start(ChildArgs("source", spec, result->domain, port));
  if (!source.ok()) return source.status();
  (*source)->set_name(
      absl::StrCat("source (", PathName(spec.path), ", pid ", (*source)->pid(), ")"));
  if (auto s = (*source)->ExpectLine("ready", kStartPatience); !s.ok()) return s.status();
  if (auto s = (*sink)->ExpectLine("warm", kStartPatience); !s.ok()) return s.status();
  (*source)->WriteLine("go");
  absl::StatusOr<std::string> sent =
      (*source)->ExpectLine("sent", spec.duration + kStartPatience);
  if (!sent.ok()) return sent.status();
  const auto sf = ParseFields(*sent);
  result->attempted = static_cast<uint64_t>(FieldInt(sf, "attempted", 0));
  result->sent = static_cast<uint64_t>(FieldInt(sf, "sent", 0));
  result->refused = static_cast<uint64_t>(FieldInt(sf, "refused", 0));
  result->send_elapsed = absl::Nanoseconds(FieldInt(sf, "elapsed_ns", 0));
  result->source_counters = *sent;

  (*sink)->WriteLine(absl::StrCat("report expect=", result->sent));
  absl::StatusOr<std::string> report = (*sink)->ExpectLine("result", kStartPatience);
  if (!report.ok()) return report.status();
  result->rx = ReceiveSummary::FromFields(*report);
  result->sink_counters = *report;

  // Both at once: they leave the domain side by side.
  (*source)->CloseStdin();
  (*sink)->CloseStdin();
  const ChildProcess::Exit source_exit = (*source)->Finish(kExitGrace);
  const ChildProcess::Exit sink_exit = (*sink)->Finish(kExitGrace);
  result->source_cpu = source_exit.cpu;
  result->sink_cpu = sink_exit.cpu;
  if (!source_exit.clean || !sink_exit.clean) {
    return absl::InternalError(absl::StrCat("a child did not exit cleanly (source status ",
                                            source_exit.status, ", sink status ",
                                            sink_exit.status, ")"));
  }
  return absl::OkStatus();
}

template <typename T, typename F>
std::vector<T> ParseList(const char* flag, const std::string& text, F parse) {
  std::vector<T> out;
  for (absl::string_view word : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    T v;
    if (!parse(word, &v)) {
      std::fprintf(stderr, "transport_bench: --%s: \"%s\" is not valid\n", flag,
                   std::string(word).c_str());
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

int Orchestrate() {
  const absl::Duration paced = PositiveDurationFlag("transport_bench", "paced_duration", FLAGS_paced_duration);
  const absl::Duration flat_out = PositiveDurationFlag("transport_bench", "flat_out_duration", FLAGS_flat_out_duration);
  const auto paths = ParseList<PathKind>("paths", FLAGS_paths, [](absl::string_view w, PathKind* k) {
    absl::StatusOr<PathKind> p = ParsePathKind(w);
    if (p.ok()) *k = *p;
    return p.ok();
  });
  const auto sizes = ParseList<size_t>("sizes", FLAGS_sizes, [](absl::string_view w, size_t* v) {
    // On one host the shared-memory segment grows with the message
    // (ShmSegmentBytes, bench_path.h).
    return absl::SimpleAtoi(w, v) && *v >= 16 && *v <= (16u << 20);
  });
  const auto rates = ParseList<double>("rates", FLAGS_rates, [](absl::string_view w, double* v) {
    return absl::SimpleAtod(w, v) && *v >= 0;
  });

  if (FLAGS_repetitions < 1) {
    std::fprintf(stderr, "transport_bench: --repetitions must be at least 1\n");
    return 2;
  }
  ReportContext context;
  context.paced_duration = paced;
  context.flat_out_duration = flat_out;
  context.repetitions = FLAGS_repetitions;
  context.load_before = LoadAverage();
  std::vector<CaseResult> runs;
  bool all_ok = true;
  for (int round = 1; round <= FLAGS_repetitions; ++round) {
    for (size_t bytes : sizes) {
      for (double rate : rates) {
        for (PathKind path : paths) {
          CaseResult r;
          r.spec = CaseSpec{path, bytes, rate, rate > 0 ? paced : flat_out};
          r.domain = PickFreeDomain();
          std::fprintf(stderr, "transport_bench: round %d/%d: %s, %zu B, %s, domain %u ...\n",
                       round, FLAGS_repetitions, PathName(path), bytes,
                       rate > 0 ? absl::StrCat(rate, " Hz").c_str() : "flat out", r.domain);
          if (absl::Status s = Measure(r.spec, &r); !s.ok()) {
            r.error = std::string(s.message());
            all_ok = false;
          }
          if (r.error.empty()) {
            std::fprintf(stderr, "transport_bench:   %s\ntransport_bench:   %s\n",
                         r.source_counters.c_str(), r.sink_counters.c_str());
          } else {
            std::fprintf(stderr, "transport_bench:   %s\n", r.error.c_str());
          }
          runs.push_back(std::move(r));
        }
      }
    }
  }
  context.load_after = LoadAverage();
  const std::string report = MarkdownReport(MedianRows(runs), context);
  std::fputs(report.c_str(), stdout);
  if (!FLAGS_markdown_out.empty()) {
    std::ofstream f(FLAGS_markdown_out);
    f << report;
    if (!f) {
      std::fprintf(stderr, "transport_bench: cannot write %s\n", FLAGS_markdown_out.c_str());
      return 1;
    }
  }
  return all_ok ? 0 : 1;
}

PathConfig ChildPath() {
  absl::StatusOr<PathKind> kind = ParsePathKind(FLAGS_path);
  if (!kind.ok()) {
    Say(absl::StrCat("error ", kind.status().message()));
    std::exit(2);
  }
  PathConfig config;
  config.kind = *kind;
  config.payload_bytes = FLAGS_bytes;
  config.domain = FLAGS_domain;
  config.udp_port = static_cast<uint16_t>(FLAGS_port);
  config.address = FLAGS_address;
  config.peer_address = FLAGS_peer_address;
  config.security_dir = FLAGS_security_dir;
  return config;
}

}  // namespace
}  // namespace transport_bench
}  // namespace cyber

int main(int argc, char** argv) {
  using namespace cyber::transport_bench;  // NOLINT
  gflags::SetUsageMessage(
      "one-way latency and throughput between two processes: ours, bare Fast-DDS, UDP");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_role.empty()) return Orchestrate();
  PrepareChild();
  if (FLAGS_role == "sink") {
    SinkRole role;
    role.path = ChildPath();
    // Every message of a paced run; a flat-out run keeps the first 4 M
    // latencies (32 MB) and counts the rest.
    role.max_samples = FLAGS_rate_hz > 0 ? 1 << 20 : 4 << 20;
    return RunSink(role);
  }
  if (FLAGS_role == "source") {
    SourceRole role;
    role.path = ChildPath();
    role.rate_hz = FLAGS_rate_hz;
    role.duration = PositiveDurationFlag("transport_bench", "duration", FLAGS_duration);
    return RunSource(role);
  }
  std::fprintf(stderr, "transport_bench: unknown --role=%s\n", FLAGS_role.c_str());
  return 2;
}
