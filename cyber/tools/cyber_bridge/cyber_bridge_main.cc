// cyber_bridge: the running graph in Foxglove. Serves Foxglove's WebSocket
// protocol (foxglove.websocket.v1) on ws://127.0.0.1:8765: every channel and
// service of the DDS domain (CYBER_DOMAIN_ID) is advertised with its
// protobuf schemas, a channel is read only while a Foxglove client
// subscribes to it, and clients may publish and call services.
// Runs until SIGINT or SIGTERM. docs/tools/cyber_bridge.md has the rest.

#include <signal.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cyber/bridge/domain_graph_source.h"
#include "cyber/bridge/foxglove_bridge.h"
#include "cyber/graph/domain_graph.h"
#include "gflags/gflags.h"
#include "glog/logging.h"

DEFINE_int32(port, 8765, "TCP port to listen on (0: any free port, printed at start)");
DEFINE_string(address, "127.0.0.1",
              "address to listen on; the default lets only this host connect. "
              "0.0.0.0 (or ::) serves every interface: anyone who reaches the port "
              "reads every channel of the domain, publishes on any and calls any "
              "service");
DEFINE_string(run_for, "0s",
              "stop after this long, as after SIGINT (0s: run until a signal); for "
              "scripts and tests, so a bridge never outlives them");
DEFINE_int32(max_queued_messages, 1000,
             "messages waiting per client before more are dropped (a slow client "
             "never slows the graph)");

namespace {

constexpr char kUsage[] =
    "serves the running graph to Foxglove (WebSocket, foxglove.websocket.v1)\n"
    "\n"
    "usage: cyber_bridge [--port=8765] [--address=127.0.0.1] [--run_for=0s]\n"
    "\n"
    "then in Foxglove: Open connection -> Foxglove WebSocket -> ws://localhost:8765.\n"
    "The DDS domain is CYBER_DOMAIN_ID's (as for mainboard). Stop with Ctrl-C.";

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(kUsage);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  if (argc > 1) {
    std::fprintf(stderr, "cyber_bridge: unexpected argument \"%s\"\n%s\n", argv[1], kUsage);
    return 2;
  }
  if (FLAGS_port < 0 || FLAGS_port > 65535) {
    std::fprintf(stderr, "cyber_bridge: flag --port: %d is not in 0..65535\n", FLAGS_port);
    return 2;
  }
  absl::Duration run_for;
  if (!absl::ParseDuration(FLAGS_run_for, &run_for) || run_for < absl::ZeroDuration()) {
    std::fprintf(stderr, "cyber_bridge: flag --run_for: \"%s\" is not a duration (e.g. 120s)\n",
                 FLAGS_run_for.c_str());
    return 2;
  }
  if (FLAGS_max_queued_messages < 1) {
    std::fprintf(stderr, "cyber_bridge: flag --max_queued_messages: %d is not positive\n",
                 FLAGS_max_queued_messages);
    return 2;
  }

  // SIGINT and SIGTERM are taken by sigwait below, on this thread only:
  // blocked before any thread starts, so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::StatusOr<cyber::graph::DomainGraphOptions> options =
      cyber::graph::DomainGraphOptionsFromEnvironment("cyber_bridge");
  if (!options.ok()) {
    std::fprintf(stderr, "cyber_bridge: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<cyber::graph::DomainGraph>> graph =
      cyber::graph::DomainGraph::Join(*options);
  if (!graph.ok()) {
    std::fprintf(stderr, "cyber_bridge: %s\n", std::string(graph.status().message()).c_str());
    return 1;
  }
  cyber::bridge::DomainGraphSource source(graph->get());
  cyber::bridge::FoxgloveBridge::Options bridge_options;
  bridge_options.server.address = FLAGS_address;
  bridge_options.server.port = FLAGS_port;
  bridge_options.server.max_queued_messages = FLAGS_max_queued_messages;
  absl::StatusOr<std::unique_ptr<cyber::bridge::FoxgloveBridge>> bridge =
      cyber::bridge::FoxgloveBridge::Start(&source, bridge_options);
  if (!bridge.ok()) {
    std::fprintf(stderr, "cyber_bridge: %s\n", std::string(bridge.status().message()).c_str());
    return 1;
  }
  const std::string host =
      FLAGS_address.find(':') != std::string::npos ? absl::StrCat("[", FLAGS_address, "]")
                                                   : FLAGS_address;
  std::printf("cyber_bridge: serving %s on ws://%s:%d (Foxglove WebSocket)\n",
              (*graph)->DomainDescription().c_str(), host.c_str(), (*bridge)->port());
  std::fflush(stdout);
  if ((*graph)->Channels().empty()) {
    (*graph)->WaitForDiscovery();
    if ((*graph)->Channels().empty()) {
      std::printf("cyber_bridge: no channel yet; they are advertised as they appear. %s\n",
                  (*graph)->WhyEmpty().c_str());
      std::fflush(stdout);
    }
  }

  int signal_number = 0;
  if (run_for == absl::ZeroDuration()) {
    sigwait(&stop_signals, &signal_number);
  } else {
    const timespec limit = absl::ToTimespec(run_for);
    while ((signal_number = sigtimedwait(&stop_signals, nullptr, &limit)) < 0 && errno == EINTR) {
    }
  }
  const cyber::bridge::FoxgloveBridge::Stats stats = (*bridge)->stats();
  bridge->reset();
  (*graph)->Leave();
  std::printf("cyber_bridge: stopped (%s); %llu messages forwarded, %llu dropped for slow "
              "clients\n",
              signal_number > 0 ? strsignal(signal_number) : "--run_for elapsed", static_cast<unsigned long long>(stats.forwarded),
              static_cast<unsigned long long>(stats.dropped));
  return 0;
}
