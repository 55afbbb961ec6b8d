#include "cyber/inspect/tool_main.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>

#include "cyber/common/log.h"

namespace cyber {
namespace inspect {
namespace {

// How long a tool that found no process at all waits for a first one.
constexpr absl::Duration kLateDiscovery = absl::Milliseconds(700);

volatile std::sig_atomic_t g_stop = 0;

void OnSigint(int) { g_stop = 1; }

void CatchSigintOnce() {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnSigint;
  action.sa_flags = SA_RESETHAND;  // a second SIGINT ends the process
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
}

}  // namespace

int RunTool(const ToolSpec& spec, int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::cout << spec.usage;
      return 0;
    }
  }
  absl::StatusOr<ToolRun> run = spec.parse(args);
  if (!run.ok()) {
    std::cerr << spec.name << ": " << run.status().message() << "\n\n" << spec.usage;
    return 2;
  }
  // The tools print what they find; the transport's INFO lines (joined,
  // left) would bury it. GLOG_minloglevel=0 shows them again.
  if (std::getenv("GLOG_minloglevel") == nullptr) FLAGS_minloglevel = google::GLOG_WARNING;
  absl::StatusOr<graph::DomainGraphOptions> options =
      graph::DomainGraphOptionsFromEnvironment(spec.name);
  if (!options.ok()) {
    std::cerr << spec.name << ": " << options.status().message() << "\n";
    return 1;
  }
  // From here a Ctrl-C stops the command and the tool leaves the domain
  // cleanly (Fast-DDS removes its shared-memory files only then).
  CatchSigintOnce();
  const absl::Duration period = options->transport.lease / 3 + absl::Milliseconds(300);
  absl::StatusOr<std::unique_ptr<graph::DomainGraph>> graph =
      graph::DomainGraph::Join(*std::move(options));
  if (!graph.ok()) {
    std::cerr << spec.name << ": " << graph.status().message() << "\n";
    return 1;
  }
  // Fast-DDS answers a new participant's first announcement at once, best
  // effort; when that answer is lost (seen under ubsan on a loaded machine:
  // one process of three unseen for the tool's whole 400 ms), the process
  // is seen at its next periodic announcement, lease / 3 later. So the
  // tools look for at least that long.
  (*graph)->WaitForDiscovery(absl::Milliseconds(300), period + absl::Seconds(1), period);
  // Nobody yet: on a loaded machine the first announcement can come after
  // the settle time; give it the rest of the second, then let it settle.
  if ((*graph)->Processes().empty() &&
      (*graph)->WaitUntil([](const graph::DomainGraph& g) { return !g.Processes().empty(); },
                          kLateDiscovery)) {
    (*graph)->WaitForDiscovery();
  }
  // A process whose graph writer DDS has matched but whose graph has not
  // come yet (a loaded machine) is waited for a while longer, so a list is
  // not short of it (WaitForDiscovery waits for exactly those; no settling
  // again).
  (*graph)->WaitForDiscovery(absl::ZeroDuration(), kLateDiscovery);
  if (g_stop != 0) {
    (*graph)->Leave();
    return 130;  // stopped before anything ran, as a shell counts SIGINT
  }
  const absl::Status status = (*run)(**graph, std::cout, [] { return g_stop != 0; });
  std::cout.flush();
  (*graph)->Leave();
  if (!status.ok()) {
    std::cerr << spec.name << ": " << status.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace inspect
}  // namespace cyber
