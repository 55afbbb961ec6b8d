// The other processes of cyber/inspect's cross-process tests: each
// announces itself (AnnounceRuntime) so the tools see it, prints "ready"
// once its endpoints exist and runs until its stdin closes.
//
//   inspect_test_peer rate <domain> <channel> <hz> [<payload bytes>]
//       node "rate_writer" (process "rate_peer") writes a Probe on
//       <channel> at <hz> from a thread on absolute deadlines (start + k *
//       period, no drift, late messages caught up), with a payload of <payload bytes> (default 0)
//   inspect_test_peer serve <domain>
//       node "echo_server" (process "echo_peer") serves /test/echo
//       (EchoRequest -> EchoResponse: the text `repeat` times, its pid);
//       a request with fail_code answers that error, one with hold is
//       never answered (for the caller's timeout)
//   inspect_test_peer cloud <domain>
//       node "cloud_writer" (process "cloud_peer") writes a Cloud on
//       /test/cloud at 20 Hz (header.stamp = its sequence number, three
//       points) and reads /test/probe with a node "cloud_reader"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/graph/runtime_announcer.h"
#include "cyber/inspect/testing/inspect_test_messages.pb.h"
#include "cyber/node/node.h"
#include "cyber/transport/dds/dds_transport.h"
#include "cyber/transport/dds/testing/peer_main.h"
#include "timer/timer.h"

namespace cyber {
namespace inspect_test {
namespace {

using dds_test::Say;

std::unique_ptr<Runtime> MakeRuntime(uint32_t domain, const std::string& process_name) {
  dds::DdsTransportOptions t;
  t.domain_id = domain;
  t.process_name = process_name;
  t.announces_graph = true;  // AnnounceRuntime below
  Runtime::Options o;
  o.name = process_name;
  o.remote = std::make_shared<dds::DdsTransport>(t);
  return std::make_unique<Runtime>(std::move(o));
}

// Keeps the announcer alive while `body` runs; "error ..." and 1 if it
// cannot start.
template <typename Body>
int Announced(Runtime& rt, Body body) {
  auto announcer = graph::AnnounceRuntime(rt);
  if (!announcer.ok()) {
    Say(absl::StrCat("error ", announcer.status().message()));
    return 1;
  }
  const int rc = body();
  announcer->reset();
  return rc;
}

int Rate(Runtime& rt, const std::vector<std::string>& options) {
  double hz = 0;
  size_t payload = 0;
  if (options.size() < 2 || !absl::SimpleAtod(options[1], &hz) || hz <= 0 ||
      (options.size() > 2 && !absl::SimpleAtoi(options[2], &payload))) {
    Say("error usage: rate <domain> <channel> <hz> [<payload bytes>]");
    return 2;
  }
  Node node("rate_writer", rt.scheduler(), rt.bus());
  // A deep queue: a burst of caught-up calls after a stall of the loaded
  // machine is sent, not overwritten in the writer's history, so the rate
  // that arrives is the rate written.
  ChannelQos qos;
  qos.depth = 1024;
  auto writer = node.TryCreateWriter<Probe>(options[0], qos);
  if (!writer.ok()) {
    Say(absl::StrCat("error ", writer.status().message()));
    return 1;
  }
  std::shared_ptr<Writer<Probe>> out = *writer;
  // A thread of its own on absolute deadlines (start + k * period), writing
  // late messages at once instead of skipping them: however the loaded
  // machine delays it, after k periods it has written k messages, so the
  // rate that arrives over seconds is the rate asked for. (A runtime Timer
  // skips a period whose call was starved, and the tests measure the tool,
  // not the writer.)
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> sent{0};
  const std::string bytes(payload, 'x');
  const auto period = std::chrono::nanoseconds(
      static_cast<int64_t>(absl::ToInt64Nanoseconds(absl::Seconds(1) / hz)));
  const auto start = std::chrono::steady_clock::now();
  std::thread writing([&] {
    for (uint64_t k = 1; !stop.load(); ++k) {
      std::this_thread::sleep_until(start + k * period);
      Probe p;
      p.set_seq(k);
      p.set_payload(bytes);
      out->Write(p);
      sent.store(k);
    }
  });
  return Announced(rt, [&] {
    Say("ready");
    dds_test::WaitForStdinEof();
    stop = true;
    writing.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "rate_peer %s: %lu messages in %.3f s\n", options[0].c_str(),
                 static_cast<unsigned long>(sent.load()), seconds);
    node.Shutdown();
    return 0;
  });
}

int Serve(Runtime& rt) {
  Node node("echo_server", rt.scheduler(), rt.bus());
  // Requests held unanswered until the peer exits.
  struct Held {
    Mutex mu;
    std::vector<ServiceResponder<EchoResponse>> responders ABSL_GUARDED_BY(mu);
  } held;
  auto service = node.TryCreateDeferredService<EchoRequest, EchoResponse>(
      "/test/echo", [&](const std::shared_ptr<const EchoRequest>& req,
                        ServiceResponder<EchoResponse> responder) {
        if (req->hold()) {
          MutexLock lock(&held.mu);
          held.responders.push_back(std::move(responder));
          return;
        }
        if (req->fail_code() != 0) {
          (void)responder.Fail(absl::Status(static_cast<absl::StatusCode>(req->fail_code()),
                                      absl::StrCat("echo refuses \"", req->text(), "\"")));
          return;
        }
        EchoResponse resp;
        for (int64_t i = 0; i < std::max<int64_t>(req->repeat(), 1); ++i) {
          resp.mutable_text()->append(req->text());
        }
        resp.set_server_pid(getpid());
        (void)responder.Send(std::move(resp));
      });
  if (!service.ok()) {
    Say(absl::StrCat("error ", service.status().message()));
    return 1;
  }
  return Announced(rt, [&] {
    Say("ready");
    dds_test::WaitForStdinEof();
    node.Shutdown();
    MutexLock lock(&held.mu);
    held.responders.clear();
    return 0;
  });
}

int CloudWriter(Runtime& rt) {
  Node node("cloud_writer", rt.scheduler(), rt.bus());
  Node reader_node("cloud_reader", rt.scheduler(), rt.bus());
  auto writer = node.TryCreateWriter<Cloud>("/test/cloud");
  auto reader = reader_node.TryCreateReader<Probe>(std::string("/test/probe"),
                                                   [](const std::shared_ptr<const Probe>&) {});
  if (!writer.ok() || !reader.ok()) {
    Say(absl::StrCat("error ", writer.status().message(), reader.status().message()));
    return 1;
  }
  std::shared_ptr<Writer<Cloud>> out = *writer;
  int64_t seq = 0;
  TimerOptions t;
  t.name = "cloud_writer";
  t.period = absl::Milliseconds(50);
  t.callback = [out, &seq] {
    Cloud c;
    c.mutable_header()->set_stamp(++seq);
    c.mutable_header()->set_frame_id("base");
    for (int i = 0; i < 3; ++i) {
      Point* p = c.add_points();
      p->set_x(i + 0.5);
      p->set_y(i);
    }
    c.set_kind(Cloud::LIDAR);
    out->Write(c);
  };
  Timer timer(std::move(t));
  return Announced(rt, [&] {
    if (absl::Status s = timer.Schedule(); !s.ok()) {
      Say(absl::StrCat("error ", s.message()));
      return 1;
    }
    Say("ready");
    dds_test::WaitForStdinEof();
    timer.Stop();
    node.Shutdown();
    reader_node.Shutdown();
    return 0;
  });
}

}  // namespace
}  // namespace inspect_test
}  // namespace cyber

int main(int argc, char** argv) {
  using namespace cyber::inspect_test;  // NOLINT
  const cyber::dds_test::PeerArgs args = cyber::dds_test::ParsePeerArgs(argc, argv);
  const std::string process = args.mode == "rate"    ? "rate_peer"
                              : args.mode == "serve" ? "echo_peer"
                                                     : "cloud_peer";
  std::unique_ptr<cyber::Runtime> rt = MakeRuntime(args.domain, process);
  int rc = 2;
  if (args.mode == "rate") rc = Rate(*rt, args.options);
  if (args.mode == "serve") rc = Serve(*rt);
  if (args.mode == "cloud") rc = CloudWriter(*rt);
  rt->Shutdown();
  return rc;
}
