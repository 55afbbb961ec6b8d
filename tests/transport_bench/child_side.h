// What every child process of the benchmark and the soak sets up before it
// plays its role: where libraries log, and how it is asked to stop.
//
// Why: a child's stdout is its line protocol with the orchestrator
// (line_channel.h), so Fast-DDS's log (which writes to stdout by default)
// goes to stderr; our own log (glog, stderr) is raised to WARNING, since
// every participant's joining and leaving at INFO would bury the
// orchestrator's progress lines. A child stops cleanly — so that
// its DDS participant removes its shared memory — when its stdin closes or
// when it gets SIGTERM or SIGHUP (SIGINT is the orchestrator's, see
// child_process.h); SIGPIPE is ignored, so a report to an orchestrator that
// died fails instead of killing the child.
//
// Threads: PrepareChild() first thing in main(); StopRequested() from any
// thread.

#ifndef TESTS_TRANSPORT_BENCH_CHILD_SIDE_H_
#define TESTS_TRANSPORT_BENCH_CHILD_SIDE_H_

namespace cyber {
namespace transport_bench {

void PrepareChild();
// SIGTERM or SIGHUP arrived.
bool StopRequested();

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_CHILD_SIDE_H_
