// The process runtime: the one cyber::Runtime (cyber/runtime/runtime.h)
// that code outside every other runtime uses — what cyber::Async, a plain
// cyber::Timer, SleepFor, CreateTask and Node("x") run on in robot code
// (rule 2 of cyber/common/runtime_scope.h, which this library registers
// itself for before main). The one place it is made, started and shut down.
//
// It owns its clock (the steady clock), its timer system, its scheduler and
// its channel bus; its Shutdown() orders them as any runtime's does.
//
// Made from flags: --scheduler_conf (a Cyber-style scheduler conf in
// protobuf text format), or else one group described by
// --scheduler_processors (0: one per core), --scheduler_cpuset,
// --scheduler_affinity, --scheduler_policy and --scheduler_priority; and
// --routine_stack_size and --scheduler_anticipate_timers. A bad conf file or
// flag is reported (AERROR, naming file, line and field, or the flag) and
// the default is used instead, so the process still runs. The scheduler is
// named "default", its tick thread "timer-tick".
//
// Its transport to other processes comes from the maker a transport
// registers (SetProcessRemoteMaker): //cyber/transport/dds:process_link,
// which //cyber/init and mainboard link, registers the DDS one. A binary
// that links no transport (a plain Timer, cyber::Async, in-process Nodes)
// keeps every channel inside the process and does not load Fast-DDS.
//
// Its life, and what ProcessRuntime() returns at each stage:
//   never started  made on first use (a program that never calls Init);
//   started        StartProcessRuntime() (cyber::Init) keeps a running one
//                  or makes a new one;
//   shut down      ShutdownProcessRuntime() (cyber::Shutdown) shuts it
//                  down (transport, timers, scheduler); it is kept and
//                  returned, refusing work with a clear error (an Async
//                  future holds it; CreateTask returns FailedPrecondition;
//                  a plain Timer's Schedule() fails with
//                  FailedPrecondition), until the next
//                  StartProcessRuntime(). Never an abort.
// It is shared: Nodes (and their readers), timers and cyber::Async calls in
// flight hold it (a RuntimeRef, or an aliasing shared_ptr to one of its
// parts), so one replaced after a shutdown is freed when the last of them
// lets go, never while one may still use it. The holder is never
// destroyed: no runtime is torn down by static destruction at exit, so a
// static Timer or Node outlives nothing it uses.
//
// Threads: thread-safe. ShutdownProcessRuntime() not from the process
// runtime's own routines or callbacks.

#ifndef CYBER_RUNTIME_PROCESS_RUNTIME_H_
#define CYBER_RUNTIME_PROCESS_RUNTIME_H_

#include <memory>

#include "cyber/runtime/runtime.h"

namespace cyber {

// The process runtime, made on first use; never null. The pointer stays
// valid while the process runs it, or while somebody holds it through
// ProcessRuntimeRef().
Runtime* ProcessRuntime();
// The same, shared. After a shutdown, the next StartProcessRuntime() drops
// the process's own reference: nothing is kept for ever.
std::shared_ptr<Runtime> ProcessRuntimeRef();
// A running process runtime: the current one, or a new one if there is none
// or it is shut down.
Runtime* StartProcessRuntime();
// Shuts the process runtime down (idempotent; nothing if none was made);
// see above.
void ShutdownProcessRuntime();

// Makes the transport of a process runtime about to be made; null keeps
// its channels in the process (e.g. --in_process_only). REQUIRES: called
// before main (a static initializer of the transport's link library), so
// every process runtime, even one made on first use, sees it.
using ProcessRemoteMaker = std::shared_ptr<RemoteTransport> (*)();
void SetProcessRemoteMaker(ProcessRemoteMaker maker);

}  // namespace cyber

#endif  // CYBER_RUNTIME_PROCESS_RUNTIME_H_
