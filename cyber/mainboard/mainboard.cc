// mainboard: launches the components of one or more graph (.dag) files and
// runs them until SIGINT/SIGTERM (or --run_for).
//
//   mainboard -d examples/sensor_polling/sensor_polling.dag [-d other.dag]
//             [--run_for=10s] [--status=auto|always|never] [gflags...]
//   mainboard -d graph.dag --clock=simulated --run_for=60s
//
// --clock=simulated runs the graphs on simulated time (a SimulatedGraph,
// cyber/simulation) as fast as the CPU allows, then prints the same summary
// and the wall time it took; the run is the same every time.
//
// Every graph is loaded and checked, and every class resolved, before
// anything starts; a bad graph exits with status 1 and a message naming the
// file, line and field, printed once as a plain `mainboard: ...` line on
// stderr (no glog preamble; bad flags likewise, status 2). --strict_graph
// makes the graph warnings (a channel read and never written, or written and
// never read without unread_outputs) such an error too: exit 1, every
// warning listed (cyber/mainboard/launcher.h, "Strict mode").
//
// While running, a one-line live status (per component: achieved vs
// configured rate, lateness p99, overruns; per channel that crosses
// processes: remote readers and writers, sent, received, dropped, latency
// p99) is refreshed every second when stdout is a terminal. On shutdown the
// components are stopped (each synchronously) and a summary table of their
// final statistics printed, then the channel table (per channel: local and
// remote readers and writers with host and pid, messages sent, received
// and dropped, latency p99), followed by the graph warnings of the start
// (channels written and never read, or read and never written).
//
// Between processes: protobuf channels reach the other mainboards of the
// DDS domain (CYBER_DOMAIN_ID; shared memory and loopback only unless
// CYBER_IP names an interface; docs/transport.md). --in_process_only keeps
// every channel inside this process.
//
// The shutdown is bounded: --shutdown_deadline (default 5s, steady clock)
// counts from the moment it begins (--run_for elapsed, or a signal). If
// stopping the components and cyber::Shutdown() have not finished by then
// (a Clear() that stops a timer while holding a lock the timer's callback
// needs), mainboard prints on stderr what it waits for, prints the summary
// of what it knows on stdout, and exits with status 3 at once (_exit: the
// stuck threads are never joined):
//
//   mainboard: shutdown did not finish within 5s (--shutdown_deadline): stuck stopping the components
//   mainboard: components not stopped: "planner" (Shutdown() in progress), "lidar"
//   mainboard: timer stops in progress:
//   mainboard:   timer "planner_timeout": Stop() waiting 5.001s for its running callback; caller: thread 4242 "mainboard", in component "planner" Shutdown()
//   mainboard: exiting with status 3 (the shutdown did not finish)
//
// With --clock=simulated the same bound holds for the whole run: a graph
// that makes no progress for --shutdown_deadline of wall time prints the
// same report (lines prefixed `simulated graph "sim": `, see
// cyber/simulation/simulated_graph.h) and aborts (status 134).
//
// ("stuck in cyber::Shutdown()" once every component stopped; the timer
// warnings of --timer_stop_warn_after come before it, timer/timer.h.)
// --run_for and the deadline are kept by a thread of their own
// (shutdown_deadline.h), so they hold even when every processor is blocked.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cyber/common/log.h"
#include "cyber/init/init.h"
#include "cyber/lockstep/lockstep_process.h"
#include "cyber/mainboard/launcher.h"
#include "cyber/mainboard/process_status.h"
#include "cyber/mainboard/shutdown_deadline.h"
#include "cyber/mainboard/stuck_report.h"
#include "cyber/runtime/process_runtime.h"
#include "cyber/transport/channel_report.h"
#include "cyber/transport/dds/dds_transport.h"
#include "absl/strings/str_split.h"
#include "cyber/transport/service_report.h"
#include "cyber/simulation/simulated_graph.h"
#include "gflags/gflags.h"
#include "timer/timer.h"
#include "timer/timer_stop_registry.h"

DEFINE_string(run_for, "0s",
              "stop after this long (a duration, e.g. 10s); 0s: until Ctrl-C");
DEFINE_string(clock, "steady",
              "steady: run on real time until Ctrl-C or --run_for; simulated: run "
              "the graphs on simulated time, as fast as possible, for --run_for");
DEFINE_string(shutdown_deadline, "5s",
              "if the shutdown (stopping the components, then the runtime) has not "
              "finished this long after it began, print what it waits for and the "
              "summary, and exit with status 3 (a duration; inf: wait for ever)");
DEFINE_string(status, "auto",
              "live status line: auto (when stdout is a terminal), always, never");
DEFINE_bool(lockstep, false,
            "with --clock=simulated: share one simulated time with the other processes of "
            "the DDS domain (CYBER_DOMAIN_ID), granted by a lockstep coordinator "
            "(cyber/lockstep); the run lasts as long as the coordinator says");
DEFINE_string(recording, "",
              "with --clock=simulated: an MCAP recording (cyber_recorder's) whose "
              "--recording_channels are fed into the graphs, each message at its "
              "recorded instant (docs/graph_testing.md, Replay into a graph test)");
DEFINE_string(recording_channels, "",
              "with --recording: the channels to feed, comma-separated");
DECLARE_string(process_name);
DEFINE_bool(strict_graph, false,
            "graph warnings are errors: a channel read but never written, or "
            "written but never read (and not in the writer's unread_outputs), "
            "stops the start with exit status 1");

namespace {

constexpr char kUsage[] =
    "usage: mainboard -d graph.dag [-d graph.dag ...] [--run_for=10s] "
    "[--clock=steady|simulated [--lockstep | --recording=F.mcap --recording_channels=A,B]] "
    "[--status=auto|always|never] [--strict_graph] [--shutdown_deadline=5s]";

// Takes every "-d X" / "--dag_conf X" / "--dag_conf=X" out of argv.
std::vector<std::string> TakeDagArguments(int* argc, char** argv) {
  std::vector<std::string> dags;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const char* a = argv[i];
    if ((std::strcmp(a, "-d") == 0 || std::strcmp(a, "--dag_conf") == 0) &&
        i + 1 < *argc) {
      dags.push_back(argv[++i]);
    } else if (std::strncmp(a, "--dag_conf=", 11) == 0) {
      dags.push_back(a + 11);
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return dags;
}

// The summary table, the channel table (when given), then the graph
// mistakes logged at start, repeated where they are seen.
void PrintSummary(const std::vector<cyber::ComponentStats>& stats,
                  const std::vector<std::string>& warnings,
                  const std::string& channels = "", const std::string& services = "") {
  std::printf("%s", cyber::Launcher::SummaryTable(stats).c_str());
  if (!channels.empty()) std::printf("\n%s", channels.c_str());
  if (!services.empty()) std::printf("\n%s", services.c_str());
  if (!warnings.empty()) {
    std::printf("warnings:\n");
    for (const std::string& w : warnings) std::printf("  %s\n", w.c_str());
  }
  std::fflush(stdout);
}

// The channel table of the process runtime: its bus's channels as
// `topology` saw them (taken while the components ran: a stopped node
// neither reads nor writes), and what crossed to other processes when it
// has a transport.
std::string ChannelSummary(const std::vector<cyber::ChannelTopology>& topology) {
  std::vector<cyber::RemoteChannelStats> remote;
  std::string lost;
  if (const cyber::RemoteTransport* t = cyber::ProcessRuntime()->remote()) {
    remote = t->ChannelStats();
    lost = cyber::LostPeersLine(t->LostPeers());
  }
  std::string table = cyber::ChannelTable(topology, remote);
  if (!lost.empty()) absl::StrAppend(&table, lost, "\n");
  return table;
}

// --shutdown_deadline passed: what is stuck (stderr), the summary of what is
// known (stdout), exit status 3 without waiting for the stuck threads.
[[noreturn]] void ExitStuck(const cyber::Launcher& launcher, absl::Duration deadline,
                            bool components_stopped, bool live) {
  if (live) std::printf("\n");
  std::fflush(stdout);
  const cyber::Launcher::StopProgress progress = launcher.StopInProgress();
  std::fprintf(stderr, "mainboard: shutdown did not finish within %s (--shutdown_deadline): %s\n%s",
               absl::FormatDuration(deadline).c_str(),
               components_stopped ? "stuck in cyber::Shutdown()" : "stuck stopping the components",
               cyber::StuckReport(progress, cyber::timer::StopsInProgress(), "mainboard: ").c_str());
  std::fflush(stderr);
  std::vector<cyber::ComponentStats> stats = progress.stats;
  if (stats.empty()) stats = launcher.FinalStats();
  if (stats.empty()) stats = launcher.Stats();
  PrintSummary(stats, launcher.ChannelWarnings());
  std::fprintf(stderr, "mainboard: exiting with status 3 (the shutdown did not finish)\n");
  std::fflush(stderr);
  _exit(3);
}

// --clock=simulated: the graphs on their own simulated clock, as fast as
// the CPU allows, for `run_for` of simulated time. No cyber::Init(): the
// graph brings its own scheduler and timer system.
// A graph that stops making progress (a deadlock: simulated time cannot
// move) is reported as on the real clock after --shutdown_deadline of wall
// time, and the process aborts (exit status 134).
int RunSimulated(const std::vector<std::string>& dags, absl::Duration run_for,
                 absl::Duration shutdown_deadline) {
  cyber::SimulatedGraph graph([&] {
    cyber::SimulatedGraph::Options o;
    o.stuck_after = shutdown_deadline;
    o.recording.path = FLAGS_recording;
    for (absl::string_view c : absl::StrSplit(FLAGS_recording_channels, ',', absl::SkipEmpty())) {
      o.recording.channels.emplace_back(c);
    }
    return o;
  }());
  graph.launcher().set_strict(FLAGS_strict_graph);
  const absl::Status s = graph.Launch(dags);
  if (!s.ok()) {
    std::fprintf(stderr, "mainboard: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  // Said at once: a process on a simulated clock of its own cannot share
  // the DDS domain (its instants mean nothing to the others), and a reader
  // waiting for another process's messages would otherwise get none
  // without a word.
  std::fprintf(stderr,
               "mainboard: --clock=simulated: this process runs on a simulated clock of its own and "
               "stays off the DDS domain (no message to or from other processes); to share "
               "simulated time with other processes add --lockstep (docs/lockstep.md)\n");
  const auto wall_start = std::chrono::steady_clock::now();
  graph.RunFor(run_for);
  const absl::Duration wall =
      absl::FromChrono(std::chrono::steady_clock::now() - wall_start);
  // Taken at the end of the simulated run, before the stop (which is not
  // part of the deterministic run): every call that ended by then, the same
  // every run.
  const std::vector<cyber::ComponentStats> stats = graph.Stats();
  const std::string digest = graph.TraceDigest();
  graph.Stop();
  PrintSummary(stats, graph.launcher().ChannelWarnings(), "",
               cyber::ServiceTable(graph.launcher().FinalServices()));
  std::printf("trace digest: %s\n", digest.c_str());
  std::printf("simulated %s in %s of wall time (%.0fx real time)\n",
              absl::FormatDuration(run_for).c_str(), absl::FormatDuration(wall).c_str(),
              wall > absl::ZeroDuration() ? run_for / wall : 0.0);
  std::fflush(stdout);
  return 0;
}

// --clock=simulated --lockstep: the graphs on a simulated time shared with
// the other processes of the run. A lockstep coordinator grants each
// instant; the graph runs to it, then the process reports (cyber/lockstep).
// Messages to and from other processes cross DDS stamped with their
// instant and are delivered at it. Exit status 0 when the run reached its
// end, 1 when it failed (the coordinator's reason is printed).
int RunLockstep(const std::vector<std::string>& dags, absl::Duration shutdown_deadline) {
  const std::string name = FLAGS_process_name.empty() ? program_invocation_short_name : FLAGS_process_name;
  absl::StatusOr<cyber::dds::DdsTransportOptions> dds = cyber::dds::DdsTransportOptionsFromEnvironment(name);
  if (!dds.ok()) {
    std::fprintf(stderr, "mainboard: --lockstep: %s\n", std::string(dds.status().message()).c_str());
    return 2;
  }
  cyber::dds::SetFewerWakeups(&*dds);  // every message is on the step's path
  auto real = std::make_shared<cyber::dds::DdsTransport>(*dds);
  cyber::SimulatedGraph::Options o;
  o.stuck_after = shutdown_deadline;
  o.name = name;
  const cyber::Instant start = o.start;
  std::atomic<cyber::SimulatedGraph*> graph_ptr{nullptr};
  // The instant a message is stamped with: ns since the run's start.
  cyber::lockstep::LockstepProcess lockstep(real, [&graph_ptr, start] {
    cyber::SimulatedGraph* g = graph_ptr.load();
    return g == nullptr ? int64_t{0} : absl::ToInt64Nanoseconds(g->Now() - start);
  });
  o.remote = lockstep.transport();
  cyber::SimulatedGraph graph(o);
  graph_ptr.store(&graph);
  graph.launcher().set_strict(FLAGS_strict_graph);
  if (absl::Status s = graph.Launch(dags); !s.ok()) {
    std::fprintf(stderr, "mainboard: %s\n", std::string(s.message()).c_str());
    real->Shutdown();
    return 1;
  }
  cyber::lockstep::SimulationHooks hooks;
  hooks.run_until = [&graph, start](int64_t t) { graph.RunUntil(start + absl::Nanoseconds(t)); };
  hooks.next_event_ns = [&graph, start] {
    const cyber::Instant next = graph.NextPlanned();
    if (next == cyber::Instant::InfiniteFuture()) return int64_t{-1};
    return absl::ToInt64Nanoseconds(next - start);
  };
  cyber::lockstep::MemberOptions member;
  member.process = name;
  member.host = real->self().host;
  member.pid = getpid();
  const auto wall_start = std::chrono::steady_clock::now();
  if (absl::Status s = lockstep.Join(member, hooks); !s.ok()) {
    std::fprintf(stderr, "mainboard: --lockstep: %s\n", std::string(s.message()).c_str());
    real->Shutdown();
    return 1;
  }
  std::printf("mainboard: %s joins the lockstep run on domain %u\n", name.c_str(), dds->domain_id);
  std::fflush(stdout);
  const std::string why = lockstep.WaitForStop();
  const bool failed = lockstep.failed();
  const absl::Duration simulated = graph.Now() - start;
  const absl::Duration wall = absl::FromChrono(std::chrono::steady_clock::now() - wall_start);
  const std::vector<cyber::ComponentStats> stats = graph.Stats();
  const std::string digest = graph.TraceDigest();
  uint64_t delivered = 0;
  const std::string deliveries = lockstep.transport()->DeliveryDigest(&delivered);
  graph.Stop();
  PrintSummary(stats, graph.launcher().ChannelWarnings(), "",
               cyber::ServiceTable(graph.launcher().FinalServices()));
  std::printf("lockstep: %s\n", why.c_str());
  std::printf("simulated %s in %s of wall time, %llu steps\n", absl::FormatDuration(simulated).c_str(),
              absl::FormatDuration(wall).c_str(), static_cast<unsigned long long>(lockstep.steps()));
  std::printf("trace digest: %s\n", digest.c_str());
  std::printf("delivery digest: %s (%llu messages from other processes)\n", deliveries.c_str(),
              static_cast<unsigned long long>(delivered));
  std::fflush(stdout);
  real->Shutdown();
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> dags = TakeDagArguments(&argc, argv);
  gflags::SetUsageMessage(kUsage);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  // Before anything logs (the graph checks may warn): glog set up as
  // cyber::Init does, so no "Logging before InitGoogleLogging()" line.
  cyber::InitLogging(argv[0]);
  absl::Duration run_for;
  if (!absl::ParseDuration(FLAGS_run_for, &run_for) || run_for < absl::ZeroDuration()) {
    std::fprintf(stderr, "mainboard: flag --run_for: \"%s\" is not a duration\n",
                 FLAGS_run_for.c_str());
    return 2;
  }
  absl::Duration shutdown_deadline;
  if (!absl::ParseDuration(FLAGS_shutdown_deadline, &shutdown_deadline) ||
      shutdown_deadline <= absl::ZeroDuration()) {
    std::fprintf(stderr,
                 "mainboard: flag --shutdown_deadline: \"%s\" is not a positive duration "
                 "(e.g. 5s; inf: no deadline)\n",
                 FLAGS_shutdown_deadline.c_str());
    return 2;
  }
  if (FLAGS_status != "auto" && FLAGS_status != "always" && FLAGS_status != "never") {
    std::fprintf(stderr, "mainboard: flag --status: \"%s\" is not auto, always or never\n",
                 FLAGS_status.c_str());
    return 2;
  }
  if (dags.empty()) {
    std::fprintf(stderr, "mainboard: no graph file given\n%s\n", kUsage);
    return 2;
  }
  if (FLAGS_clock != "steady" && FLAGS_clock != "simulated") {
    std::fprintf(stderr, "mainboard: flag --clock: \"%s\" is not steady or simulated\n",
                 FLAGS_clock.c_str());
    return 2;
  }
  if (FLAGS_lockstep && FLAGS_clock != "simulated") {
    std::fprintf(stderr, "mainboard: flag --lockstep needs --clock=simulated (a process on the real "
                         "clock cannot share a simulated time)\n");
    return 2;
  }
  if (!FLAGS_recording.empty() && (FLAGS_clock != "simulated" || FLAGS_lockstep)) {
    std::fprintf(stderr, "mainboard: flag --recording needs --clock=simulated without --lockstep "
                         "(on the real clock, play it with `cyber_recorder play`)\n");
    return 2;
  }
  if (FLAGS_recording.empty() != FLAGS_recording_channels.empty()) {
    std::fprintf(stderr, "mainboard: flags --recording and --recording_channels go together "
                         "(--recording=\"%s\", --recording_channels=\"%s\")\n",
                 FLAGS_recording.c_str(), FLAGS_recording_channels.c_str());
    return 2;
  }
  if (FLAGS_lockstep) return RunLockstep(dags, shutdown_deadline);
  if (FLAGS_clock == "simulated") {
    if (run_for == absl::ZeroDuration()) {
      std::fprintf(stderr,
                   "mainboard: flag --clock=simulated needs --run_for (simulated time "
                   "to run, e.g. --run_for=60s)\n");
      return 2;
    }
    return RunSimulated(dags, run_for, shutdown_deadline);
  }

  // Everything is checked before anything starts.
  cyber::Launcher launcher;
  launcher.set_strict(FLAGS_strict_graph);
  absl::Status s = launcher.Load(dags);
  if (!s.ok()) {
    std::fprintf(stderr, "mainboard: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  {
    // What cyber::Init's announcer tells the tools besides the channels
    // (cyber/graph): at once, the components (even those with no channel),
    // the dag files, and every second the components' statistics.
    cyber::graph::RuntimeAnnounceOptions o;
    o.dag_files = dags;
    o.extra_nodes = [&launcher] {
      std::vector<std::string> names;
      for (const cyber::ComponentStats& c : launcher.Stats()) names.push_back(c.name);
      return names;
    };
    o.status = [&launcher] {
      const cyber::RemoteTransport* remote = cyber::ProcessRuntime()->remote();
      return cyber::ProcessStatusOf(
          launcher.Stats(),
          remote != nullptr ? remote->ChannelStats() : std::vector<cyber::RemoteChannelStats>());
    };
    cyber::SetAnnounceOptions(std::move(o));
  }
  if (!cyber::Init(argv[0])) return 1;
  s = launcher.Start();
  if (!s.ok()) {
    std::fprintf(stderr, "mainboard: %s\n", std::string(s.message()).c_str());
    cyber::Shutdown();
    return 1;
  }

  const bool live = FLAGS_status == "always" ||
                    (FLAGS_status == "auto" && isatty(STDOUT_FILENO) == 1);
  // Bounded runs end the same way as Ctrl-C; either way the shutdown has
  // --shutdown_deadline to finish.
  std::atomic<bool> components_stopped{false};
  cyber::ShutdownDeadline bound({run_for, shutdown_deadline, [&] {
                                   ExitStuck(launcher, shutdown_deadline,
                                             components_stopped.load(), live);
                                 }});
  std::unique_ptr<cyber::Timer> status_timer;
  if (live) {
    cyber::TimerOptions o;
    o.name = "mainboard_status";
    o.period = absl::Seconds(1);
    o.callback = [&launcher] {
      std::string line = cyber::Launcher::StatusLine(launcher.Stats());
      if (const cyber::RemoteTransport* remote = cyber::ProcessRuntime()->remote()) {
        const std::string channels = cyber::ChannelStatusLine(remote->ChannelStats());
        if (!channels.empty()) line += " || " + channels;
        const std::string lost = cyber::LostPeersLine(remote->LostPeers());
        if (!lost.empty()) line += " || " + lost;
      }
      std::printf("\r\033[K%s", line.c_str());
      std::fflush(stdout);
    };
    status_timer = std::make_unique<cyber::Timer>(o);
    status_timer->Schedule().IgnoreError();  // a status line is best effort
  }

  cyber::WaitForShutdown();
  bound.ShutdownBegins();
  if (status_timer) status_timer->Stop();
  const std::vector<cyber::ChannelTopology> topology =
      cyber::ProcessRuntime()->bus()->Topology();
  // The announcement reads the launcher: it stops first.
  cyber::StopAnnouncing();
  launcher.Stop();
  components_stopped = true;
  // Taken after every component stopped: each call it made is counted.
  const std::vector<cyber::ComponentStats> stats = launcher.FinalStats();
  const std::string services = cyber::ServiceTable(launcher.FinalServices());
  // Before the transport leaves the domain: its peers are still listed.
  const std::string channels = ChannelSummary(topology);
  cyber::Shutdown();
  bound.ShutdownFinished();
  if (live) std::printf("\n");
  PrintSummary(stats, launcher.ChannelWarnings(), channels, services);
  return 0;
}
