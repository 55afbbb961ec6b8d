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
//   dds_test_peer serve <domain>       serves /test/add (AddRequest ->
//                                      AddResponse: the sum and its pid),
//                                      sleeping work_ns first; prints
//                                      "request <a> <b>" as each one begins
//                                      (service_cross_process_test.cc)
//
// All print "ready" once their endpoints exist and run until stdin closes.

#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cyber/transport/dds/testing/peer_main.h"
#include "cyber/transport/dds/testing/service_messages.pb.h"
#include "cyber/transport/dds/testing/test_messages.pb.h"
#include "cyber/node/node.h"
#include "scheduler/croutine.h"

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

int Echo(Runtime* rt, bool transient) {
  Node node("echo", rt->scheduler(), rt->bus());
  auto writer = node.TryCreateWriter<Ping>("/pong");
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

int Serve(Runtime* rt) {
  Node node("adder", rt->scheduler(), rt->bus());
  auto service = node.TryCreateService<AddRequest, AddResponse>(
      "/test/add",
      [](const std::shared_ptr<AddRequest>& req, std::shared_ptr<AddResponse>& resp) {
        Say(absl::StrCat("request ", req->a(), " ", req->b()));
        if (req->work_ns() > 0) {
          scheduler::CRoutine::SleepFor(absl::Nanoseconds(req->work_ns()));
        }
        resp->set_sum(req->a() + req->b());
        resp->set_server_pid(getpid());
      });
  if (!service.ok()) {
    Say(absl::StrCat("error ", service.status().message()));
    return 1;
  }
  Say("ready");
  WaitForStdinEof();
  const ServiceStats s = (*service)->stats();
  std::fprintf(stderr, "peer service requests %lu responses %lu send failures %lu\n",
               (unsigned long)s.requests, (unsigned long)s.responses,
               (unsigned long)s.send_failures);
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
  if (args.mode == "telemetry") rc = TelemetryOnPing(rt.get());
  if (args.mode == "telemetry_reader") rc = TelemetryReaderOnPing(rt.get());
  if (args.mode == "serve") rc = Serve(rt.get());
  rt->Shutdown();
  return rc;
}
