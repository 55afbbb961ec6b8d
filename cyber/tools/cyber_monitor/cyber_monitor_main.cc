// cyber_monitor: a live view of the running graph of a DDS domain
// (CYBER_DOMAIN_ID) in the terminal, as Cyber RT's cyber_monitor — the
// channels with their rates, bandwidth and losses, the processes with
// their components and timers, a channel's latest message decoded. The
// logic is the library cyber/monitor; docs/tools/cyber_monitor.md for
// users.
//
//   cyber_monitor                 the interactive view (q quits)
//   cyber_monitor --once          one snapshot on stdout, for scripts
//
// Exit status: 0; 1 on a bad argument or when DDS cannot start; with
// --once, 2 when no process was found; 128 + N after signal N.

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/monitor/monitor_loop.h"
#include "cyber/monitor/terminal.h"

namespace {

constexpr char kUsage[] =
    "usage: cyber_monitor [--once] [--refresh=DURATION] [--window=DURATION]\n"
    "                     [--no_bandwidth] [--width=COLUMNS] [--log=FILE]\n"
    "\n"
    "A live view of the running graph of the DDS domain CYBER_DOMAIN_ID:\n"
    "channels (rate, bandwidth, writers/readers, losses), processes (their\n"
    "components and timers), and a channel's latest message decoded.\n"
    "\n"
    "keys:  Up/Down (or k/j) select or scroll   PageUp/PageDown/Home/End\n"
    "       Enter (or Right) the selected channel's latest message\n"
    "       Esc (or Left) back   Tab channels <-> processes   q quit\n"
    "\n"
    "options:\n"
    "  --once, --batch     print one snapshot to stdout and exit (waits until\n"
    "                      the rates are known, at most --window)\n"
    "  --refresh=1s        how often the figures are taken and redrawn\n"
    "  --window=5s         --once: the longest wait for the rates\n"
    "  --no_bandwidth      do not subscribe to the channels (no bandwidth\n"
    "                      column; the rates come from the processes' status)\n"
    "  --width=120         --once: the width of the table\n"
    "  --log=FILE          the interactive view: write the program's log\n"
    "                      (DDS messages) to FILE (default: discarded, as\n"
    "                      it would scribble over the screen)\n"
    "\n"
    "environment: CYBER_DOMAIN_ID (the domain), CYBER_IP, CYBER_DISCOVERY_SERVER\n"
    "docs: docs/tools/cyber_monitor.md\n";

bool ParseDurationFlag(const std::string& arg, const std::string& name, absl::Duration* out,
                       bool* bad) {
  const std::string prefix = "--" + name + "=";
  if (!absl::StartsWith(arg, prefix)) return false;
  const std::string value = arg.substr(prefix.size());
  if (!absl::ParseDuration(value, out) || *out <= absl::ZeroDuration()) {
    std::cerr << "cyber_monitor: --" << name << ": \"" << value
              << "\" is not a positive duration (e.g. 500ms, 2s)\n";
    *bad = true;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  cyber::monitor::MonitorOptions options;
  bool once = false;
  absl::Duration window = absl::Seconds(5);
  int width = 120;
  std::string log_file = "/dev/null";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    bool bad = false;
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--once" || arg == "--batch") {
      once = true;
    } else if (arg == "--no_bandwidth") {
      options.bandwidth = false;
    } else if (ParseDurationFlag(arg, "refresh", &options.refresh, &bad) ||
               ParseDurationFlag(arg, "window", &window, &bad)) {
      if (bad) return 1;
    } else if (absl::StartsWith(arg, "--log=")) {
      log_file = arg.substr(6);
    } else if (absl::StartsWith(arg, "--width=")) {
      if (!absl::SimpleAtoi(arg.substr(8), &width) || width < 40) {
        std::cerr << "cyber_monitor: --width: \"" << arg.substr(8)
                  << "\" is not a number of columns >= 40\n";
        return 1;
      }
    } else {
      std::cerr << "cyber_monitor: unknown argument \"" << arg << "\"\n\n" << kUsage;
      return 1;
    }
  }

  absl::StatusOr<cyber::graph::DomainGraphOptions> graph_options =
      cyber::graph::DomainGraphOptionsFromEnvironment("cyber_monitor");
  if (!graph_options.ok()) {
    std::cerr << "cyber_monitor: " << graph_options.status().message() << "\n";
    return 1;
  }
  // The terminal is checked before the domain is joined: no DDS
  // participant for a run that cannot show anything.
  std::unique_ptr<cyber::monitor::Terminal> terminal;
  // While the view is up, the log (glog, on stderr) goes to --log: a line
  // written to the terminal would scribble over the screen.
  int saved_stderr = -1;
  if (!once) {
    const int log_fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      std::cerr << "cyber_monitor: --log: cannot open \"" << log_file << "\"\n";
      return 1;
    }
    absl::StatusOr<std::unique_ptr<cyber::monitor::Terminal>> t =
        cyber::monitor::Terminal::Open(STDIN_FILENO, STDOUT_FILENO);
    if (!t.ok()) {
      close(log_fd);
      std::cerr << t.status().message() << "\n";
      return 1;
    }
    terminal = std::move(*t);
    saved_stderr = dup(STDERR_FILENO);
    dup2(log_fd, STDERR_FILENO);
    close(log_fd);
  }
  auto restore_stderr = [&saved_stderr] {
    if (saved_stderr < 0) return;
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    saved_stderr = -1;
  };
  absl::StatusOr<std::unique_ptr<cyber::graph::DomainGraph>> graph =
      cyber::graph::DomainGraph::Join(*std::move(graph_options));
  if (!graph.ok()) {
    if (terminal) terminal->Close();
    restore_stderr();
    std::cerr << "cyber_monitor: " << graph.status().message() << "\n";
    return 1;
  }
  if (once) {
    bool empty = false;
    std::cout << cyber::monitor::RunOnce(**graph, options, window, width, &empty) << std::flush;
    return empty ? 2 : 0;
  }
  const int status = cyber::monitor::RunInteractive(**graph, *terminal, options);
  terminal->Close();
  (*graph)->Leave();
  restore_stderr();
  return status;
}
