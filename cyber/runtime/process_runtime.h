// The process runtime: the one cyber::Runtime (cyber/runtime/runtime.h)
// that code outside every other runtime uses — what cyber::Async, a plain
// cyber::Timer, SleepFor, CreateTask and Node("x") run on in robot code.
// The one place it is made, started and shut down.
//
// Why one object: the process used to have three defaults (a scheduler, a
// timer system, a bus) made and torn down by three pieces of code kept in
// step by hand. Now the process runtime owns its clock (the steady clock),
// its timer system (registered as the process timer system,
// timer/default_timer_system.h) and its scheduler, and uses
// ChannelBus::Default(), so every node of the process talks to every other
// whichever run made it; its Shutdown() orders them as any runtime's does.
//
// Made from flags: --scheduler_conf (a Cyber-style scheduler conf in
// protobuf text format), or else one group described by
// --scheduler_processors (0: one per core), --scheduler_cpuset,
// --scheduler_affinity, --scheduler_policy and --scheduler_priority; and
// --routine_stack_size and --scheduler_anticipate_timers. Its transport to
// other processes (cyber/transport/dds/dds_transport.h) from Cyber RT's
// CYBER_DOMAIN_ID and CYBER_IP and --dds_profile_file; none with
// --in_process_only. A bad conf file or
// flag is reported (AERROR, naming file, line and field, or the flag) and
// the default is used instead, so the process still runs. The scheduler is
// named "default", its tick thread "timer-tick".
//
// Its life, and what ProcessRuntime() returns at each stage:
//   never started  made on first use (a program that never calls Init);
//   started        StartProcessRuntime() (cyber::Init) keeps a running one
//                  or makes a new one;
//   shut down      ShutdownProcessRuntime() (cyber::Shutdown) unregisters
//                  and closes its timer system, then shuts its scheduler
//                  down; it is kept and returned, refusing work with a
//                  clear error (an Async future holds it; CreateTask returns
//                  FailedPrecondition; a plain Timer's Schedule() fails
//                  with FailedPrecondition), until the next
//                  StartProcessRuntime(). Never an abort.
// It is shared: Nodes (and their readers) that deliver on it and cyber::
// Async calls in flight hold it (through an aliasing shared_ptr to its
// scheduler, scheduler/default_scheduler.h), so one replaced after a
// shutdown is freed when the last of them lets go, never while one may
// still use it. The holder is never destroyed: no runtime is torn down by
// static destruction at exit.
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

}  // namespace cyber

#endif  // CYBER_RUNTIME_PROCESS_RUNTIME_H_
