// record_throughput: what the recorder keeps up with, measured. A writer
// process (this binary with --role=writer, started by it) writes
// --channels channels of Probe messages (--size bytes of payload) at --hz
// each on absolute deadlines for --seconds; this process records the
// domain with the Recorder exactly as `cyber_recorder record -a` does and
// reports what was sent, recorded, lost (gaps in the writers' sequences),
// dropped (the recorder's queue) and missing, the recorder's CPU per
// message (this process: DDS's receive threads, the handler, the writing
// thread) and the file's size.
//
//   bazel run --config=opt //cyber/tools/cyber_recorder:record_throughput --
//       --channels=10 --hz=1000 --size=64 --seconds=10
//   ... --compression=none|lz4|zstd (the recorder's chunks; default zstd)
//   ... --sweep        (10 channels, 1000 to 16000 Hz: where loss begins)
//   ... --disk_mib=256 (McapWriter's own write rate against dd's, same
//                       block size, same run, same directory)
//
// Why a second process: the issue's figure is "from another process on this
// machine" (Fast-DDS's shared memory between them, as in a robot).

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cyber/common/steady_time.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/graph/runtime_announcer.h"
#include "cyber/inspect/testing/inspect_test_messages.pb.h"
#include "cyber/node/node.h"
#include "cyber/record/mcap/mcap_writer.h"
#include "cyber/record/recorder.h"
#include "cyber/runtime/runtime.h"
#include "cyber/transport/dds/dds_transport.h"

namespace cyber {
namespace {

struct Args {
  std::string role = "recorder";
  int channels = 10;
  double hz = 1000;
  size_t size = 64;
  double seconds = 10;
  bool sweep = false;
  int disk_mib = 0;
  uint32_t domain = 0;
  std::string dir = "/tmp";
  std::string compression = "zstd";
};

Args Parse(int argc, char** argv) {
  Args a;
  a.domain = 150 + static_cast<uint32_t>(getpid() % 50);
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&](const char* name) -> const char* {
      std::string prefix = absl::StrCat("--", name, "=");
      return s.rfind(prefix, 0) == 0 ? argv[i] + prefix.size() : nullptr;
    };
    const char* v;
    bool ok = true;
    if ((v = value("role"))) a.role = v;
    else if ((v = value("channels"))) ok = absl::SimpleAtoi(v, &a.channels) && a.channels > 0;
    else if ((v = value("hz"))) ok = absl::SimpleAtod(v, &a.hz) && a.hz > 0;
    else if ((v = value("size"))) ok = absl::SimpleAtoi(v, &a.size);
    else if ((v = value("seconds"))) ok = absl::SimpleAtod(v, &a.seconds) && a.seconds > 0;
    else if ((v = value("disk_mib"))) ok = absl::SimpleAtoi(v, &a.disk_mib) && a.disk_mib > 0;
    else if ((v = value("domain"))) ok = absl::SimpleAtoi(v, &a.domain);
    else if ((v = value("dir"))) a.dir = v;
    else if ((v = value("compression"))) a.compression = v;
    else if (s == "--sweep") a.sweep = true;
    else ok = false;
    if (!ok) {
      std::fprintf(stderr, "record_throughput: bad argument %s\n", argv[i]);
      std::exit(2);
    }
  }
  return a;
}

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// --role=writer: waits for "go" on stdin, writes, prints "sent N", waits
// for EOF.
int WriterProcess(const Args& a) {
  dds::DdsTransportOptions t;
  t.domain_id = a.domain;
  t.process_name = "bench_writer";
  Runtime::Options o;
  o.name = "bench_writer";
  o.remote = std::make_shared<dds::DdsTransport>(t);
  Runtime rt(std::move(o));
  int rc = 0;
  {
    Node node("bench_writer", rt.scheduler(), rt.bus());
    ChannelQos qos;
    qos.depth = 1024;
    std::vector<std::shared_ptr<cyber::Writer<inspect_test::Probe>>> writers;
    for (int c = 0; c < a.channels; ++c) {
      auto w = node.TryCreateWriter<inspect_test::Probe>(absl::StrCat("/bench/ch", c), qos);
      if (!w.ok()) {
        std::fprintf(stderr, "writer: %s\n", std::string(w.status().message()).c_str());
        return 1;
      }
      writers.push_back(*w);
    }
    auto announcer = graph::AnnounceRuntime(rt);
    if (!announcer.ok()) return 1;
    std::printf("ready\n");
    std::fflush(stdout);
    char line[16];
    if (std::fgets(line, sizeof(line), stdin) == nullptr) return 1;
    // Incompressible, as camera images and point clouds nearly are: the
    // figure is not flattered by zstd on a run of one byte.
    std::string payload(a.size, '\0');
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (char& ch : payload) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      ch = static_cast<char>(x);
    }
    const auto period = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / a.hz));
    const auto start = std::chrono::steady_clock::now();
    const uint64_t periods = static_cast<uint64_t>(a.seconds * a.hz);
    uint64_t sent = 0;
    inspect_test::Probe p;
    p.set_payload(payload);
    for (uint64_t k = 1; k <= periods; ++k) {
      std::this_thread::sleep_until(start + k * period);
      p.set_seq(k);
      for (auto& w : writers) {
        if (w->Write(p)) ++sent;
      }
    }
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("sent %lu in %.3f s\n", static_cast<unsigned long>(sent), took);
    std::fflush(stdout);
    while (std::fgets(line, sizeof(line), stdin) != nullptr) {
    }
    announcer->reset();
    node.Shutdown();
  }
  rt.Shutdown();
  return rc;
}

struct Child {
  pid_t pid = -1;
  std::FILE* in = nullptr;   // its stdin
  std::FILE* out = nullptr;  // its stdout
};

Child StartWriter(const char* self, const Args& a) {
  int to[2], from[2];
  if (pipe(to) != 0 || pipe(from) != 0) std::exit(1);
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    close(to[1]);
    close(from[0]);
    std::vector<std::string> args = {self,
                                     "--role=writer",
                                     absl::StrCat("--channels=", a.channels),
                                     absl::StrCat("--hz=", a.hz),
                                     absl::StrCat("--size=", a.size),
                                     absl::StrCat("--seconds=", a.seconds),
                                     absl::StrCat("--domain=", a.domain)};
    std::vector<char*> argv;
    for (std::string& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    execv(self, argv.data());
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  c.in = fdopen(to[1], "w");
  c.out = fdopen(from[0], "r");
  return c;
}

struct Result {
  uint64_t sent = 0, received = 0, lost = 0, dropped = 0;
  double cpu_us_per_message = 0, core_share = 0, seconds = 0;
  uint64_t file_bytes = 0, peak_queue = 0;
};

// One run; false if it could not be set up.
bool RunOnce(const char* self, const Args& a, graph::DomainGraph& graph, Result* r) {
  Child child = StartWriter(self, a);
  char line[256];
  if (std::fgets(line, sizeof(line), child.out) == nullptr) return false;  // "ready"
  record::RecorderOptions options;
  options.all = true;
  options.output.path = absl::StrCat(a.dir, "/record_throughput.", getpid(), ".mcap");
  auto compression = record::ParseMcapCompression(a.compression);
  if (!compression.ok()) {
    std::fprintf(stderr, "%s\n", std::string(compression.status().message()).c_str());
    return false;
  }
  options.output.mcap.compression = *compression;
  auto recorder = record::Recorder::Start(&graph, options);
  if (!recorder.ok()) {
    std::fprintf(stderr, "%s\n", std::string(recorder.status().message()).c_str());
    return false;
  }
  absl::Time deadline = SteadyNow() + absl::Seconds(30);
  while (SteadyNow() < deadline) {
    record::RecorderStats s = (*recorder)->Stats();
    if (static_cast<int>(s.channels.size()) >= a.channels && s.waiting.empty()) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::SleepFor(absl::Seconds(1));  // the writers match the recorder's readers
  double cpu0 = CpuSeconds();
  absl::Time t0 = SteadyNow();
  std::fputs("go\n", child.in);
  std::fflush(child.in);
  if (std::fgets(line, sizeof(line), child.out) == nullptr) return false;  // "sent N in S s"
  unsigned long sent = 0;
  double took = 0;
  std::sscanf(line, "sent %lu in %lf", &sent, &took);
  r->sent = sent;
  // What is in flight arrives: wait until the count stops moving (≤ 5 s).
  uint64_t last = 0;
  for (int i = 0; i < 50; ++i) {
    record::RecorderStats s = (*recorder)->Stats();
    uint64_t n = 0;
    for (const auto& [c, st] : s.channels) n += st.received + st.dropped;
    if (n >= sent || (n == last && i > 5)) break;
    last = n;
    absl::SleepFor(absl::Milliseconds(100));
  }
  absl::Status stopped = (*recorder)->Stop();
  double cpu1 = CpuSeconds();
  r->seconds = absl::ToDoubleSeconds(SteadyNow() - t0);
  record::RecorderStats s = (*recorder)->Stats();
  for (const auto& [c, st] : s.channels) {
    r->received += st.received;
    r->lost += st.lost;
    r->dropped += st.dropped;
  }
  r->file_bytes = s.bytes_written;
  r->peak_queue = s.peak_queued_bytes;
  r->cpu_us_per_message = r->received == 0 ? 0 : (cpu1 - cpu0) * 1e6 / r->received;
  r->core_share = (cpu1 - cpu0) / r->seconds;
  std::fclose(child.in);
  std::fclose(child.out);
  int status;
  waitpid(child.pid, &status, 0);
  for (const std::string& f : s.files) std::remove(f.c_str());
  return stopped.ok();
}

void Print(const Args& a, const Result& r) {
  std::printf(
      "%d ch x %.0f Hz x %zu B for %.0f s (%s): sent %lu, recorded %lu, lost %lu, dropped %lu, "
      "missing %ld; recorder CPU %.2f us/message (%.0f%% of a core), peak queue %.1f KiB, "
      "file %.2f MiB\n",
      a.channels, a.hz, a.size, a.seconds, a.compression.c_str(), static_cast<unsigned long>(r.sent),
      static_cast<unsigned long>(r.received), static_cast<unsigned long>(r.lost),
      static_cast<unsigned long>(r.dropped), static_cast<long>(r.sent - r.received),
      r.cpu_us_per_message, 100 * r.core_share, r.peak_queue / 1024.0, r.file_bytes / 1048576.0);
  std::fflush(stdout);
}

// McapWriter's own rate (64 KiB messages into 1 MiB uncompressed chunks,
// then fsync) against dd's with 1 MiB blocks and fdatasync, same bytes,
// same directory.
void Disk(const Args& a) {
  std::string path = absl::StrCat(a.dir, "/record_throughput_disk.", getpid(), ".mcap");
  record::McapWriterOptions o;
  o.compression = record::McapCompression::kNone;
  auto w = record::McapWriter::Open(path, o);
  if (!w.ok()) return;
  auto schema = (*w)->AddSchema("bench.Blob", "protobuf", "");
  auto channel = (*w)->AddChannel("/bench/blob", *schema, "protobuf", {});
  std::string blob(64 * 1024, 'x');
  uint64_t n = uint64_t{static_cast<uint64_t>(a.disk_mib)} * 16;
  absl::Time t0 = SteadyNow();
  for (uint64_t i = 0; i < n; ++i) {
    (void)(*w)->Write({*channel, static_cast<uint32_t>(i), i, i, blob});
  }
  (void)(*w)->Close();
  int fd = open(path.c_str(), O_RDONLY);
  fsync(fd);
  close(fd);
  double ours = absl::ToDoubleSeconds(SteadyNow() - t0);
  std::remove(path.c_str());
  std::string dd_path = absl::StrCat(a.dir, "/record_throughput_dd.", getpid());
  std::string cmd = absl::StrCat("dd if=/dev/zero of=", dd_path, " bs=1M count=", a.disk_mib,
                                 " conv=fdatasync status=none");
  t0 = SteadyNow();
  int rc = std::system(cmd.c_str());
  double dd = absl::ToDoubleSeconds(SteadyNow() - t0);
  std::remove(dd_path.c_str());
  if (rc != 0) return;
  std::printf("disk, %d MiB in %s: McapWriter %.0f MiB/s, dd bs=1M %.0f MiB/s (ours/dd = %.2f)\n",
              a.disk_mib, a.dir.c_str(), a.disk_mib / ours, a.disk_mib / dd, dd / ours);
}

}  // namespace
}  // namespace cyber

int main(int argc, char** argv) {
  using namespace cyber;  // NOLINT
  Args a = Parse(argc, argv);
  if (a.role == "writer") return WriterProcess(a);
  if (a.disk_mib > 0) {
    Disk(a);
    return 0;
  }
  graph::DomainGraphOptions options;
  options.transport.domain_id = a.domain;
  options.transport.process_name = "record_throughput";
  options.domain_source = absl::StrCat("--domain=", a.domain);
  auto graph = graph::DomainGraph::Join(options);
  if (!graph.ok()) {
    std::fprintf(stderr, "%s\n", std::string(graph.status().message()).c_str());
    return 1;
  }
  std::vector<double> rates = {a.hz};
  if (a.sweep) rates = {1000, 2000, 4000, 8000, 16000};
  int failures = 0;
  for (double hz : rates) {
    Args run = a;
    run.hz = hz;
    Result r;
    if (!RunOnce(argv[0], run, **graph, &r)) {
      std::printf("%.0f Hz: the run could not be set up\n", hz);
      ++failures;
      continue;
    }
    Print(run, r);
    if (a.sweep && r.received < r.sent) {
      std::printf("loss begins at or below %.0f Hz per channel (%d channels)\n", hz, a.channels);
      break;
    }
  }
  (*graph)->Leave();
  return failures == 0 ? 0 : 1;
}
