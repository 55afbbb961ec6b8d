// The other process of the cross-process tests (cross_process_test.cc).
//
//   dds_test_peer echo <domain>        reads /ping, writes each back on /pong
//   dds_test_peer echo_transient <domain>   the same, reading /ping as a
//                                      transient-local late joiner
//   dds_test_peer telemetry <domain>   writes Telemetry (another type) on
//                                      /ping; prints "conflict <text>" once it
//                                      sees the test's Ping reader
//   dds_test_peer telemetry_reader <domain>
//                                      reads Telemetry (another type) on
//                                      /ping; on the line "close" on stdin
//                                      closes that reader (its endpoint
//                                      leaves discovery, the process stays)
//                                      and prints "closed"
//   dds_test_peer origins <domain>     reads /ping straight from the
//                                      transport (reliable); prints
//                                      "origin <seq> <source_time_ns>
//                                      <sender pid> <sender process>
//                                      <writer guid hex>" per sample
//   dds_test_peer serve <domain> [service=<name>] [concurrency=<n>]
//                        [queue_depth=<n>]
//                                      serves <name> (default /test/add;
//                                      AddRequest -> AddResponse: the sum and
//                                      its pid) and the deferred
//                                      <name>_deferred, both with these
//                                      ServiceOptions; each
//                                      request's behavior says how it is
//                                      answered (service_messages.proto);
//                                      prints "request <a> <b>" as each
//                                      callback begins; commands on stdin:
//                                      "release" and "stats" (Serve below)
//                                      (service_cross_process_test.cc)
//
// All print "ready" once their endpoints exist and run until stdin closes.

#include <algorithm>
#include <cstring>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cyber/common/mutex.h"
#include "cyber/transport/dds/testing/peer_main.h"
#include "cyber/transport/dds/testing/service_messages.pb.h"
#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "cyber/node/loan_writer.h"
#include "cyber/node/node.h"
#include "scheduler/croutine.h"
#include "timer/timer.h"

namespace cyber {
namespace dds_test {
namespace {

// Whether /pong has a reader in another process.
bool PongMatched(Runtime* rt) {
  for (const RemoteChannelStats& s : rt->remote()->ChannelStats()) {
    if (s.channel == "/pong" && !s.remote_readers.empty()) return true;
  }
  return false;
}

// Answers each /ping with the same message on /pong. `shared_bytes` > 0:
// both channels with data sharing up to that many bytes.
int Echo(Runtime* rt, bool transient, uint32_t shared_bytes = 0) {
  Node node("echo", rt->scheduler(), rt->bus());
  ChannelQos pong_qos;
  pong_qos.data_sharing_max_bytes = shared_bytes;
  auto writer = node.TryCreateWriter<Ping>("/pong", pong_qos);
  if (!writer.ok()) {
    Say(absl::StrCat("error ", writer.status().message()));
    return 1;
  }
  std::shared_ptr<Writer<Ping>> pong = *writer;
  if (transient) {
    // The replayed pings arrive as soon as /ping matches; their pongs reach
    // the test only once /pong has matched its reader (a volatile channel
    // keeps nothing for it). So /ping is read only after that, bounded.
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    while (!PongMatched(rt) && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(5));
    }
  }
  ReaderConfig config;
  config.channel_name = "/ping";
  config.pending_queue_size = 1000;
  if (transient) config.qos_profile.durability = ChannelQos::Durability::kTransientLocal;
  config.qos_profile.data_sharing_max_bytes = shared_bytes;
  auto reader = node.TryCreateReader<Ping>(
      config, [pong](const std::shared_ptr<const Ping>& ping) { pong->Write(*ping); });
  if (!reader.ok()) {
    Say(absl::StrCat("error ", reader.status().message()));
    return 1;
  }
  Say("ready");
  WaitForStdinEof();
  for (const RemoteChannelStats& s : rt->remote()->ChannelStats()) {
    std::fprintf(stderr, "peer stats %s sent %lu failed %lu received %lu dropped %lu lost %lu\n",
                 s.channel.c_str(), (unsigned long)s.sent, (unsigned long)s.send_failures,
                 (unsigned long)s.received, (unsigned long)s.dropped_undecodable,
                 (unsigned long)s.lost);
  }
  ReaderStats rs = (*reader)->stats();
  std::fprintf(stderr, "peer reader received %lu delivered %lu overflow %lu\n",
               (unsigned long)rs.received, (unsigned long)rs.delivered,
               (unsigned long)rs.dropped_overflow);
  return 0;
}

int TelemetryOnPing(Runtime* rt) {
  Node node("telemetry", rt->scheduler(), rt->bus());
  auto writer = node.TryCreateWriter<Telemetry>("/ping");
  if (!writer.ok()) {
    Say(absl::StrCat("error ", writer.status().message()));
    return 1;
  }
  Say("ready");
  std::atomic<bool> done{false};
  std::thread watch([&] {
    while (!done.load()) {
      for (const RemoteChannelStats& s : rt->remote()->ChannelStats()) {
        if (!s.type_conflicts.empty()) {
          Say(absl::StrCat("conflict ", s.type_conflicts.front()));
          return;
        }
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  });
  WaitForStdinEof();
  done = true;
  watch.join();
  return 0;
}

int PrintOrigins(Runtime* rt) {
  RemoteEndpoint endpoint;
  endpoint.channel = "/ping";
  endpoint.type_name = Ping::descriptor()->full_name();
  endpoint.qos.reliability = ChannelQos::Reliability::kReliable;
  endpoint.qos.depth = 100;
  endpoint.node = "origins";
  auto inlet = rt->remote()->Subscribe(endpoint, [](const RemoteSample& sample) {
    std::string guid;
    for (uint8_t b : sample.origin.writer_guid) absl::StrAppend(&guid, absl::Hex(b, absl::kZeroPad2));
    const RemotePeer* sender = sample.origin.sender;
    Say(absl::StrCat("origin ", sample.origin.sequence, " ", sample.origin.source_time_ns, " ",
                     sender == nullptr ? -1 : sender->pid, " ",
                     sender == nullptr ? "?" : sender->process, " ", guid));
    return true;
  });
  if (!inlet.ok()) {
    Say(absl::StrCat("error ", inlet.status().message()));
    return 1;
  }
  Say("ready");
  WaitForStdinEof();
  return 0;
}

int TelemetryReaderOnPing(Runtime* rt) {
  // Straight on the transport: a node's reader keeps its channel's DDS
  // reader for the channel's life, and this one must go while the process
  // stays.
  RemoteEndpoint endpoint;
  endpoint.channel = "/ping";
  endpoint.type_name = Telemetry::descriptor()->full_name();
  endpoint.node = "telemetry_reader";
  auto subscription =
      rt->remote()->Subscribe(endpoint, [](const RemoteSample&) { return true; });
  if (!subscription.ok()) {
    Say(absl::StrCat("error ", subscription.status().message()));
    return 1;
  }
  Say("ready");
  while (true) {
    const std::string line = ReadStdinLine();
    if (line.empty()) return 0;  // stdin closed
    if (line == "close") break;
  }
  subscription->reset();  // deletes the DDS reader
  Say("closed");
  WaitForStdinEof();
  return 0;
}

// What the "serve" mode's callbacks share with its command loop.
struct ServeState {
  explicit ServeState(Runtime* runtime) : rt(runtime) {}

  Runtime* const rt;
  // "release": kHold callbacks go on (until "rearm").
  std::atomic<bool> released{false};
  // Callbacks begun, running now, and the most ever running at once (of
  // both services).
  std::atomic<uint64_t> runs{0};
  std::atomic<int> inside{0};
  std::atomic<int> max_inside{0};

  // mu protects the following state.
  Mutex mu;
  // kAnswerFromThread: answered by the command loop on "release".
  std::vector<std::pair<ServiceResponder<AddResponse>, AddResponse>> held
      ABSL_GUARDED_BY(mu);
  // kAnswerFromTimer: each answers once; kept until the mode ends.
  std::vector<std::unique_ptr<Timer>> timers ABSL_GUARDED_BY(mu);
};

// Counts one callback while it runs.
class Inside {
 public:
  explicit Inside(ServeState* state) : state_(state) {
    state_->runs.fetch_add(1);
    const int now = state_->inside.fetch_add(1) + 1;
    int max = state_->max_inside.load();
    while (now > max && !state_->max_inside.compare_exchange_weak(max, now)) {
    }
  }
  ~Inside() { state_->inside.fetch_sub(1); }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;

 private:
  ServeState* const state_;
};

AddResponse Sum(const AddRequest& req, const std::string& answered_by) {
  AddResponse r;
  r.set_sum(req.a() + req.b());
  r.set_server_pid(getpid());
  r.set_answered_by(answered_by);
  return r;
}

void Hold(const ServeState& state) {
  while (!state.released.load()) scheduler::CRoutine::SleepFor(absl::Milliseconds(1));
}

void Work(const AddRequest& req) {
  if (req.work_ns() > 0) scheduler::CRoutine::SleepFor(absl::Nanoseconds(req.work_ns()));
}

void Check(const absl::Status& status) {
  if (!status.ok()) Say(absl::StrCat("error ", status.message()));
}

std::string StatsOf(const std::string& prefix, const ServiceStats& s) {
  return absl::StrCat(" ", prefix, ".requests=", s.requests, " ", prefix,
                      ".responses=", s.responses, " ", prefix,
                      ".callback_errors=", s.callback_errors, " ", prefix,
                      ".errors=", s.errors, " ", prefix, ".abandoned=", s.abandoned, " ",
                      prefix, ".skipped_past_deadline=", s.skipped_past_deadline, " ",
                      prefix, ".refused_full=", s.refused_full, " ", prefix,
                      ".dropped_oldest=", s.dropped_oldest, " ", prefix,
                      ".pending=", s.pending, " ", prefix, ".in_progress=", s.in_progress,
                      " ", prefix, ".send_failures=", s.send_failures);
}

// Options: service=<name> (and <name>_deferred), concurrency=<n>,
// queue_depth=<n> (both services).
bool ParseServeOptions(const std::vector<std::string>& args, std::string* name,
                       ServiceOptions* options) {
  for (const std::string& arg : args) {
    const std::pair<std::string, std::string> kv = absl::StrSplit(arg, absl::MaxSplits('=', 1));
    if (kv.first == "service" && !kv.second.empty()) {
      *name = kv.second;
      continue;
    }
    uint64_t n = 0;
    if (!absl::SimpleAtoi(kv.second, &n)) return false;
    if (kv.first == "concurrency") {
      options->concurrency = static_cast<int>(n);
    } else if (kv.first == "queue_depth") {
      options->queue_depth = n;
    } else {
      return false;
    }
  }
  return true;
}

int Serve(Runtime* rt, const std::vector<std::string>& args) {
  std::string name = "/test/add";
  ServiceOptions options;
  if (!ParseServeOptions(args, &name, &options)) {
    Say("error bad options for serve");
    return 2;
  }
  ServeState state(rt);
  Node node("adder", rt->scheduler(), rt->bus());
  auto service = node.TryCreateService<AddRequest, AddResponse>(
      name,
      [&state](const std::shared_ptr<AddRequest>& req, std::shared_ptr<AddResponse>& resp) {
        Inside inside(&state);
        Say(absl::StrCat("request ", req->a(), " ", req->b()));
        switch (req->behavior()) {
          case AddRequest::kHold:
            Hold(state);
            break;
          case AddRequest::kThrow:
            throw std::runtime_error(absl::StrCat("no sum for ", req->a()));
          case AddRequest::kNullResponse:
            resp = nullptr;
            return;
          default:
            Work(*req);
        }
        *resp = Sum(*req, "callback");
      },
      options);
  if (!service.ok()) {
    Say(absl::StrCat("error ", service.status().message()));
    return 1;
  }
  auto deferred = node.TryCreateDeferredService<AddRequest, AddResponse>(
      name + "_deferred",
      [&state](const std::shared_ptr<const AddRequest>& req,
               ServiceResponder<AddResponse> responder) {
        Inside inside(&state);
        Say(absl::StrCat("request ", req->a(), " ", req->b()));
        const absl::Duration work = absl::Nanoseconds(req->work_ns());
        switch (req->behavior()) {
          case AddRequest::kHold:
            Hold(state);
            break;
          case AddRequest::kThrow:
            throw std::runtime_error(absl::StrCat("no sum for ", req->a()));
          case AddRequest::kNullResponse:
            Check(responder.Send(std::shared_ptr<const AddResponse>()));
            return;
          case AddRequest::kFailNotFound:
            Check(responder.Fail(absl::NotFoundError(absl::StrCat("no entry for ", req->a()))));
            return;
          case AddRequest::kDropResponder:
            return;
          case AddRequest::kAnswerFromTimer: {
            const AddResponse sum = Sum(*req, "timer");
            auto timer = std::make_unique<Timer>(
                static_cast<uint32_t>(std::max<int64_t>(1, absl::ToInt64Milliseconds(work))),
                [responder, sum] { Check(responder.Send(sum)); }, /*oneshot=*/true);
            timer->Start();
            MutexLock lock(&state.mu);
            state.timers.push_back(std::move(timer));
            return;
          }
          case AddRequest::kAnswerFromRoutine: {
            const AddResponse sum = Sum(*req, "routine");
            state.rt->scheduler()->Async([responder, sum, work] {
              scheduler::CRoutine::SleepFor(work);
              Check(responder.Send(sum));
            });
            return;
          }
          case AddRequest::kAnswerFromThread: {
            MutexLock lock(&state.mu);
            state.held.emplace_back(responder, Sum(*req, "thread"));
            return;
          }
          default:
            Work(*req);
        }
        Check(responder.Send(Sum(*req, "callback")));
      },
      options);
  if (!deferred.ok()) {
    Say(absl::StrCat("error ", deferred.status().message()));
    return 1;
  }
  Say("ready");
  // Commands: "release" (kHold callbacks go on, kAnswerFromThread requests
  // are answered from this thread; prints "released"), "rearm" (kHold
  // callbacks from now on hold again; prints "rearmed"), "stats" (prints
  // "stats" and key=value counts).
  for (std::string line = ReadStdinLine(); !line.empty(); line = ReadStdinLine()) {
    if (line == "release") {
      state.released.store(true);
      std::vector<std::pair<ServiceResponder<AddResponse>, AddResponse>> held;
      {
        MutexLock lock(&state.mu);
        held.swap(state.held);
      }
      for (const auto& [responder, sum] : held) Check(responder.Send(sum));
      Say("released");
    } else if (line == "rearm") {
      state.released.store(false);
      Say("rearmed");
    } else if (line == "stats") {
      Say(absl::StrCat("stats runs=", state.runs.load(), " inside=", state.inside.load(),
                       " max_inside=", state.max_inside.load(),
                       StatsOf("plain", (*service)->stats()),
                       StatsOf("deferred", (*deferred)->stats())));
    } else {
      Say(absl::StrCat("error unknown command ", line));
    }
  }
  // Held callbacks end, so that the services' shutdown does not wait
  // for them forever.
  state.released.store(true);
  const ServiceStats s = (*service)->stats();
  std::fprintf(stderr, "peer service requests %lu responses %lu send failures %lu\n",
               (unsigned long)s.requests, (unsigned long)s.responses,
               (unsigned long)s.send_failures);
  (*service)->Shutdown();
  (*deferred)->Shutdown();
  return 0;
}

// Loaned frames on /camera (cross_process_test's loan tests): frame i is
// kLoanFrameBytes long, starts with i (8 bytes, little-endian) and is
// filled with the byte i & 0xff; one every 10 ms until stdin closes.
constexpr size_t kLoanFrameBytes = size_t{4} << 20;

int LoanCamera(Runtime* rt) {
  Node node("camera", rt->scheduler(), rt->bus());
  LoanWriterOptions options;
  options.slots = 4;
  options.slot_bytes = kLoanFrameBytes;
  auto camera = LoanWriter::Create(&node, "/camera", options);
  if (!camera.ok()) {
    Say(absl::StrCat("error ", camera.status().message()));
    return 1;
  }
  Say(absl::StrCat("ready segment=", (*camera)->segment_name()));
  std::atomic<bool> stop{false};
  std::thread eof([&] {
    WaitForStdinEof();
    stop.store(true);
  });
  for (uint64_t i = 1; !stop.load(); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
    absl::StatusOr<LoanedBuffer> frame = (*camera)->Loan();
    if (!frame.ok()) continue;  // the readers hold every slot: skip a frame
    std::memset(frame->data() + 8, static_cast<int>(i & 0xff), kLoanFrameBytes - 8);
    for (int b = 0; b < 8; ++b) frame->data()[b] = static_cast<uint8_t>(i >> (8 * b));
    const absl::Status sent = (*camera)->Publish(*std::move(frame), kLoanFrameBytes);
    if (!sent.ok()) Say(absl::StrCat("error ", sent.message()));
  }
  eof.join();
  return 0;
}

// Reads /camera and keeps every message (so every slot it was sent stays
// pinned) until stdin closes; says "held N" at each tenth.
int LoanHold(Runtime* rt) {
  Node node("holder", rt->scheduler(), rt->bus());
  Mutex mu;
  std::vector<std::shared_ptr<const SharedBytes>> held;
  ReaderConfig config;
  config.channel_name = "/camera";
  config.pending_queue_size = 100;
  auto reader = node.TryCreateReader<SharedBytes>(
      config, [&](const std::shared_ptr<const SharedBytes>& frame) {
        MutexLock lock(&mu);
        held.push_back(frame);
        Say(absl::StrCat("held ", held.size()));
      });
  if (!reader.ok()) {
    Say(absl::StrCat("error ", reader.status().message()));
    return 1;
  }
  Say("ready");
  WaitForStdinEof();
  (*reader)->Shutdown();
  return 0;
}

}  // namespace
}  // namespace dds_test
}  // namespace cyber

int main(int argc, char** argv) {
  using namespace cyber::dds_test;  // NOLINT
  const PeerArgs args = ParsePeerArgs(argc, argv);
  std::unique_ptr<cyber::Runtime> rt = PeerRuntime(args);
  int rc = 2;
  if (args.mode == "echo") rc = Echo(rt.get(), /*transient=*/false);
  if (args.mode == "echo_transient") rc = Echo(rt.get(), /*transient=*/true);
  if (args.mode == "echo_shared") rc = Echo(rt.get(), /*transient=*/false, kSharedEchoBytes);
  if (args.mode == "telemetry") rc = TelemetryOnPing(rt.get());
  if (args.mode == "telemetry_reader") rc = TelemetryReaderOnPing(rt.get());
  if (args.mode == "origins") rc = PrintOrigins(rt.get());
  if (args.mode == "serve") rc = Serve(rt.get(), args.options);
  if (args.mode == "loan_camera") rc = LoanCamera(rt.get());
  if (args.mode == "loan_hold") rc = LoanHold(rt.get());
  rt->Shutdown();
  return rc;
}
