// Process start-up and shutdown: cyber::Init(argv[0]), cyber::OK(),
// cyber::Shutdown(), cyber::WaitForShutdown().
//
// Why: robot binaries are written as
//
//   int main(int argc, char** argv) {
//     gflags::ParseCommandLineFlags(&argc, &argv, true);
//     if (!cyber::Init(argv[0])) return 1;
//     ... create components / timers ...
//     cyber::WaitForShutdown();   // until Ctrl-C, SIGTERM or Shutdown()
//     cyber::Shutdown();
//   }
//
// Init() sets up glog under the binary's name (InitLogging below: the
// binary's logs stay on stderr unless its user asked for files) and turns
// SIGINT/SIGTERM into a request to stop: OK() becomes false and WaitForShutdown() returns. A second
// SIGINT/SIGTERM while shutting down kills the process the default way, so a
// hung shutdown can always be interrupted. Init() also starts the process
// runtime (cyber/runtime/process_runtime.h: one clock, timer system,
// scheduler and bus, wired together; kept if first use made it already, a
// new one after a Shutdown()); Shutdown() shuts it down, timers first, then
// the scheduler.
//
// Every function is thread-safe and idempotent: Init() twice is one Init(),
// Shutdown() twice is one Shutdown(). Init() after Shutdown() starts a new
// run (tests rely on it). Never call these from a signal handler.

#ifndef CYBER_INIT_INIT_H_
#define CYBER_INIT_INIT_H_

#include <ostream>

#include "cyber/graph/runtime_announcer.h"

namespace cyber {

enum class State {
  kUninitialized,  // before Init()
  kInitialized,    // running: OK() is true
  kShuttingDown,   // a signal or Shutdown() asked to stop
  kShutDown,       // Shutdown() finished
};

std::ostream& operator<<(std::ostream& os, State state);

// Initializes the process. Returns false (and logs why) on bad input: a null
// or empty binary name. Returns true if already initialized.
bool Init(const char* binary_name);

// The logging part of Init() alone, for a binary that logs before Init()
// (mainboard checks its graphs first). Sets up glog under `binary_name`
// (unless it is already) and decides where logs go:
//   - on stderr (glog's logtostderr), as a robot developer running a binary
//     by hand expects, and as before Init();
//   - unless the user chose a destination: any of --logtostderr,
//     --alsologtostderr, --log_dir, --stderrthreshold given (command line,
//     flag file, or set in code before this call), or its GLOG_ environment
//     variable set (Cyber RT's setup exports GLOG_log_dir and
//     GLOG_alsologtostderr). Then glog's own rules apply (files in log_dir,
//     else in /tmp; what reaches stderr by stderrthreshold).
// Other glog settings (GLOG_minloglevel, GLOG_v, colors) are untouched.
// Returns false (and logs why) for a null or empty name. Idempotent; the
// destination is decided again at each call.
bool InitLogging(const char* binary_name);

// Stops what Init() started and restores the signal handlers that were in
// place before Init(). Safe before Init() and when called again.
void Shutdown();

// Init() also announces the process to its DDS domain (cyber/graph: its
// nodes, channels, services and their message descriptors), so that
// cyber_channel, cyber_node, cyber_service, cyber_monitor, cyber_launch and
// cyber_bridge see it. By default it waits for the process's own first
// channel to other processes, so a program that never uses one starts
// nothing of DDS; --in_process_only programs are never seen.
// SetAnnounceOptions() sets what the next Init() announces besides
// (mainboard: its components' statistics every second, its dag files, and
// at once, before any channel).
void SetAnnounceOptions(graph::RuntimeAnnounceOptions options);
// Stops announcing; Shutdown() does it first. mainboard calls it before it
// stops the components whose statistics the announcement reads.
void StopAnnouncing();

// True while initialized and no shutdown was requested.
bool OK();
// True once a shutdown was requested (by signal or Shutdown()).
bool IsShutdown();
State GetState();

// Requests a shutdown the way SIGINT does (OK() turns false,
// WaitForShutdown() returns) without stopping anything itself; the thread in
// WaitForShutdown() then calls Shutdown(). Safe from timer callbacks, where
// Shutdown() itself must not be called (it stops the threads that run them).
void AsyncShutdown();

// Blocks until a shutdown is requested; returns at once if it already was or
// if Init() was never called. No busy-waiting.
void WaitForShutdown();

}  // namespace cyber

#endif  // CYBER_INIT_INIT_H_
