// host_peer: the process the multi-host harness (tools/hosts/) runs on each
// "host" (a network namespace). A plain robot program: cyber::Init, one
// Node on the process runtime, the DDS link with every flag and variable a
// robot program has (CYBER_IP, CYBER_DOMAIN_ID, CYBER_DISCOVERY_SERVER,
// --security), so what the harness proves of it holds for any program.
//
// What it does, by flags (any combination):
//   --write=/a,/b@best_effort   writes Probe messages (seq 0, 1, ...) on
//                               each channel at --rate_hz, --bytes of body
//                               (--payload repeated), --count of them (0:
//                               until stopped); @reliable (the default),
//                               @best_effort (ChannelQos::SensorData()),
//                               @transient_local (reliable, keep last
//                               --transient_depth), @keep_all (reliable,
//                               keep all up to --keep_all_depth unacknowledged)
//   --read=/a,/b@best_effort    reads them, counting per channel
//   --wait_readers=N            writes only once each channel has N
//                               remote readers
//   --write_on_signal           writes one message on each channel per
//                               SIGUSR1 instead
//   --start_on_signal           begins writing on the first SIGUSR1
//   --serve=/svc                serves AddRequest -> AddResponse (the sum)
//   --call=/svc                 calls it every --call_period with
//                               --call_timeout (AsyncCall), numbering calls
//
// What it prints on stdout, one fact a line, for the harness to wait on
// (each line is a complete fact; the harness greps the last of a kind):
//   ready
//   sent <channel> count=<n> readers=<remote readers now>
//   recv <channel> count=<distinct seqs> first=<seq> last=<seq>
//        missing=<seqs between first and last never received> dup=<n>
//        lost=<what the transport counted lost> writers=<remote writers now>
//        lat_p50_us=<n> lat_p99_us=<n>
//   call <id> <status code>          (once per call: its one outcome)
//   calls sent=<n> ended=<n> twice=<outcomes beyond the first>
//   lost <peer>                      (a peer declared dead after its lease)
//   done <channel>                   (--count reached)
// every --stats_period, and once more after SIGINT/SIGTERM ("final" first),
// when it shuts down cleanly. Errors: "error <message>" and exit 1.
//
// Threads: a writer thread, a stats thread, the runtime's routines
// (reader and client callbacks) and Fast-DDS's; every shared count below
// is under mu_ or atomic.

#include <time.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/init/init.h"
#include "cyber/node/node.h"
#include "cyber/runtime/process_runtime.h"
#include "gflags/gflags.h"
#include "tests/hosts/host_messages.pb.h"

DEFINE_string(write, "", "channels to write, comma separated, each [@qos]");
DEFINE_string(read, "", "channels to read, comma separated, each [@qos]");
DEFINE_double(rate_hz, 100, "messages a second on each written channel");
DEFINE_int64(count, 0, "messages to write on each channel; 0: until stopped");
DEFINE_int32(bytes, 64, "body bytes of each message");
DEFINE_string(payload, "probe", "the text the body repeats");
DEFINE_int32(transient_depth, 4, "depth of @transient_local channels");
DEFINE_int32(keep_all_depth, 2000, "unacknowledged messages a @keep_all writer holds");
DEFINE_bool(write_on_signal, false,
            "write one message on each channel per SIGUSR1 instead of at --rate_hz");
DEFINE_bool(start_on_signal, false,
            "begin writing at --rate_hz on the first SIGUSR1 (once the readers are ready)");
DEFINE_int32(wait_readers, 0,
             "write only once every written channel has this many remote readers");
DEFINE_string(serve, "", "a service to serve (AddRequest -> AddResponse)");
DEFINE_string(call, "", "a service to call");
DEFINE_string(call_period, "200ms", "time between calls");
DEFINE_string(call_timeout, "2s", "each call's timeout");
DEFINE_string(stats_period, "250ms", "time between stats lines");

namespace cyber {
namespace hosts {
namespace {

// SIGUSR1s received (--write_on_signal).
std::atomic<uint64_t> g_write_signals{0};
void OnWriteSignal(int) { g_write_signals.fetch_add(1); }

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Mutex g_out_mu;
void Say(const std::string& line) {
  MutexLock lock(&g_out_mu);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

absl::Duration DurationFlag(const std::string& name, const std::string& value) {
  absl::Duration d;
  if (!absl::ParseDuration(value, &d) || d <= absl::ZeroDuration()) {
    Say(absl::StrCat("error flag --", name, ": \"", value, "\" is not a positive duration"));
    std::exit(1);
  }
  return d;
}

struct ChannelSpec {
  std::string channel;
  ChannelQos qos;
};

std::vector<ChannelSpec> ParseChannels(const std::string& flag, const std::string& list) {
  std::vector<ChannelSpec> out;
  for (absl::string_view item : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(item, absl::MaxSplits('@', 1));
    ChannelSpec spec;
    spec.channel = parts[0];
    const std::string qos = parts.size() > 1 ? parts[1] : "reliable";
    if (qos == "best_effort") {
      spec.qos = ChannelQos::SensorData();
    } else if (qos == "transient_local") {
      spec.qos.durability = ChannelQos::Durability::kTransientLocal;
      spec.qos.depth = static_cast<uint32_t>(FLAGS_transient_depth);
    } else if (qos == "keep_all") {
      spec.qos.history = ChannelQos::History::kKeepAll;
      spec.qos.depth = static_cast<uint32_t>(FLAGS_keep_all_depth);
    } else if (qos != "reliable") {
      Say(absl::StrCat("error flag --", flag, ": qos \"", qos,
                       "\" is not reliable, best_effort, transient_local or keep_all"));
      std::exit(1);
    }
    out.push_back(spec);
  }
  return out;
}

// What a reader has seen on one channel.
struct ReadCount {
  std::set<uint64_t> seqs;  // distinct
  uint64_t dup = 0;
  std::vector<int64_t> latency_us;  // the last 10,000
};

class Peer {
 public:
  Peer() : node_("host_peer") {}

  bool Start() {
    for (const ChannelSpec& spec : ParseChannels("read", FLAGS_read)) {
      if (!AddReader(spec)) return false;
    }
    for (const ChannelSpec& spec : ParseChannels("write", FLAGS_write)) {
      auto writer = node_.TryCreateWriter<Probe>(spec.channel, spec.qos);
      if (!writer.ok()) return Fail(writer.status());
      writers_.emplace_back(spec.channel, *writer);
      MutexLock lock(&mu_);
      sent_.emplace(spec.channel, 0);
    }
    if (!FLAGS_serve.empty()) {
      auto service = node_.TryCreateService<AddRequest, AddResponse>(
          FLAGS_serve,
          [](const std::shared_ptr<AddRequest>& req, std::shared_ptr<AddResponse>& resp) {
            resp->set_sum(req->a() + req->b());
          });
      if (!service.ok()) return Fail(service.status());
      service_ = *service;
    }
    if (!FLAGS_call.empty()) {
      auto client = node_.TryCreateClient<AddRequest, AddResponse>(FLAGS_call);
      if (!client.ok()) return Fail(client.status());
      client_ = *client;
    }
    if (RemoteTransport* remote = ProcessRuntime()->remote()) {
      lost_listener_ = remote->AddPeerLostListener([](const RemotePeer& peer, bool crashed) {
        if (crashed) Say(absl::StrCat("lost ", peer.ToString()));
      });
    }
    Say("ready");
    stats_thread_ = std::thread([this] { StatsLoop(); });
    if (!writers_.empty()) writer_thread_ = std::thread([this] { WriteLoop(); });
    if (client_ != nullptr) caller_thread_ = std::thread([this] { CallLoop(); });
    return true;
  }

  void Stop() {
    stop_.store(true);
    if (writer_thread_.joinable()) writer_thread_.join();
    if (caller_thread_.joinable()) caller_thread_.join();
    if (stats_thread_.joinable()) stats_thread_.join();
    Say("final");
    PrintStats();
    if (RemoteTransport* remote = ProcessRuntime()->remote()) {
      remote->RemovePeerLostListener(lost_listener_);
    }
    node_.Shutdown();
  }

 private:
  bool Fail(const absl::Status& status) {
    Say(absl::StrCat("error ", status.message()));
    return false;
  }

  bool AddReader(const ChannelSpec& spec) {
    {
      MutexLock lock(&mu_);
      read_[spec.channel];
    }
    ReaderConfig config;
    config.channel_name = spec.channel;
    config.pending_queue_size = 100000;  // a reader here never drops
    config.qos_profile = spec.qos;
    const std::string channel = spec.channel;
    auto reader = node_.TryCreateReader<Probe>(
        config, [this, channel](const std::shared_ptr<const Probe>& m) {
          const int64_t latency_us = (MonotonicNs() - m->sent_ns()) / 1000;
          MutexLock lock(&mu_);
          ReadCount& c = read_[channel];
          if (!c.seqs.insert(m->seq()).second) ++c.dup;
          if (c.latency_us.size() < 10000) c.latency_us.push_back(latency_us);
        });
    if (!reader.ok()) return Fail(reader.status());
    readers_.push_back(*reader);
    return true;
  }

  // What the transport counted as lost on `channel` (best effort: the
  // sequence numbers DDS saw skipped).
  static uint64_t TransportLost(const std::string& channel) {
    RemoteTransport* remote = ProcessRuntime()->remote();
    if (remote == nullptr) return 0;
    for (const RemoteChannelStats& s : remote->ChannelStats()) {
      if (s.channel == channel) return s.lost;
    }
    return 0;
  }

  // Remote readers (or writers) of `channel` now.
  static size_t RemoteEnds(const std::string& channel, bool writers) {
    RemoteTransport* remote = ProcessRuntime()->remote();
    if (remote == nullptr) return 0;
    for (const RemoteChannelStats& s : remote->ChannelStats()) {
      if (s.channel == channel) return writers ? s.remote_writers.size() : s.remote_readers.size();
    }
    return 0;
  }

  void WriteLoop() {
    if (FLAGS_wait_readers > 0) {
      for (const auto& w : writers_) {
        while (!stop_.load() &&
               RemoteEnds(w.first, /*writers=*/false) < static_cast<size_t>(FLAGS_wait_readers)) {
          absl::SleepFor(absl::Milliseconds(10));
        }
      }
    }
    while (FLAGS_start_on_signal && !stop_.load() && g_write_signals.load() == 0) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    std::string body;
    const std::string unit = FLAGS_payload.empty() ? std::string("x") : FLAGS_payload;
    while (body.size() < static_cast<size_t>(std::max(FLAGS_bytes, 0))) body += unit;
    body.resize(static_cast<size_t>(std::max(FLAGS_bytes, 0)));
    const absl::Duration period = absl::Seconds(1.0 / std::max(FLAGS_rate_hz, 0.001));
    absl::Time next = absl::Now();
    for (uint64_t seq = 0; !stop_.load(); ++seq) {
      if (FLAGS_write_on_signal) {
        while (!stop_.load() && g_write_signals.load() <= seq) {
          absl::SleepFor(absl::Milliseconds(10));
        }
        if (stop_.load()) return;
      }
      if (FLAGS_count > 0 && seq >= static_cast<uint64_t>(FLAGS_count)) {
        for (const auto& w : writers_) Say(absl::StrCat("done ", w.first));
        return;
      }
      for (const auto& w : writers_) {
        Probe p;
        p.set_seq(seq);
        p.set_body(body);
        p.set_sent_ns(MonotonicNs());
        w.second->Write(p);
        MutexLock lock(&mu_);
        ++sent_[w.first];
      }
      if (FLAGS_write_on_signal) continue;
      next += period;
      const absl::Time now = absl::Now();
      if (next > now) {
        absl::SleepFor(next - now);
      } else if (now - next > absl::Seconds(1)) {
        next = now;  // far behind (a stalled machine): no burst to catch up
      }
    }
  }

  void CallLoop() {
    const absl::Duration period = DurationFlag("call_period", FLAGS_call_period);
    const absl::Duration timeout = DurationFlag("call_timeout", FLAGS_call_timeout);
    for (int64_t id = 1; !stop_.load(); ++id) {
      auto req = std::make_shared<AddRequest>();
      req->set_a(id);
      req->set_b(1);
      {
        MutexLock lock(&mu_);
        ++calls_sent_;
      }
      client_->AsyncCall(req, timeout,
                         [this, id](absl::StatusOr<std::shared_ptr<const AddResponse>> r) {
                           std::string outcome =
                               r.ok() ? ((*r)->sum() == id + 1 ? "OK" : "WRONG_SUM")
                                      : absl::StatusCodeToString(r.status().code());
                           {
                             MutexLock lock(&mu_);
                             if (!ended_.insert(id).second) ++twice_;
                           }
                           Say(absl::StrCat("call ", id, " ", outcome));
                         });
      absl::SleepFor(period);
    }
  }

  void StatsLoop() {
    const absl::Duration period = DurationFlag("stats_period", FLAGS_stats_period);
    while (!stop_.load()) {
      PrintStats();
      absl::SleepFor(period);
    }
  }

  void PrintStats() {
    std::vector<std::string> lines;
    std::map<std::string, uint64_t> sent;
    std::map<std::string, ReadCount> read;
    uint64_t calls_sent = 0, ended = 0, twice = 0;
    {
      MutexLock lock(&mu_);
      sent = sent_;
      read = read_;
      calls_sent = calls_sent_;
      ended = ended_.size();
      twice = twice_;
    }
    for (const auto& s : sent) {
      lines.push_back(absl::StrCat("sent ", s.first, " count=", s.second,
                                   " readers=", RemoteEnds(s.first, /*writers=*/false)));
    }
    for (auto& r : read) {
      ReadCount& c = r.second;
      const uint64_t first = c.seqs.empty() ? 0 : *c.seqs.begin();
      const uint64_t last = c.seqs.empty() ? 0 : *c.seqs.rbegin();
      const uint64_t missing = c.seqs.empty() ? 0 : (last - first + 1) - c.seqs.size();
      std::sort(c.latency_us.begin(), c.latency_us.end());
      auto pct = [&](double q) -> int64_t {
        if (c.latency_us.empty()) return -1;
        return c.latency_us[static_cast<size_t>(q * (c.latency_us.size() - 1))];
      };
      lines.push_back(absl::StrCat("recv ", r.first, " count=", c.seqs.size(), " first=", first,
                                   " last=", last, " missing=", missing, " dup=", c.dup,
                                   " lost=", TransportLost(r.first),
                                   " writers=", RemoteEnds(r.first, /*writers=*/true),
                                   " lat_p50_us=", pct(0.5), " lat_p99_us=", pct(0.99)));
    }
    if (client_ != nullptr) {
      lines.push_back(absl::StrCat("calls sent=", calls_sent, " ended=", ended, " twice=", twice));
    }
    for (const std::string& l : lines) Say(l);
  }

  Node node_;
  std::vector<std::pair<std::string, std::shared_ptr<Writer<Probe>>>> writers_;
  std::vector<std::shared_ptr<Reader<Probe>>> readers_;
  std::shared_ptr<Service<AddRequest, AddResponse>> service_;
  std::shared_ptr<Client<AddRequest, AddResponse>> client_;
  uint64_t lost_listener_ = 0;
  std::atomic<bool> stop_{false};
  std::thread writer_thread_, caller_thread_, stats_thread_;

  Mutex mu_;
  std::map<std::string, uint64_t> sent_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ReadCount> read_ ABSL_GUARDED_BY(mu_);
  uint64_t calls_sent_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<int64_t> ended_ ABSL_GUARDED_BY(mu_);
  uint64_t twice_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace
}  // namespace hosts
}  // namespace cyber

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  std::signal(SIGUSR1, &cyber::hosts::OnWriteSignal);
  if (!cyber::Init(argv[0])) return 1;
  int rc = 0;
  {
    cyber::hosts::Peer peer;
    if (peer.Start()) {
      cyber::WaitForShutdown();
      peer.Stop();
    } else {
      rc = 1;
    }
  }
  cyber::Shutdown();
  return rc;
}
